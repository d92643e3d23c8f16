"""Applying edits to a real repository: matching, diagnosis, line endings, all-or-nothing."""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path

import pytest

from tui_engineer.edits import (
    ApplyFailed,
    DeleteFile,
    RenameFile,
    SearchReplace,
    WriteFile,
    apply_edits,
    parse_edits,
)

MakeRepo = Callable[..., Path]

SHOP = """class Cart:
    def __init__(self):
        self.items = []

    def total(self):
        return sum(self.items)


def helper():
    return 1
"""


@pytest.fixture
def shop(make_repo: MakeRepo) -> Path:
    return make_repo({"shop.py": SHOP, "calc.py": "def add(a, b):\n    return a + b\n"})


def test_exact_match_replaces_the_lines(shop: Path) -> None:
    result = apply_edits(
        shop, [SearchReplace("calc.py", "    return a + b\n", "    return b + a\n")]
    )
    assert (shop / "calc.py").read_text() == "def add(a, b):\n    return b + a\n"
    assert result.changed == ["calc.py"] and not result.created


def test_reply_text_end_to_end(shop: Path) -> None:
    reply = (
        "Swap the operands.\n\n`calc.py`\n```python\n<<<<<<< SEARCH\n    return a + b\n=======\n"
        "    return b + a\n>>>>>>> REPLACE\n```\n"
    )
    apply_edits(shop, parse_edits(reply))
    assert "return b + a" in (shop / "calc.py").read_text()


def test_indentation_difference_is_tolerated_and_replacement_reindented(shop: Path) -> None:
    search = "def total(self):\n    return sum(self.items)\n"  # model dropped the class indent
    replace = (
        "def total(self):\n    if not self.items:\n        return 0\n    return sum(self.items)\n"
    )
    apply_edits(shop, [SearchReplace("shop.py", search, replace)])
    text = (shop / "shop.py").read_text()
    assert (
        "    def total(self):\n        if not self.items:\n            return 0\n"
        "        return sum(self.items)\n" in text
    )


def test_over_indented_search_is_dedented_to_the_file(make_repo: MakeRepo) -> None:
    root = make_repo({"h.py": "def helper():\n    return 1\n"})
    search = "        def helper():\n            return 1\n"  # copied from a nested context
    replace = "        def helper():\n            value = 1\n            return value\n"
    apply_edits(root, [SearchReplace("h.py", search, replace)])
    assert (root / "h.py").read_text() == "def helper():\n    value = 1\n    return value\n"


def test_blank_lines_at_search_edges_are_not_required(shop: Path) -> None:
    search = "\ndef helper():\n    return 1\n\n"  # the file has no blank line after it
    apply_edits(shop, [SearchReplace("shop.py", search, "\ndef helper():\n    return 2\n\n")])
    assert (shop / "shop.py").read_text() == SHOP.replace("return 1", "return 2")


def test_line_numbers_copied_from_a_show_answer_are_dropped(shop: Path) -> None:
    """A SHOW answer numbers its lines (`5 |     def total(self):`); a model that copies them
    into SEARCH (and REPLACE) still gets its edit applied, without them."""
    search = "5 |     def total(self):\n6 |         return sum(self.items)\n"
    replace = "5 |     def total(self):\n6 |         return sum(self.items) or 0\n"
    apply_edits(shop, [SearchReplace("shop.py", search, replace)])
    text = (shop / "shop.py").read_text()
    assert "    def total(self):\n        return sum(self.items) or 0\n" in text
    assert "|" not in text
    # A file whose own lines look like that is matched as written.
    table = "1 | one\n2 | two\n"
    apply_edits(shop, [SearchReplace("table.txt", "", table)])
    apply_edits(shop, [SearchReplace("table.txt", "2 | two\n", "2 | deux\n")])
    assert (shop / "table.txt").read_text() == "1 | one\n2 | deux\n"


