"""Replies in the shapes real models write (issue 21): each is applied exactly when its meaning is
unambiguous, or refused with feedback that teaches the right shape; never something else. The
replies are written in the style of small local models and chat models, around a real file."""

from __future__ import annotations

from pathlib import Path

import pytest

from tui_engineer.edits import ApplyFailed, ParseError, apply_edits, parse_edits
from tui_engineer.edits.shapes import describe_reply, unmarked_file_feedback

CALC = "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n"
FIXED = CALC.replace("a - b", "a + b")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    (tmp_path / "calc.py").write_text(CALC)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_calc.py").write_text("from calc import add\n")
    return tmp_path


def applied(repo: Path, reply: str) -> str:
    apply_edits(repo, parse_edits(reply))
    return (repo / "calc.py").read_text()


SEARCH_FIX = "<<<<<<< SEARCH\n    return a - b\n=======\n    return a + b\n>>>>>>> REPLACE\n"


@pytest.mark.parametrize(
    ("reply", "detail"),
    [
        # the name inside the fence, first line
        (f"Fixing the sign.\n\n```python\ncalc.py\n{SEARCH_FIX}```\n", "path-in-fence"),
        # bold with backticks, and a colon
        (f"**`calc.py`:**\n```python\n{SEARCH_FIX}```\n", "path-decorated"),
        # a Markdown heading
        (f"### calc.py\n\n```python\n{SEARCH_FIX}```\n", "path-decorated"),
        # a label
        (f"File: calc.py\n```python\n{SEARCH_FIX}```\n", "path-decorated"),
        # the one backticked file of a prose line above the fence
        (f"Here is the fix for `calc.py`:\n\n```python\n{SEARCH_FIX}```\n", "path-in-prose"),
        # on the fence itself
        (f"```python calc.py\n{SEARCH_FIX}```\n", "path-in-info"),
        (f'```python title="calc.py"\n{SEARCH_FIX}```\n', "path-in-info"),
    ],
)
def test_file_names_where_models_put_them(repo: Path, reply: str, detail: str) -> None:
    assert applied(repo, reply) == FIXED
    shape = describe_reply(reply)
    assert shape.kind == "search-replace" and detail in shape.details


def test_prose_naming_two_files_is_not_a_path(repo: Path) -> None:
    reply = f"Change `calc.py` so `tests/test_calc.py` passes:\n\n```python\n{SEARCH_FIX}```\n"
    with pytest.raises(ParseError, match="no file path for this block"):
        parse_edits(reply)
    assert describe_reply(reply).details == ("malformed",)


def test_a_fenced_whole_file_without_markers_is_refused_with_the_file_block_shape() -> None:
    reply = f"Here is the updated calc.py:\n\n```python\n{FIXED}```\n\nThis fixes add."
    assert parse_edits(reply) == []
    feedback = unmarked_file_feedback(reply)
    assert feedback is not None
    assert "`calc.py` in a fenced block without edit markers" in feedback
    assert "calc.py\n```\n<<<<<<< FILE\n" in feedback and ">>>>>>> FILE" in feedback
    assert describe_reply(reply).kind == "fenced-code"


def test_code_in_a_fence_naming_no_file_gets_the_general_message() -> None:
    reply = "The problem is here:\n\n```python\nreturn a - b\n```\n"
    assert unmarked_file_feedback(reply) is None
    assert describe_reply("No change is needed.").kind == "prose"


UDIFF = """I changed the operator:

```diff
--- a/calc.py
+++ b/calc.py
@@ -1,2 +1,2 @@
 def add(a, b):
-    return a - b
+    return a + b
```
"""


def test_a_unified_diff_applies(repo: Path) -> None:
    assert applied(repo, UDIFF) == FIXED
    assert describe_reply(UDIFF).kind == "unified-diff"


def test_a_diff_with_bare_hunk_headers_and_wrong_counts_applies(repo: Path) -> None:
    reply = (
        "diff --git a/calc.py b/calc.py\n--- calc.py\n+++ calc.py\n@@ ... @@\n"
        " def add(a, b):\n-    return a - b\n+    return a + b\n"
        "@@ -5,9 +5,2 @@\n def mul(a, b):\n-    return a * b\n+    return b * a\n"
    )
    assert applied(repo, reply) == FIXED.replace("a * b", "b * a")


