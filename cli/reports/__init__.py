"""What the commands write as results: self-contained HTML reports, text tables, JSON."""
