"""`tui-engineer run`: the engine without the TUI, for scripts, CI and benchmarks."""