def test_trailing_whitespace_difference_is_tolerated(make_repo: MakeRepo) -> None:
    root = make_repo({"a.txt": "one   \ntwo\t\nthree\n"})
    apply_edits(root, [SearchReplace("a.txt", "one\ntwo\n", "ONE\nTWO\n")])
    assert (root / "a.txt").read_text() == "ONE\nTWO\nthree\n"


def test_ambiguous_search_asks_for_more_context_with_count_and_lines(make_repo: MakeRepo) -> None:
    root = make_repo({"a.py": "x = 1\ny = 2\nx = 1\nz = 3\nx = 1\n"})
    with pytest.raises(ApplyFailed) as caught:
        apply_edits(root, [SearchReplace("a.py", "x = 1\n", "x = 9\n")])
    message = caught.value.feedback
    assert "Block 1 (SEARCH/REPLACE a.py)" in message
    assert "matches 3 places" in message and "lines 1, 3, 5" in message
    assert "more unchanged lines" in message
    assert (root / "a.py").read_text() == "x = 1\ny = 2\nx = 1\nz = 3\nx = 1\n"


def test_not_found_shows_closest_lines_with_numbers(shop: Path) -> None:
    search = "    def total(self):\n        return sum(self.item)\n"  # typo: item
    with pytest.raises(ApplyFailed) as caught:
        apply_edits(shop, [SearchReplace("shop.py", search, "    pass\n")])
    message = caught.value.feedback
    assert "Block 1 (SEARCH/REPLACE shop.py): the SEARCH text was not found in shop.py" in message
    assert "closest lines in shop.py are lines 5-6" in message
    assert "5 |     def total(self):" in message and "6 |         return sum(self.items)" in message
    assert "already present" not in message
    assert (shop / "shop.py").read_text() == SHOP


def test_not_found_in_unrelated_file_says_nothing_resembles(shop: Path) -> None:
    with pytest.raises(ApplyFailed, match="Nothing in calc.py resembles it"):
        apply_edits(shop, [SearchReplace("calc.py", "import zlib\nzlib.compress(b'')\n", "")])


def test_already_applied_edit_is_recognised(shop: Path) -> None:
    edit = SearchReplace("calc.py", "    return a + b\n", "    return b + a\n")
    apply_edits(shop, [edit])
    with pytest.raises(ApplyFailed) as caught:
        apply_edits(shop, [edit])
    assert "REPLACE text of this block is already present in calc.py at line 2" in (
        caught.value.feedback
    )


def test_crlf_file_stays_crlf_and_keeps_missing_final_newline(make_repo: MakeRepo) -> None:
    root = make_repo({}, commit=False)
    (root / "win.txt").write_bytes(b"alpha\r\nbeta\r\ngamma")
    reply = (
        "win.txt\r\n```\r\n<<<<<<< SEARCH\r\nbeta\r\ngamma\r\n=======\r\nBETA\r\ngamma\r\n"
        ">>>>>>> REPLACE\r\n```\r\n"
    )
    apply_edits(root, parse_edits(reply))
    assert (root / "win.txt").read_bytes() == b"alpha\r\nBETA\r\ngamma"


def test_lf_file_without_final_newline_keeps_it_that_way(make_repo: MakeRepo) -> None:
    root = make_repo({"a.txt": "one\ntwo"})
    apply_edits(root, [SearchReplace("a.txt", "one\n", "uno\n")])
    assert (root / "a.txt").read_bytes() == b"uno\ntwo"


def test_overwrite_keeps_crlf_and_bom(make_repo: MakeRepo) -> None:
    root = make_repo({}, commit=False)
    (root / "w.txt").write_bytes("\ufeffold\r\n".encode())
    apply_edits(root, [WriteFile("w.txt", "new\nlines\n")])
    assert (root / "w.txt").read_bytes() == "\ufeffnew\r\nlines\r\n".encode()


