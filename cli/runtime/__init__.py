"""How a command runs: exit codes, usage errors, Ctrl-C, progress lines on stderr."""
