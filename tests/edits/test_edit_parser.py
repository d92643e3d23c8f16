"""The edit protocol parser: what docs/protocol.md promises it accepts, and precise errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from tui_engineer.edits import (
    DeleteFile,
    ParseError,
    RenameFile,
    ReplyTooLarge,
    SearchReplace,
    WriteFile,
    edit_format_instructions,
    parse_edits,
)

OLD_NEW = "<<<<<<< SEARCH\nold line\n=======\nnew line\n>>>>>>> REPLACE\n"
CALC_EDIT = SearchReplace("calc.py", "old line\n", "new line\n")

ACCEPTED = {
    "plain": (f"calc.py\n```python\n{OLD_NEW}```\n", [CALC_EDIT]),
    "prose around": (
        f"I will rename the variable.\n\ncalc.py\n```python\n{OLD_NEW}```\n\nThat's all, "
        "tests should pass now.\n",
        [CALC_EDIT],
    ),
    "no language tag": (f"calc.py\n```\n{OLD_NEW}```\n", [CALC_EDIT]),
    "tilde fence": (f"calc.py\n~~~\n{OLD_NEW}~~~\n", [CALC_EDIT]),
    "crlf": (f"calc.py\n```python\n{OLD_NEW}```\n".replace("\n", "\r\n"), [CALC_EDIT]),
    "backticked path": (f"`calc.py`\n```python\n{OLD_NEW}```\n", [CALC_EDIT]),
    "bold path with colon": (f"**calc.py**:\n```python\n{OLD_NEW}```\n", [CALC_EDIT]),
    "bold backticked path": (f"**`calc.py`**\n```python\n{OLD_NEW}```\n", [CALC_EDIT]),
    "trailing colon": (f"calc.py:\n```python\n{OLD_NEW}```\n", [CALC_EDIT]),
    "leading ./": (f"./calc.py\n```python\n{OLD_NEW}```\n", [CALC_EDIT]),
    "blank line before fence": (f"calc.py\n\n```python\n{OLD_NEW}```\n", [CALC_EDIT]),
    "path inside fence": (f"```python\ncalc.py\n{OLD_NEW}```\n", [CALC_EDIT]),
    "no fence at all": (f"calc.py\n{OLD_NEW}", [CALC_EDIT]),
    "backticked path with space": (
        f"`docs/my notes.md`\n```\n{OLD_NEW}```\n",
        [SearchReplace("docs/my notes.md", "old line\n", "new line\n")],
    ),
    "two pairs in one fence": (
        f"calc.py\n```python\n{OLD_NEW}\n<<<<<<< SEARCH\nb\n=======\nc\n>>>>>>> REPLACE\n```\n",
        [CALC_EDIT, SearchReplace("calc.py", "b\n", "c\n")],
    ),
    "two files": (
        f"calc.py\n```python\n{OLD_NEW}```\nThen:\n\nsrc/util.py\n```python\n{OLD_NEW}```\n",
        [CALC_EDIT, SearchReplace("src/util.py", "old line\n", "new line\n")],
    ),
    "second path inside the same fence": (
        f"calc.py\n```\n{OLD_NEW}util.py\n{OLD_NEW}```\n",
        [CALC_EDIT, SearchReplace("util.py", "old line\n", "new line\n")],
    ),
    "indentation and blank lines kept": (
        "calc.py\n```\n<<<<<<< SEARCH\n    x = 1\n\n    y = 2\n=======\n    z = 3\n"
        ">>>>>>> REPLACE\n```\n",
        [SearchReplace("calc.py", "    x = 1\n\n    y = 2\n", "    z = 3\n")],
    ),
    "empty replace deletes lines": (
        "calc.py\n```\n<<<<<<< SEARCH\ngone\n=======\n>>>>>>> REPLACE\n```\n",
        [SearchReplace("calc.py", "gone\n", "")],
    ),
    "create via empty search": (
        "new/mod.py\n```python\n<<<<<<< SEARCH\n=======\nVALUE = 1\n>>>>>>> REPLACE\n```\n",
        [SearchReplace("new/mod.py", "", "VALUE = 1\n")],
    ),
    "whole file": (
        "pkg/__init__.py\n```python\n<<<<<<< FILE\n'''Doc.'''\n\n# ======= not a marker here\n"
        "=======\n>>>>>>> FILE\n```\n",
        [WriteFile("pkg/__init__.py", "'''Doc.'''\n\n# ======= not a marker here\n=======\n")],
    ),
    "empty whole file": (
        "empty.txt\n```\n<<<<<<< FILE\n>>>>>>> FILE\n```\n",
        [WriteFile("empty.txt", "")],
    ),
    "delete": ("Remove it:\n<<<<<<< DELETE old/thing.py\n", [DeleteFile("old/thing.py")]),
    "delete backticked": ("<<<<<<< DELETE `old/thing.py`\n", [DeleteFile("old/thing.py")]),
    "rename": (
        "<<<<<<< RENAME src/a.py -> src/b.py\n",
        [RenameFile("src/a.py", "src/b.py")],
    ),
    "rename inside a fence": (
        "```\n<<<<<<< RENAME `a.py` -> `b.py`\n```\n",
        [RenameFile("a.py", "b.py")],
    ),
    "markers with 9 chevrons and no space": (
        "calc.py\n```\n<<<<<<<<<SEARCH\nold line\n=========\nnew line\n>>>>>>>>>REPLACE\n```\n",
        [CALC_EDIT],
    ),
    "fence inside replacement text": (
        "README.md\n````\n<<<<<<< SEARCH\nold line\n=======\n```sh\nmake\n```\n"
        ">>>>>>> REPLACE\n````\n",
        [SearchReplace("README.md", "old line\n", "```sh\nmake\n```\n")],
    ),
    "mixed kinds in order": (
        f"<<<<<<< RENAME a.py -> b.py\nb.py\n```\n{OLD_NEW}```\n<<<<<<< DELETE c.py\n",
        [
            RenameFile("a.py", "b.py"),
            SearchReplace("b.py", "old line\n", "new line\n"),
            DeleteFile("c.py"),
        ],
    ),
}


@pytest.mark.parametrize("reply, expected", ACCEPTED.values(), ids=ACCEPTED.keys())
def test_accepted_forms_parse_to_the_expected_edits(reply: str, expected: list[object]) -> None:
    assert parse_edits(reply) == expected


NO_EDITS = {
    "empty": "",
    "prose only": "I think the bug is in calc.py, line 3: `return a - b`.",
    "code without markers": "calc.py\n```python\ndef add(a, b):\n    return a + b\n```\n",
    "setext heading underline": "Summary\n=======\n\nAll good.",
}


@pytest.mark.parametrize("reply", NO_EDITS.values(), ids=NO_EDITS.keys())
def test_reply_without_edit_blocks_gives_no_edits(reply: str) -> None:
    assert parse_edits(reply) == []


MALFORMED = {
    "missing divider": (
        "calc.py\n```\n<<<<<<< SEARCH\nold\n>>>>>>> REPLACE\n```\n",
        ["Block 1 (calc.py)", "missing the `=======` line", "REPLACE marker came first"],
    ),
    "missing replace marker at end": (
        "calc.py\n```\n<<<<<<< SEARCH\nold\n=======\nnew\n```\n",
        ["Block 1 (calc.py)", "missing the closing `>>>>>>> REPLACE`", "cut off"],
    ),
    "missing replace marker before next block": (
        f"calc.py\n```\n<<<<<<< SEARCH\nold\n=======\nnew\n```\nb.py\n```\n{OLD_NEW}```\n",
        ["Block 1 (calc.py)", "missing the closing `>>>>>>> REPLACE`", "`<<<<<<< SEARCH` came"],
    ),
    "second block malformed": (
        f"calc.py\n```\n{OLD_NEW}```\nutil.py\n```\n<<<<<<< SEARCH\nx\n```\n",
        ["Block 2 (util.py)", "missing the `=======` line", "reply ended"],
    ),
    "missing file end": (
        "a.py\n```\n<<<<<<< FILE\nx = 1\n```\n",
        ["Block 1 (a.py)", "missing the closing `>>>>>>> FILE`"],
    ),
    "no path at all": (
        f"```python\n{OLD_NEW}```\n",
        ["Block 1: no file path", "just before the opening ``` fence"],
    ),
    "prose where the path should be": (
        f"Here is the change:\n```python\n{OLD_NEW}```\n",
        ["Block 1: no file path", "`Here is the change:`, which is not a file path"],
    ),
    "replace marker without search": (
        "calc.py\n```\nnew\n>>>>>>> REPLACE\n```\n",
        ["Block 1", "`>>>>>>> REPLACE` without a matching opening marker"],
    ),
    "delete without path": ("<<<<<<< DELETE\n", ["Block 1", "DELETE needs the path"]),
    "rename without arrow": ("<<<<<<< RENAME a.py b.py\n", ["Block 1", "RENAME needs both"]),
}


@pytest.mark.parametrize("reply, phrases", MALFORMED.values(), ids=MALFORMED.keys())
def test_malformed_block_names_the_block_and_what_is_missing(
    reply: str, phrases: list[str]
) -> None:
    with pytest.raises(ParseError) as caught:
        parse_edits(reply)
    for phrase in phrases:
        assert phrase in caught.value.feedback
    assert str(caught.value) == caught.value.feedback


def test_reply_over_the_cap_is_refused_before_parsing() -> None:
    reply = "calc.py\n```\n<<<<<<< SEARCH\n" + "x" * 2_000 + "\n=======\ny\n>>>>>>> REPLACE\n```"
    with pytest.raises(ReplyTooLarge, match="over the 1,000-byte limit"):
        parse_edits(reply, max_reply_bytes=1_000)
    assert parse_edits(reply, max_reply_bytes=10_000)  # the same reply is fine under a bigger cap


def test_cap_counts_bytes_not_characters() -> None:
    reply = "é" * 600  # 1,200 bytes in UTF-8
    with pytest.raises(ReplyTooLarge):
        parse_edits(reply, max_reply_bytes=1_000)


def test_format_instructions_examples_parse_as_documented() -> None:
    """The prompt teaches the format with examples; each must parse into the edit it shows."""
    text = edit_format_instructions()
    edits = parse_edits(text)
    assert [type(e) for e in edits] == [SearchReplace, WriteFile, DeleteFile, RenameFile]
    assert edits[0].path == "path/to/file.py"
    assert edits[3] == RenameFile("path/to/old_name.py", "path/to/new_name.py")


def test_protocol_doc_examples_parse_as_documented() -> None:
    """Every example reply in docs/protocol.md parses to exactly the edits written under it."""
    doc = (Path(__file__).parents[2] / "docs" / "protocol.md").read_text(encoding="utf-8")
    names = {cls.__name__: cls for cls in (SearchReplace, WriteFile, DeleteFile, RenameFile)}
    examples = doc.split("<!-- example -->")[1:]
    assert len(examples) >= 6
    for example in examples:
        reply, _, rest = example.partition("<!-- parses to -->")
        reply = reply.strip().removeprefix("`````text\n").removesuffix("`````")
        expected = rest.split("<!-- end -->")[0].strip().removeprefix("```python").strip("`\n")
        assert parse_edits(reply) == eval(expected, names), reply  # noqa: S307 - our own doc
