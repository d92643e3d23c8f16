"""`tui-engineer bench`: run suites of tasks through the headless engine and score the results."""
