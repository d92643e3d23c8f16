"""Keys from the first frame, a footer that always says how to get them, and dialogs where
Escape never decides for the human (issue 12: the first ten minutes)."""

from __future__ import annotations

import pytest
from textual.geometry import Region
from textual.widgets import RadioSet
from textual.widgets._footer import FooterKey

from tests.conftest import SAMPLE_FILES
from tests.scripted_server import Reply
from tests.tiers import whole_session
from tests.tui.app_support import (
    SIZE,
    SUB,
    asked,
    make_app,
    plan_reply,
    reviewing,
    session_ended,
    type_text,
    wait_for,
    wait_for_screen,
)
from tui_engineer.tui.app import TuiEngineerApp
from tui_engineer.tui.footer import KeyFooter
from tui_engineer.tui.panes.file_tree import RepoTree
from tui_engineer.tui.screens import (
    QuitScreen,
    RejectReasonScreen,
    StillWrongScreen,
    VerdictScreen,
)

pytestmark = pytest.mark.usefixtures("api_key")


@pytest.fixture
def calc_app(make_repo, scripted_server):
    """The app on the calc sample repo, the model answering `replies` in turn."""

    def build(*replies: Reply, request: str = "", **options) -> TuiEngineerApp:
        scripted_server.script(*replies)
        return make_app(make_repo(), scripted_server.base_url, request, **options)

    return build


def planning() -> Reply:
    """A plan the model is still writing during the first seconds."""
    return Reply(text=plan_reply("Add sub"), delay=5)


def footer_keys(app) -> set[str]:
    """The keys the footer offers now (Textual's Footer shows these bindings)."""
    return {key for key, active in app.screen.active_bindings.items() if active.binding.show}


@whole_session
async def test_with_a_request_keys_work_from_the_first_frame(calc_app) -> None:
    app = calc_app(planning(), request="add sub")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert app.focused is not app.chat_input
        assert {"q", "d", "c"} <= footer_keys(app)
        await wait_for(
            pilot, lambda: app.controller.engine is not None and app.controller.engine.is_running
        )
        await pilot.press("q")  # a key, not a letter typed into the box
        assert app.chat_input.value == ""
        await wait_for(pilot, lambda: isinstance(app.screen, QuitScreen))
        await app.stop_work()


async def test_before_the_first_proposal_the_footer_fits_and_shows_quit(calc_app) -> None:
    # The diff is focused and shows its placeholder: Escape ("Back to the diff") means nothing,
    # and at 120 columns offering it pushed "b Files" and "q Quit" off the footer.
    app = calc_app(planning(), request="add sub")
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.controller.ready)
        await pilot.pause()
        # The footer is composed again when the bindings change (focus, readiness): on a loaded
        # machine a query can fall between two composes and find no key at all.
        await wait_for(
            pilot, lambda: any(key.description == "Quit" for key in app.screen.query(FooterKey))
        )
        assert "escape" not in footer_keys(app)
        shown = {key.description: key.region for key in app.screen.query(FooterKey)}
        assert "Quit" in shown and shown["Quit"].right <= SIZE[0]
        await app.stop_work()


def footer_shown(app) -> tuple[dict[str, Region], int]:
    """The footer's keys as drawn (description -> region) and the column where the command
    palette key, docked on the right, begins: a key drawn past it is hidden under it."""
    keys = app.screen.query(FooterKey)
    palette = next(key.region.x for key in keys if key.has_class("-command-palette"))
    shown = {key.description: key.region for key in keys if not key.has_class("-command-palette")}
    return shown, palette


@whole_session
@pytest.mark.parametrize("size", [SIZE, (80, 24)])
async def test_a_file_view_during_review_keeps_quit_and_every_shown_key_readable(
    make_repo, scripted_server, size: tuple[int, int]
) -> None:
    # Issue 12: at 120 columns a file opened from the Files tree (diff focused to read it) added
    # "esc Back to the diff" and pushed "q Quit" under the palette key; at 80 columns even the
    # plain review lost "Full pane", the tab keys and Quit.
    scripted_server.script(Reply(text=plan_reply("Add sub")), Reply(text=SUB))
    repo = make_repo({**SAMPLE_FILES, "README.md": "# calc\n\nAdds numbers.\n"})
    app = make_app(repo, scripted_server.base_url, "add sub")
    async with app.run_test(size=size) as pilot:
        await wait_for(pilot, reviewing(app, 1))
        await wait_for(pilot, lambda: not app.test_pane.running)
        tree = app.screen.query_one(RepoTree)
        await wait_for(pilot, lambda: tree.node_for("README.md") is not None)
        if size[0] >= 110:
            await pilot.press("b")  # Files is hidden by default at 120 columns
        else:
            await pilot.click("#tab-tree")
        await pilot.pause()
        tree.focus()
        tree.cursor_line = tree.node_for("README.md").line
        await pilot.press("enter")
        await wait_for(pilot, lambda: not app.diff.showing_diff)
        await pilot.click("#pane-diff")  # to read and scroll the file
        await pilot.pause()
        assert app.focused is app.diff
        shown, palette = footer_shown(app)
        assert {"Quit", "Accept", "Reject", "Skip"} <= shown.keys()
        assert any(key.startswith("Back") for key in shown)  # how to leave the file view
        for description, region in shown.items():
            assert region.right <= palette, f"{description!r} is cut at {size[0]} columns"
        if size == SIZE:  # all of them fit at 120 columns
            assert app.screen.query_one(KeyFooter).left_out == []
        await pilot.press("escape")
        await pilot.pause()
        assert app.diff.showing_diff
        shown, palette = footer_shown(app)
        assert "Quit" in shown and all(r.right <= palette for r in shown.values())
        await app.stop_work()


