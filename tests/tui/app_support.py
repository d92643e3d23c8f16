"""Driving the real TUI app in tests: the real engine, the scripted server, real git repos."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from textual.pilot import Pilot
from textual.widget import Widget
from textual.widgets import Log

from tests.engine_support import KEY, MUL_BUGGY, SUB, edit, plan_reply  # noqa: F401 (re-exported)
from tests.scripted_server import Reply, ScriptedServer
from tui_engineer.demo import DEFAULT_REQUEST, DemoServer, demo_flags, make_sample_repo
from tui_engineer.session.run import RunOptions
from tui_engineer.tui.app import TuiEngineerApp
from tui_engineer.tui.screens import ProblemScreen, StillWrongScreen, VerdictScreen

SIZE = (120, 40)
MUL_FIX = edit("calc.py", "    return a + b  # x\n", "    return a * b\n")


def make_app(
    repo: Path,
    base_url: str,
    request: str = "",
    *,
    plan: bool = True,
    app_class: type[TuiEngineerApp] = TuiEngineerApp,
    **flags: object,
) -> TuiEngineerApp:
    options = RunOptions(
        request=request,
        repo=repo,
        # One full test run per attempt, as with --full-tests-always: pictures and run counts
        # do not depend on whether this machine's `python` has pytest-testmon. The affected
        # runs are shown by test_app_session.py's own test, which passes False.
        # No step prepared during review either: scripted replies go to calls in arrival order.
        flags={
            "base_url": base_url,
            "model": "test-model",
            "full_tests_always": True,
            "pipeline": False,
            **flags,
        },
        plan=plan,
    )
    return app_class(options, deterministic=True)


def add_sub_app(
    repo: Path, server: ScriptedServer, *replies: Reply, **flags: object
) -> TuiEngineerApp:
    """The app asked to "add sub" with no plan, the model scripted with `replies` (by default one
    proposal, SUB): the shortest whole session, one step to review, which many tests start from."""
    server.script(*(replies or (Reply(text=SUB),)))
    return make_app(repo, server.base_url, "add sub", plan=False, **flags)


def sub_and_mul_app(
    repo: Path, server: ScriptedServer, step_2: str, *later: Reply, **flags: object
) -> TuiEngineerApp:
    """The app asked to "add sub and mul", the model scripted with the plan (Add sub, Add mul),
    step 1's edit (SUB), step 2's edit (`step_2`), then `later`: two steps to review, for tests
    about what happens between steps."""
    server.script(
        Reply(text=plan_reply("Add sub", "Add mul")), Reply(text=SUB), Reply(text=step_2), *later
    )
    return make_app(repo, server.base_url, "add sub and mul", **flags)


@contextmanager
def demo_app(folder: Path) -> Iterator[tuple[Path, TuiEngineerApp]]:
    """`tui-engineer demo` in this process: the sample repo made in `folder`, the built-in model
    (unpaced) over real HTTP, and the app on them, with the demo's request."""
    repo = make_sample_repo(folder)
    with DemoServer(pace=0) as server:
        options = RunOptions(request=DEFAULT_REQUEST, repo=repo, flags=demo_flags(server.base_url))
        yield repo, TuiEngineerApp(options, deterministic=True)


def chat_text(app: TuiEngineerApp) -> str:
    """Everything the chat shows: notes, headers, and the Markdown of streamed replies."""
    parts = [str(w.render()) for w in app.chat.query("Static")]
    return "\n".join(parts + [m.source for m in app.chat.query("Markdown")])


def diff_lines(app: TuiEngineerApp) -> list[str]:
    """The text of every line the Diff pane holds, in every file and hunk, in order."""
    return [line.text for f in app.diff.files for h in f.hunks for line in h.lines]


def diff_text(app: TuiEngineerApp) -> str:
    """The Diff pane's lines as one text, to look for a piece of code in it."""
    return "\n".join(diff_lines(app))


def visible_lines(widget: Widget) -> list[str]:
    """The text a widget draws on the screen now, line by line (what a user can read)."""
    return [
        "".join(segment.text for segment in widget.render_line(y)).rstrip()
        for y in range(widget.size.height)
    ]