def test_bare_hunks_in_a_fence_labelled_with_the_file(repo: Path) -> None:
    reply = (
        "In `calc.py`:\n\n```diff\n@@ -1,2 +1,2 @@\n def add(a, b):\n-    return a - b\n"
        "+    return a + b\n```\n"
    )
    assert applied(repo, reply) == FIXED
    assert describe_reply(reply).kind == "unified-diff"


def test_bare_hunks_naming_no_file_are_refused() -> None:
    reply = "Change this:\n\n```diff\n@@ @@\n def add(a, b):\n-    return a - b\n+    return 0\n"
    with pytest.raises(ParseError, match="a diff hunk .* without the file it changes"):
        parse_edits(reply)


def test_aiders_old_original_updated_markers(repo: Path) -> None:
    reply = f"calc.py\n{SEARCH_FIX}".replace("SEARCH", "ORIGINAL").replace("REPLACE", "UPDATED")
    assert applied(repo, reply) == FIXED


def test_a_diff_creating_and_deleting_files(repo: Path) -> None:
    reply = (
        "--- /dev/null\n+++ b/util.py\n@@ -0,0 +1,2 @@\n+def one():\n+    return 1\n"
        "--- a/tests/test_calc.py\n+++ /dev/null\n@@ -1 +0,0 @@\n-from calc import add\n"
    )
    apply_edits(repo, parse_edits(reply))
    assert (repo / "util.py").read_text() == "def one():\n    return 1\n"
    assert not (repo / "tests" / "test_calc.py").exists()


def test_a_diff_hunk_that_fits_nowhere_is_refused_like_a_search(repo: Path) -> None:
    reply = "--- a/calc.py\n+++ b/calc.py\n@@ @@\n def sub(a, b):\n-    return a\n+    return -a\n"
    with pytest.raises(ApplyFailed, match="SEARCH text was not found in calc.py"):
        applied(repo, reply)
    assert (repo / "calc.py").read_text() == CALC


def test_a_diff_hunk_adding_lines_without_context_is_refused() -> None:
    reply = "--- a/calc.py\n+++ b/calc.py\n@@ -7,0 +7,2 @@\n+def sub(a, b):\n+    return a - b\n"
    with pytest.raises(ParseError, match="no unchanged lines around them"):
        parse_edits(reply)


def elided(search: str, replace: str) -> str:
    return f"calc.py\n```python\n<<<<<<< SEARCH\n{search}=======\n{replace}>>>>>>> REPLACE\n```\n"


def test_search_with_elisions_lined_up_in_replace_applies_piece_by_piece(repo: Path) -> None:
    reply = elided(
        "def add(a, b):\n    # ...\n    return a * b\n",
        "def add(a: int, b: int):\n    # ...\n    return b * a\n",
    )
    assert applied(repo, reply) == CALC.replace("add(a, b)", "add(a: int, b: int)").replace(
        "a * b", "b * a"
    )


@pytest.mark.parametrize(
    ("search", "replace"),
    [
        # REPLACE does not say what happens to the lines left out
        ("def add(a, b):\n...\n    return a * b\n", "def add(a, b):\n    return b * a\n"),
        # a piece that is not in the file
        ("def add(a, b):\n...\n    return a / b\n", "def add(a, b):\n...\n    return b / a\n"),
        # pieces out of order
        ("    return a * b\n...\ndef add(a, b):\n", "    return b * a\n...\ndef add(a, b):\n"),
    ],
)
def test_search_with_an_unclear_elision_is_refused_with_why(
    repo: Path, search: str, replace: str
) -> None:
    with pytest.raises(ApplyFailed, match=r"SEARCH holds `...`, which stands for lines left out"):
        applied(repo, elided(search, replace))
    assert (repo / "calc.py").read_text() == CALC