async def test_without_a_request_the_chat_box_takes_the_request(calc_app) -> None:
    app = calc_app()
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.controller.ready)
        assert app.focused is app.chat_input


async def test_the_chat_box_footer_says_how_to_leave_and_escape_goes_to_the_diff(
    calc_app,
) -> None:
    app = calc_app()
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.controller.ready)
        assert app.focused is app.chat_input  # no request yet: the box asks for one
        assert "escape" in footer_keys(app)
        await pilot.pause()
        # q types into the box, so the footer names the quit key that still works there.
        shown = {key.description: key.key for key in app.screen.query(FooterKey)}
        assert shown.get("Quit") == "ctrl+c"
        await pilot.press("escape")
        assert app.focused is app.diff
        assert {"q", "c"} <= footer_keys(app)


@whole_session
async def test_escape_on_still_wrong_is_not_done_and_the_verdict_has_no_preselection(
    calc_app,
) -> None:
    app = calc_app(Reply(text=SUB), request="add sub", plan=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, reviewing(app, 1))
        await pilot.press("a")
        await wait_for_screen(pilot, app, StillWrongScreen)
        await pilot.press("escape")
        await pilot.pause(0.2)
        assert isinstance(app.screen, StillWrongScreen)  # still asking: Escape decided nothing
        assert app.controller.reviewer.question == "still_wrong"
        await pilot.click("#done")
        await wait_for_screen(pilot, app, VerdictScreen)
        assert app.screen.query_one("#levels", RadioSet).pressed_button is None
        await pilot.press("escape")
        await pilot.click("#save")  # nothing picked: not recorded as an answer
        await pilot.pause(0.2)
        assert (
            isinstance(app.screen, VerdictScreen) and app.controller.reviewer.question == "verdict"
        )
        await pilot.click("#level-ran")
        await pilot.click("#save")
        await wait_for(pilot, session_ended(app))
        assert not asked(app, "verdict")()


@whole_session
async def test_after_a_server_error_no_step_still_says_it_is_being_worked_on(calc_app) -> None:
    app = calc_app(Reply(text=plan_reply("Add sub")), Reply(status=400), request="add sub")
    app.check_retries = 0
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, asked(app, "verdict"))  # the engine ends the session
        # The step the error hit says so ("failed"), not "proposing" with a spinner.
        assert app.plan_pane.status_of(1) == "failed"
        assert app.status.busy == ""  # no spinner
        # The dialog is pushed before its buttons mount: wait for them before clicking.
        await wait_for_screen(pilot, app, VerdictScreen)
        await pilot.click("#skip")
        await app.stop_work()


async def test_the_cost_reads_the_same_before_and_after_the_first_call(calc_app) -> None:
    # An unpriced model: "cost unknown" from the start, not "$0.0000" that turns into
    # "cost unknown" once the first reply is in (one cost format everywhere).
    app = calc_app(planning(), request="add sub")
    async with app.run_test(size=SIZE) as pilot:
        assert "$0.0000" not in str(app.status.render())
        await wait_for(pilot, lambda: app.controller.ready)
        await pilot.pause()
        shown = str(app.status.render())
        assert "cost unknown" in shown and "$0.0000" not in shown
        await app.stop_work()


@whole_session
async def test_after_a_reject_the_status_no_longer_says_review(calc_app) -> None:
    # It read "review step 1 (tests pass)" while the next proposal was being written and tested.
    app = calc_app(Reply(text=SUB), Reply(text=SUB, delay=5), request="add sub", plan=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, reviewing(app, 1))
        assert app.status.phase.startswith("review step 1")
        await pilot.press("r")
        await wait_for_screen(pilot, app, RejectReasonScreen)
        await type_text(pilot, "check negatives")
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.controller.reviewer.question != "review")
        await pilot.pause()
        assert "review" not in app.status.phase
        assert "rejected" in app.status.phase
        await app.stop_work()
