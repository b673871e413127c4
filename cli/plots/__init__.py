"""The figures the commands write (matplotlib, imported only when a figure is drawn)."""
