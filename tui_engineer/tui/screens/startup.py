"""Start-up states, each a screen instead of a traceback: not a repo, a dirty tree, and the
problems the user fixes outside (config, API key, server) with what to set and the URL tried."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from textual.binding import Binding

from tui_engineer.tui.screens.dialog import Dialog

if TYPE_CHECKING:  # the vcs package loads GitPython: not before the first frame
    pass


class InitRepoScreen(Dialog[bool]):
    """Offer `git init` in a folder that is not a repository. Result: True to create one."""

    title_text = "Not a git repository"
    buttons = [("init", "Create a repository here", "primary"), ("quit", "Quit", "default")]
    cancel_value = False

    def __init__(self, path: Path) -> None:
        super().__init__(
            f"{path} is not inside a git repository.\n\n"
            "tui-engineer commits each step you accept, so it needs one. It can run "
            "'git init' here for you (nothing is committed until you accept a step)."
        )

    def on_choice(self, button_id: str) -> None:
        self.dismiss(button_id == "init")


class DirtyTreeScreen(Dialog["DirtyChoice | None"]):
    """Uncommitted changes at start: commit them as WIP, stash them, or build on top of them.
    Result: the choice, or None to quit. Nothing is ever discarded."""

    title_text = "Uncommitted changes"
    buttons = [
        ("wip", "Commit as WIP", "primary"),
        ("stash", "Stash", "default"),
        ("include", "Include", "default"),
        ("quit", "Quit", "default"),
    ]

    def __init__(self, files: list[str]) -> None:
        shown = "\n".join(f"  {name}" for name in files[:8])
        more = f"\n  … and {len(files) - 8} more" if len(files) > 8 else ""
        super().__init__(
            f"This repository has uncommitted changes:\n{shown}{more}\n\n"
            "Commit as WIP: one commit on this branch now.  Stash: 'git stash -u', get them "
            "back with 'git stash pop'.  Include: steps build on them; they stay uncommitted."
        )

    def on_choice(self, button_id: str) -> None:
        self.dismiss(None if button_id == "quit" else button_id)  # type: ignore[arg-type]


DOCTOR_HINT = "`tui-engineer doctor` checks everything a session needs and says what to do."


class ProblemScreen(Dialog[bool]):
    """A start-up problem the user fixes outside the app (config, key, server, test command).
    Result: True to try again after fixing it."""

    buttons = [("retry", "Try again", "primary"), ("quit", "Quit", "default")]
    cancel_value = False
    # q quits here as everywhere in the app (Escape too): nothing is under way yet.
    BINDINGS = [*Dialog.BINDINGS, Binding("q", "cancel", "Quit", show=False)]

    def __init__(self, title: str, message: str, url: str | None = None) -> None:
        self.title_text = title
        tried = f"\n\nURL tried: {url}" if url else ""
        super().__init__(message + tried + "\n\n" + DOCTOR_HINT)

    def on_choice(self, button_id: str) -> None:
        self.dismiss(button_id == "retry")


class TakeOverScreen(Dialog[str | None]):
    """Another process's session works on this repository (a terminal, a `serve` tab): take it
    over, or quit and leave it alone. Result: "take_over", "retry", or None to quit."""

    title_text = "Another session works on this repository"
    buttons = [
        ("take_over", "Take over", "primary"),
        ("retry", "Try again", "default"),
        ("quit", "Quit", "default"),
    ]
    cancel_value = None
    # t takes over, q quits (Escape too): keys a browser tab under `serve` reaches as well.
    BINDINGS = [
        *Dialog.BINDINGS,
        Binding("t", "choose('take_over')", "Take over", show=False),
        Binding("q", "cancel", "Quit", show=False),
    ]

    def __init__(self, message: str) -> None:
        super().__init__(
            message + "\n\nTake over (t): that session stops where it runs (its accepted "
            "steps stay committed) and goes on here, shown as it was; what the model already "
            "answered is not asked again. Quit (q) leaves it alone."
        )

    def action_choose(self, choice: str) -> None:
        self.dismiss(choice)

    def on_choice(self, button_id: str) -> None:
        self.dismiss(None if button_id == "quit" else button_id)


class NoTestsScreen(Dialog[str | None]):
    """No test command found (a new project, say): have the first step write the tests, work
    unverified, or set a command and try again. Result: "write", "unverified", "retry", or
    None to quit."""

    title_text = "No tests found"
    buttons = [
        ("write", "Write tests first", "primary"),
        ("unverified", "Work unverified", "warning"),
        ("retry", "Try again", "default"),
        ("quit", "Quit", "default"),
    ]

    def __init__(self, command: str) -> None:
        super().__init__(
            "tui-engineer found no test command in this repository, so it cannot check a "
            "step by running its tests.\n\n"
            f"Write tests first: the first step writes them with its change, run with `{command}` "
            "(its new test must fail before the change and pass after).\n"
            "Work unverified: no tests run; every step is reviewed and committed marked "
            "'unverified: no tests ran'.\n"
            "Try again: after setting test_command in .tui-engineer.toml (or pass --test-cmd)."
        )

    def on_choice(self, button_id: str) -> None:
        self.dismiss(None if button_id == "quit" else button_id)