async def wait_for(pilot: Pilot, condition: Callable[[], object], timeout: float = 60) -> None:
    """Poll app state (never a fixed sleep) until `condition()` is true. The timeout is generous:
    with other work on the 2 cores (load 15+) a scripted proposal took over 20 s. A session that
    stopped (a start-up problem's screen, an error) fails the wait at once with its reason, after
    a short grace for what its handlers still show (a test may be waiting for that)."""
    deadline = time.monotonic() + timeout
    stopped_at: float | None = None
    while not condition():
        now = time.monotonic()
        if now > deadline:
            raise AssertionError(f"timed out waiting for {condition.__doc__ or condition}")
        reason = stop_reason(pilot.app)
        if reason is None:
            stopped_at = None
        elif stopped_at is None:
            stopped_at = now
        elif now - stopped_at > STOP_GRACE:
            raise AssertionError(
                f"the session stopped while waiting for {condition.__doc__ or condition}: {reason}"
            )
        await pilot.pause(0.02)


STOP_GRACE = 2.0  # seconds a stopped session's screen and notes get to settle


def stop_reason(app: object) -> str | None:
    """Why the app's session cannot go on (its start-up problem screen, or the error that
    stopped it), else None."""
    if not isinstance(app, TuiEngineerApp):
        return None
    if isinstance(app.screen, ProblemScreen):
        # Its text, not its widget: a screen just pushed may not be composed yet.
        return f"{app.screen.title_text}: {app.screen.body}"
    phase = app.status.phase
    ended = (
        app.controller.engine is not None and app.controller.engine.is_finished
    )  # not a new session starting
    if ended and (phase == "stopped" or phase.startswith("finished: error")):
        errors = [str(w.render()) for w in app.chat.query(".chat-error")]
        return errors[-1] if errors else app.status.phase
    return None


async def type_text(pilot: Pilot, text: str) -> None:
    """Type like a user: one key per character."""
    names = {" ": "space", ".": "full_stop", ",": "comma", ":": "colon", "-": "minus"}
    await pilot.press(*(names.get(ch, ch) for ch in text))


async def send_chat(pilot: Pilot, text: str) -> None:
    """Send `text` from the chat box as a user does: click into it, type, press Enter."""
    await pilot.click("#chat-input")
    await type_text(pilot, text)
    await pilot.press("enter")


def reviewing(app: TuiEngineerApp, count: int = 1) -> Callable[[], bool]:
    def check() -> bool:
        """the app to show proposal number `count` for review, long enough for a decision"""
        asked = (
            app.controller.reviewer.question == "review" and app.controller.proposals_seen >= count
        )
        return asked and app.diff.review_settled

    return check


def asked(app: TuiEngineerApp, question: str) -> Callable[[], bool]:
    def check() -> bool:
        """the engine to ask the question, with its dialog open"""
        return app.controller.reviewer.question == question and len(app.screen_stack) > 1

    return check


def session_ended(app: TuiEngineerApp) -> Callable[[], bool]:
    """A condition for wait_for: the session's engine has run and is no longer running (after
    the verdict, a quit, or an error), so what it wrote can be looked at."""

    def check() -> bool:
        """the session to end"""
        return app.controller.engine is not None and not app.controller.engine.is_running

    return check


async def wait_for_screen(pilot: Pilot, app: TuiEngineerApp, kind: type) -> None:
    """Wait until a dialog of `kind` is on top with its buttons mounted."""

    def shown() -> bool:
        """the dialog to be shown"""
        return isinstance(app.screen, kind) and bool(app.screen.query("Button"))

    await wait_for(pilot, shown)
    await pilot.pause()


# ----- scripted sessions that stop in a state worth looking at (snapshots and screenshots)

FIXED_DATES = {
    "GIT_AUTHOR_DATE": "2025-01-01T12:00:00+0000",
    "GIT_COMMITTER_DATE": "2025-01-01T12:00:00+0000",
}
QUIET_TESTS = "python -m pytest -q -p no:cacheprovider"