def test_a_whole_file_with_a_placeholder_comment_is_refused(repo: Path) -> None:
    reply = (
        "calc.py\n```python\n<<<<<<< FILE\ndef add(a, b):\n    return a + b\n\n"
        "# ... rest of the file unchanged ...\n>>>>>>> FILE\n```\n"
    )
    with pytest.raises(ApplyFailed, match="a placeholder for code left out"):
        applied(repo, reply)
    assert (repo / "calc.py").read_text() == CALC


def test_a_replace_with_a_placeholder_comment_is_refused(repo: Path) -> None:
    reply = (
        "calc.py\n```python\n<<<<<<< SEARCH\ndef add(a, b):\n    return a - b\n=======\n"
        "def add(a, b):\n    // ... existing code ...\n>>>>>>> REPLACE\n```\n"
    )
    with pytest.raises(ApplyFailed, match="placeholder"):
        applied(repo, reply)


def test_python_ellipsis_is_code_not_an_elision(repo: Path) -> None:
    reply = "calc.py\n<<<<<<< SEARCH\n    return a * b\n=======\n    ...\n>>>>>>> REPLACE\n"
    assert applied(repo, reply).endswith("def mul(a, b):\n    ...\n")


def test_trailing_whitespace_drift_applies(repo: Path) -> None:
    (repo / "calc.py").write_text(CALC.replace("a - b\n", "a - b   \n"))
    reply = (
        "calc.py\n```python\n<<<<<<< SEARCH\ndef add(a, b):  \n    return a - b\n=======\n"
        "def add(a, b):\n    return a + b\n>>>>>>> REPLACE\n```\n"
    )
    assert applied(repo, reply) == FIXED


def test_several_files_in_one_fence(repo: Path) -> None:
    reply = (
        "```\ncalc.py\n" + SEARCH_FIX + "tests/test_calc.py\n<<<<<<< SEARCH\nfrom calc import add\n"
        "=======\nfrom calc import add, mul\n>>>>>>> REPLACE\n```\n"
    )
    assert applied(repo, reply) == FIXED
    assert (repo / "tests" / "test_calc.py").read_text() == "from calc import add, mul\n"
    assert "several-files-per-fence" in describe_reply(reply).details


def test_a_crlf_reply_on_a_crlf_file(repo: Path) -> None:
    (repo / "calc.py").write_bytes(CALC.replace("\n", "\r\n").encode())
    reply = f"calc.py\n```python\n{SEARCH_FIX}```\n".replace("\n", "\r\n")
    apply_edits(repo, parse_edits(reply))
    assert (repo / "calc.py").read_bytes() == FIXED.replace("\n", "\r\n").encode()
    assert describe_reply(reply).details == ("crlf",)


def test_canonical_reply_has_no_details() -> None:
    shape = describe_reply(f"calc.py\n```python\n{SEARCH_FIX}```\n")
    assert (shape.kind, shape.details) == ("search-replace", ())


def test_read_only_files_are_refused_whatever_the_edit(repo: Path) -> None:
    test_file = "tests/test_calc.py"
    for reply in (
        f"{test_file}\n<<<<<<< SEARCH\nfrom calc import add\n=======\nadd = 1\n>>>>>>> REPLACE\n",
        f"<<<<<<< DELETE {test_file}\n",
        f"<<<<<<< RENAME calc.py -> {test_file}\n",
        f"--- a/{test_file}\n+++ /dev/null\n@@ @@\n-from calc import add\n",
    ):
        edits = parse_edits(f"calc.py\n{SEARCH_FIX}" + reply)
        with pytest.raises(ApplyFailed, match=f"Block 2 .*{test_file} may not be changed"):
            apply_edits(repo, edits, read_only=[test_file])
    assert (repo / test_file).read_text() == "from calc import add\n"
    assert (repo / "calc.py").read_text() == CALC  # all or nothing


def test_an_elided_piece_matching_two_places_is_refused(repo: Path) -> None:
    twice = "def add(a, b):\n    return a * b\n\n\ndef mul(a, b):\n    return a * b\n"
    (repo / "calc.py").write_text(twice)
    with pytest.raises(ApplyFailed, match="SEARCH holds `...`"):
        applied(repo, elided("    return a * b\n...\n", "    return b * a\n...\n"))
    assert (repo / "calc.py").read_text() == twice
