"""Modal screens: start-up problems, review dialogs, the end of a session, quitting."""

from tui_engineer.tui.screens.dialog import Dialog
from tui_engineer.tui.screens.finish import ConfirmUndoScreen, StillWrongScreen, VerdictScreen
from tui_engineer.tui.screens.quit import QuitScreen
from tui_engineer.tui.screens.review import EditPlanScreen, RejectReasonScreen
from tui_engineer.tui.screens.startup import (
    DirtyTreeScreen,
    InitRepoScreen,
    NoTestsScreen,
    ProblemScreen,
    TakeOverScreen,
)

__all__ = [
    "ConfirmUndoScreen",
    "Dialog",
    "DirtyTreeScreen",
    "EditPlanScreen",
    "InitRepoScreen",
    "NoTestsScreen",
    "ProblemScreen",
    "QuitScreen",
    "RejectReasonScreen",
    "StillWrongScreen",
    "TakeOverScreen",
    "VerdictScreen",
]