def review_script() -> list[Reply]:
    """A two-step plan whose first step is under review with passing tests."""
    return [
        Reply(text=plan_reply("Add sub", "Add mul"), usage=(900, 120)),
        Reply(text="Adding `sub` next to `add`.\n\n" + SUB, usage=(1500, 200)),
    ]


def fix_loop_script() -> list[Reply]:
    """`mul` fails its new test; the diagnosis streams in; the fix call hangs (a frozen state)."""
    return [
        Reply(text="Adding `mul` with a test.\n\n" + MUL_BUGGY, usage=(1700, 210)),
        Reply(
            text="`test_mul` fails: **mul returns `a + b`**, so `mul(4, 3)` gives 7, not 12. "
            "Multiply instead.",
            usage=(1300, 40),
        ),
        Reply(text=MUL_FIX, delay=30, usage=(2100, 60)),
    ]


def partial_review_script() -> list[Reply]:
    """A proposal with a stray debug print besides `sub` and its test (tests/pair_support.py)."""
    from tests.pair_support import STRAY, SUB_CODE, SUB_TEST

    return [
        Reply(text=plan_reply("Add sub", "Add mul"), usage=(900, 120)),
        Reply(text="Adding `sub`.\n\n" + STRAY + SUB_CODE + SUB_TEST, usage=(1500, 260)),
    ]


async def drive_to_partial_review(pilot: Pilot) -> None:
    """The stray print's hunk dropped (dimmed), the cursor on it."""
    app = pilot.app
    assert isinstance(app, TuiEngineerApp)
    await drive_to_review(pilot)
    await pilot.press("n", "space", "down", "down")
    await pilot.pause()


def still_wrong_script() -> list[Reply]:
    return [Reply(text="Adding `sub` next to `add`.\n\n" + SUB, usage=(1500, 200))]


async def drive_to_review(pilot: Pilot) -> None:
    """Step 1 under review with its test run finished and shown: what snapshots and the tests of
    a finished run's output look at."""
    app = pilot.app
    assert isinstance(app, TuiEngineerApp)
    await wait_for(pilot, reviewing(app, 1))
    await wait_for(pilot, lambda: not app.test_pane.running)
    await pilot.pause()


async def drive_to_fix_loop(pilot: Pilot) -> None:
    app = pilot.app
    assert isinstance(app, TuiEngineerApp)
    await wait_for(pilot, lambda: app.status.busy == "model: fix")
    await send_chat(pilot, "keep the test name test_mul")
    await wait_for(pilot, lambda: app.test_pane.failures != [])
    await settle_scrolling(pilot)
    # The failing test's traceback (from the JUnit report) rather than the raw log, whose exact
    # line count varies with the environment pytest runs in.
    assert app.test_pane.show_traceback(app.test_pane.failures[0])
    await pilot.pause()


async def settle_scrolling(pilot: Pilot) -> None:
    """Snapshots must not depend on how far streamed text and test output had scrolled when
    the picture was taken (timing differs under load): flush both, then pin them to the end."""
    app = pilot.app
    assert isinstance(app, TuiEngineerApp)
    await wait_for(pilot, lambda: not app.chat.has_unflushed_text)
    app.test_pane.flush()
    await pilot.wait_for_scheduled_animations()
    await pilot.pause(0.1)
    for widget in (app.chat, *app.test_pane.query(Log)):
        widget.scroll_end(animate=False, immediate=True)
    await pilot.pause()


async def drive_to_still_wrong(pilot: Pilot) -> None:
    app = pilot.app
    assert isinstance(app, TuiEngineerApp)
    await wait_for(pilot, reviewing(app, 1))
    await pilot.press("a")
    await wait_for_screen(pilot, app, StillWrongScreen)
    await type_text(pilot, "sub should accept floats too")
    await pilot.pause()


async def finish_session(pilot: Pilot, app: TuiEngineerApp) -> None:
    """Answer "what is still wrong?" with done, skip the verdict, and quit."""
    await wait_for(pilot, asked(app, "still_wrong"))
    await pilot.press("enter")
    await wait_for(pilot, asked(app, "verdict"))
    await wait_for_screen(pilot, app, VerdictScreen)
    await pilot.click("#skip")
    await wait_for(pilot, session_ended(app))
    await pilot.press("q")
