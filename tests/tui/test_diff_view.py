"""DiffView on real `git diff` output: file headers, focus, split view, plain files, huge diffs."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from textual.app import App, ComposeResult

from tests.conftest import git
from tests.tui.app_support import wait_for
from tui_engineer.tui.panes.diff_view import DiffView, parse_unified_diff


class DiffApp(App[None]):
    def compose(self) -> ComposeResult:
        yield DiffView(id="diff")


def screen_text(view: DiffView) -> list[str]:
    """The rows as the user sees them right now."""
    return [view.render_line(y).text for y in range(view.scrollable_content_region.height)]


def showing(view: DiffView, row: int, text: str) -> Callable[[], bool]:
    def check() -> bool:
        """the diff to show the text on that row"""
        return text in screen_text(view)[row]

    return check


def proposal_diff(make_repo: Callable[..., Path]) -> str:
    """A real diff: calc.py modified, notes.md added, tests/test_calc.py deleted."""
    repo = make_repo()
    (repo / "calc.py").write_text(
        "def add(a, b):\n    return b + a\n\n\ndef sub(a, b):\n    return a - b\n"
    )
    (repo / "notes.md").write_text("# Notes\n")
    (repo / "tests" / "test_calc.py").unlink()
    git(repo, "add", "-A")
    return git(repo, "diff", "--cached")


async def test_real_git_diff_shows_each_file_with_its_header(
    make_repo: Callable[..., Path],
) -> None:
    app = DiffApp()
    async with app.run_test(size=(100, 40)) as pilot:
        view = app.query_one(DiffView)
        view.show_diff(proposal_diff(make_repo))
        await pilot.pause()
        assert [(f.path, f.status) for f in view.files] == [
            ("calc.py", "M"),
            ("notes.md", "A"),
            ("tests/test_calc.py", "D"),
        ]
        text = "\n".join(screen_text(view))
        assert "M calc.py  +5 −1" in text
        assert "A notes.md  +1 −0" in text
        assert "D tests/test_calc.py" in text
        assert "+    return b + a" in text and "-    return a + b" in text
        assert not list(view.children)  # rows are rendered, never mounted as widgets


async def test_empty_diff_shows_a_quiet_placeholder() -> None:
    app = DiffApp()
    async with app.run_test() as pilot:
        view = app.query_one(DiffView)
        view.show_diff("")
        await pilot.pause()
        assert screen_text(view)[0].strip() == "No changes to show."


async def test_focus_file_scrolls_to_that_file(make_repo: Callable[..., Path]) -> None:
    app = DiffApp()
    async with app.run_test(size=(100, 8)) as pilot:
        view = app.query_one(DiffView)
        view.show_diff(proposal_diff(make_repo))
        await pilot.pause()
        assert not any("notes.md" in line for line in screen_text(view))
        assert view.focus_file("notes.md") is True
        await pilot.pause()
        assert screen_text(view)[0].startswith(" A notes.md")
        assert view.current_file == "notes.md"
        # The last file cannot reach the top; it is on screen all the same.
        assert view.focus_file("tests/test_calc.py") is True
        await pilot.pause()
        assert any(line.startswith(" D tests/test_calc.py") for line in screen_text(view))
        assert view.focus_file("not/in/diff.py") is False


async def test_show_file_then_focus_file_returns_to_the_diff(
    make_repo: Callable[..., Path],
) -> None:
    app = DiffApp()
    async with app.run_test(size=(100, 20)) as pilot:
        view = app.query_one(DiffView)
        view.show_diff(proposal_diff(make_repo))
        view.show_file("README.md", "# Title\n\nSome words.\n")
        await pilot.pause()
        text = screen_text(view)
        assert text[0].startswith(" README.md  (not in the diff)")
        assert "Some words." in text[3]
        assert view.focus_file("notes.md")
        await pilot.pause()
        text = screen_text(view)
        assert any(line.startswith(" A notes.md") for line in text)
        assert not any("(not in the diff)" in line for line in text)


async def test_split_toggle_shows_old_and_new_side_by_side(make_repo: Callable[..., Path]) -> None:
    app = DiffApp()
    async with app.run_test(size=(120, 30)) as pilot:
        view = app.query_one(DiffView)
        view.show_diff(proposal_diff(make_repo))
        view.toggle_split()
        await pilot.pause()
        assert view.split is True
        pair = next(line for line in screen_text(view) if "return a + b" in line)
        left, right = pair.split("│")
        assert "-    return a + b" in left and "+    return b + a" in right
        view.toggle_split()
        await pilot.pause()
        assert not any("│" in line for line in screen_text(view))


async def test_twenty_thousand_line_diff_opens_and_scrolls_to_the_end(
    make_repo: Callable[..., Path],
) -> None:
    repo = make_repo()
    (repo / "big.py").write_text("".join(f"value_{n} = {n}\n" for n in range(1, 20_001)))
    git(repo, "add", "-A")
    diff = git(repo, "diff", "--cached")
    app = DiffApp()
    async with app.run_test(size=(100, 30)) as pilot:
        view = app.query_one(DiffView)
        view.show_diff(diff)
        await pilot.pause()
        assert view.virtual_size.height == 20_002  # header + hunk + 20,000 lines
        view.focus()
        # End and Home scroll with an animation (a second long): wait for where it lands, as
        # the user does; an idle pause alone caught it on its way (row 8095).
        await pilot.press("end")
        await wait_for(pilot, showing(view, -1, "+value_20000 = 20000"))
        await pilot.press("home")
        await wait_for(pilot, showing(view, 0, " A big.py  +20000 −0"))
        assert screen_text(view)[0].startswith(" A big.py  +20000 −0")


def test_parser_reads_renames_binaries_and_line_numbers() -> None:
    diff = "\n".join(
        [
            "diff --git a/old name.py b/new name.py",
            "similarity index 90%",
            "rename from old name.py",
            "rename to new name.py",
            "--- a/old name.py",
            "+++ b/new name.py",
            "@@ -10,2 +10,3 @@ def f():",
            " keep",
            "-gone",
            "+came",
            "+also",
            "diff --git a/logo.png b/logo.png",
            "Binary files a/logo.png and b/logo.png differ",
        ]
    )
    renamed, binary = parse_unified_diff(diff)
    assert (renamed.status, renamed.old_path, renamed.new_path) == (
        "R",
        "old name.py",
        "new name.py",
    )
    lines = renamed.hunks[0].lines
    assert [(line.kind, line.old_no, line.new_no) for line in lines] == [
        (" ", 10, 10),
        ("-", 11, None),
        ("+", None, 11),
        ("+", None, 12),
    ]
    assert binary.binary and binary.path == "logo.png"


async def test_rows_use_the_theme_background_to_the_right_edge_in_a_light_theme(
    make_repo: Callable[..., Path],
) -> None:
    """Past the end of the code, a row shows the pane's own background, never the terminal's
    default (a dark block in a light theme)."""
    app = DiffApp()
    async with app.run_test(size=(120, 20)) as pilot:
        app.theme = "textual-light"
        view = app.query_one(DiffView)
        view.show_diff(proposal_diff(make_repo))
        await pilot.pause()
        surface = view.rich_style.bgcolor
        for y in range(view.scrollable_content_region.height):
            segments = list(view.render_line(y))
            unstyled = [seg.text for seg in segments if seg.style is None or not seg.style.bgcolor]
            assert unstyled == [], f"row {y} has cells without a background: {unstyled}"
            last = segments[-1].style
            assert last is not None and last.bgcolor is not None
            row = view._rows[y] if y < len(view._rows) else None
            if row is None or (row.left is not None and row.left.kind == " "):
                assert last.bgcolor == surface  # context lines and blank rows: the pane's own
