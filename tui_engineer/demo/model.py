"""The demo's model: fixed rules, no network, no weights. It reads the engine's prompts the way
a real model would (what kind of call, which step, any reject reason or chat message) and
answers in the plan and edit formats, so every key of the TUI has something to act on:
step "Add sub" is test-first when the plan prompt asks for such steps (its new test fails on the
old code, then passes with the change), step "Add mul" fails its tests once (diagnosed, then
fixed) and slips in a stray line (pytest.ini: warnings hidden) a reviewer drops, a reject
reason gets a different proposal that quotes it, and "what is still wrong?" plans a new
step."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

Message = dict[str, str]

CALC = "calc.py"
TESTS = "tests/test_calc.py"
# Edits are anchored on the sample's first function, which no step changes: any order of
# accepted, rejected and skipped steps still applies cleanly.
CALC_ANCHOR = "def add(a, b):\n    return a + b\n"
TEST_ANCHOR = "def test_add():\n    assert add(2, 3) == 5\n"
BUGGY_MUL = "    return a + b  # copied from add\n"
# A change nobody asked for, in a hunk of its own: the demo's review has a line to drop
# (space on its hunk), as a reviewer would.
STRAY_LINE = (
    "pytest.ini\n```ini\n<<<<<<< SEARCH\naddopts = -q\n=======\n"
    "addopts = -q -p no:warnings\n>>>>>>> REPLACE\n```\n"
)


def _edit(path: str, search: str, replace: str) -> str:
    return f"{path}\n```python\n<<<<<<< SEARCH\n{search}=======\n{replace}>>>>>>> REPLACE\n```\n"


def _function(name: str, body: str, checks: str) -> str:
    """Edits adding `name` to calc.py and its test to tests/test_calc.py."""
    code = _edit(CALC, CALC_ANCHOR, f"{CALC_ANCHOR}\n\ndef {name}(a, b):\n{body}")
    test = f"{TEST_ANCHOR}\n\ndef test_{name}():\n    from calc import {name}\n\n{checks}"
    return code + _edit(TESTS, TEST_ANCHOR, test)


# The engine's plan prompt has this line when the test_first setting is on
# (engine/prompts.py TEST_FIRST_PLAN): only then does the demo mark a step test-first.
ASKS_TEST_FIRST = "Test-first: mark a step"


# …and the step's prompt this one for a step the plan marked test-first (TEST_FIRST_STEP).
ASKS_TEST_FIRST_STEP = "This step is test-first."
_TEST_FIRST_NOTE = (
    "Test first: `test_{name}` imports `{name}`, so it fails on the old code (there is no "
    "`{name}` yet) and passes with the change.\n\n"
)


def _name(title: str) -> str:
    """The function a step title names ("Add sub" → "sub")."""
    return title.split()[-1].lower() if title.split() else "it"


def _plan(*steps: tuple[str, str] | tuple[str, str, bool]) -> str:
    items: list[dict[str, object]] = []
    for title, description, *first in steps:
        item: dict[str, object] = {
            "title": title,
            "description": description,
            "files": [CALC, TESTS],
            "verify": "tests/test_calc.py",
        }
        if first and first[0]:
            item["verify"] = "a new test, written first: it fails on the old code, passes after"
            item["test_first"] = True
        items.append(item)
    return "Here is my plan.\n\n```json\n" + json.dumps({"steps": items}, indent=1) + "\n```\n"


def reply(messages: Sequence[Message]) -> str:
    """The demo model's answer to one chat-completion call."""
    system = messages[0]["content"] if messages else ""
    first_user = next((m["content"] for m in messages if m["role"] == "user"), "")
    if system.startswith("You diagnose"):
        return _diagnosis(first_user)
    if first_user.startswith("Request from the human:"):
        return _planned(first_user)
    recent = _since_last_reply(messages)
    heard = _chat_messages(recent)
    step = re.search(r"^Now do step \d+: (.+)$", first_user, re.MULTILINE)
    title = step.group(1).strip() if step else "the request"
    if any(m["content"].startswith("The tests failed after your change") for m in recent):
        return heard + _fix(title)
    reason = _reject_reason(first_user)
    first = _TEST_FIRST_NOTE.format(name=_name(title)) if ASKS_TEST_FIRST_STEP in first_user else ""
    return heard + first + _proposal(title, reason)


