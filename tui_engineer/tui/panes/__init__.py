"""Reusable panes the app composes: the repo tree, the diff viewer and the test output."""

from tui_engineer.tui.panes.diff_view import DiffView
from tui_engineer.tui.panes.file_tree import RepoTree
from tui_engineer.tui.panes.test_output import TestOutputPane

__all__ = ["DiffView", "RepoTree", "TestOutputPane"]