def test_all_or_nothing_second_edit_fails_first_file_unchanged(shop: Path) -> None:
    edits = [
        SearchReplace("calc.py", "    return a + b\n", "    return b + a\n"),
        WriteFile("brand/new.py", "X = 1\n"),
        SearchReplace("shop.py", "this line is not there\n", "x\n"),
    ]
    with pytest.raises(ApplyFailed, match="Block 3"):
        apply_edits(shop, edits)
    assert (shop / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"
    assert not (shop / "brand").exists()


def test_create_with_empty_search_makes_parent_folders(shop: Path) -> None:
    result = apply_edits(shop, [SearchReplace("pkg/sub/mod.py", "", "VALUE = 1\n")])
    assert (shop / "pkg/sub/mod.py").read_text() == "VALUE = 1\n"
    assert result.created == ["pkg/sub/mod.py"]


def test_empty_search_on_existing_file_is_refused(shop: Path) -> None:
    with pytest.raises(ApplyFailed, match="calc.py already exists and is not empty"):
        apply_edits(shop, [SearchReplace("calc.py", "", "oops\n")])


def test_search_in_missing_file_says_how_to_create(shop: Path) -> None:
    with pytest.raises(ApplyFailed, match="nope.py does not exist.*leave SEARCH empty"):
        apply_edits(shop, [SearchReplace("nope.py", "x\n", "y\n")])


def test_several_edits_to_one_file_apply_in_order(shop: Path) -> None:
    edits = [
        SearchReplace("calc.py", "def add(a, b):\n", "def add(a, b, c=0):\n"),
        SearchReplace("calc.py", "    return a + b\n", "    return a + b + c\n"),
    ]
    apply_edits(shop, edits)
    assert (shop / "calc.py").read_text() == "def add(a, b, c=0):\n    return a + b + c\n"


def test_delete_and_rename_keep_file_mode(make_repo: MakeRepo) -> None:
    root = make_repo({"run.sh": "#!/bin/sh\necho hi\n", "old.txt": "bye\n"})
    os.chmod(root / "run.sh", 0o755)
    result = apply_edits(
        root,
        [
            RenameFile("run.sh", "bin/run.sh"),
            SearchReplace("bin/run.sh", "echo hi\n", "echo hello\n"),
            DeleteFile("old.txt"),
        ],
    )
    moved = root / "bin/run.sh"
    assert moved.read_text() == "#!/bin/sh\necho hello\n"
    assert stat.S_IMODE(moved.stat().st_mode) == 0o755
    assert not (root / "run.sh").exists() and not (root / "old.txt").exists()
    assert result.renamed == [("run.sh", "bin/run.sh")]
    assert result.changed == ["bin/run.sh"] and result.deleted == ["old.txt"]


def test_rename_onto_existing_file_is_refused(shop: Path) -> None:
    with pytest.raises(ApplyFailed, match="calc.py already exists"):
        apply_edits(shop, [RenameFile("shop.py", "calc.py")])
    assert (shop / "shop.py").read_text() == SHOP


def test_delete_missing_file_is_refused(shop: Path) -> None:
    with pytest.raises(ApplyFailed, match="gone.py does not exist"):
        apply_edits(shop, [DeleteFile("gone.py")])


def test_new_file_gets_normal_permissions(shop: Path) -> None:
    apply_edits(shop, [WriteFile("n.py", "x = 1\n")])
    mode = stat.S_IMODE((shop / "n.py").stat().st_mode)
    assert mode == 0o666 & ~_umask()


def test_no_temp_files_left_behind(shop: Path) -> None:
    apply_edits(shop, [WriteFile("calc.py", "x = 1\n"), WriteFile("d/n.py", "y = 2\n")])
    leftovers = [p.name for p in shop.rglob("*tui-engineer-tmp*")]
    assert leftovers == []


def test_file_over_the_size_cap_is_refused(shop: Path) -> None:
    with pytest.raises(ApplyFailed, match="files over 1,000,000 bytes are not edited"):
        apply_edits(shop, [WriteFile("big.txt", "x" * 1_000_001)])
    assert not (shop / "big.txt").exists()


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current