def _planned(prompt: str) -> str:
    if "still wrong" in prompt:
        said = prompt.split("still wrong:", 1)[-1].strip().splitlines()[0][:120]
        return _plan(("Add div", f"Division that refuses zero, for what you said: {said}"))
    # Only step 1 is test-first (a real model might mark both): the plan then shows the mark
    # beside a step without it, and step 2 keeps its plain fail-diagnose-fix loop. Not when the
    # repo map shows a `sub` already (a rerun): its test would pass on the old code.
    has_sub = re.search(r"\bdef sub\b|\bdefines sub\b", prompt)
    return _plan(
        (
            "Add sub",
            "A `sub(a, b)` function in calc.py, with a test.",
            ASKS_TEST_FIRST in prompt and not has_sub,
        ),
        ("Add mul", "A `mul(a, b)` function in calc.py, with a test."),
    )


def _proposal(title: str, reason: str) -> str:
    name = title.lower()
    if "sub" in name:
        if reason:
            return (
                f"You said: “{reason}”. This version documents `sub` and checks a negative "
                "result too.\n\n"
                + _function(
                    "sub",
                    '    """a minus b."""\n    return a - b\n',
                    "    assert sub(5, 3) == 2\n    assert sub(3, 5) == -2\n",
                )
            )
        return "Adding `sub` with a test.\n\n" + _function(
            "sub", "    return a - b\n", "    assert sub(5, 3) == 2\n"
        )
    if "mul" in name:
        body = "    return a * b\n" if reason else BUGGY_MUL
        said = f"You said: “{reason}”. Writing `mul` afresh.\n\n" if reason else ""
        return (
            said
            + "Adding `mul` with a test, and quieting pytest's warnings while I am at it.\n\n"
            + _function("mul", body, "    assert mul(4, 3) == 12\n")
            + STRAY_LINE
        )
    if "div" in name:
        return "Adding `div`, which refuses to divide by zero.\n\n" + _function(
            "div",
            '    if b == 0:\n        raise ZeroDivisionError("div: b must not be 0")\n'
            "    return a / b\n",
            "    import pytest\n\n    assert div(6, 3) == 2\n"
            "    with pytest.raises(ZeroDivisionError):\n        div(1, 0)\n",
        )
    slug = re.sub(r"[^a-z0-9]+", "-", name).strip("-") or "step"
    return f"A note for “{title}” (the demo model only knows calc.py).\n\n" + _edit(
        f"notes/{slug}.md", "", f"# {title}\n\n{reason or 'Written by the demo model.'}\n"
    )


def _diagnosis(prompt: str) -> str:
    if "mul" in prompt:
        return (
            "`test_mul` fails: `mul` returns `a + b` (copied from `add`), so `mul(4, 3)` "
            "gives 7, not 12."
        )
    return "A test fails after the change; the traceback above names the line."


def _fix(title: str) -> str:
    if "mul" in title.lower():
        return "Multiply instead of adding.\n\n" + _edit(CALC, BUGGY_MUL, "    return a * b\n")
    return "I have no better idea for this step; please reject it with a hint."


def _reject_reason(prompt: str) -> str:
    marker = "The human rejected an earlier proposal for this step. Their reason:\n"
    if marker not in prompt:
        return ""
    return prompt.rsplit(marker, 1)[1].split("\n\n", 1)[0].strip()


def _since_last_reply(messages: Sequence[Message]) -> list[Message]:
    """The messages that came after the model's last reply (what this call answers)."""
    last = max((i for i, m in enumerate(messages) if m["role"] == "assistant"), default=-1)
    return list(messages[last + 1 :])


def _chat_messages(messages: Sequence[Message]) -> str:
    """An acknowledgement of chat messages the engine delivered with this call."""
    prefix = "Message from the human, sent while you were working:\n"
    said = [m["content"][len(prefix) :] for m in messages if m["content"].startswith(prefix)]
    return f"Noted: “{said[-1].strip()}”.\n\n" if said else ""
