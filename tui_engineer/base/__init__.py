"""The base of the package: what every layer may use (errors, names, safe git, shell
command words, the sample mark, crash reports). It imports nothing of tui_engineer above it."""
