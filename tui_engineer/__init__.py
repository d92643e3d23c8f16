"""tui-engineer: a pair-programmer that lives in the terminal."""

__version__ = "0.1.0"
