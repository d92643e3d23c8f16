"""A model's answer that a failing test is not its step's to fix (docs/protocol.md).

A test red on the starting commit that the step's change runs through is the step's to make pass
(engine/steps/reach.py). When the model judges that it is not (the test checks something else, the
step only documents the code), it says so on a line of its own:

    NOT THIS STEP'S: tests/test_calc.py::test_add: the step adds a docstring; add's bug is another

The step is then judged without that test, which the human sees as still failing, beside the
model's reason; the reason goes in the commit body. Never a way out of a test the step broke:
only a test that failed before the session can be disowned."""

from __future__ import annotations

import re

# The marker, then the test id, then ": " and the reason. Ids hold "::" and spaces (node's
# `file > name`), so the id ends at the last ": " that is not part of "::".
_LINE = re.compile(r"^\s*(?:[-*]\s*)?NOT THIS STEP(?:'|’)?S\s*:\s*(?P<rest>.+?)\s*$", re.M)
_SPLIT = re.compile(r"(?<!:):\s+(?!:)")


def parse_disowned(reply: str) -> dict[str, str]:
    """{test id: reason} for each NOT THIS STEP'S line of `reply` (a reason may be empty)."""
    found: dict[str, str] = {}
    for match in _LINE.finditer(reply):
        rest = match.group("rest").strip().strip("`")
        parts = _SPLIT.split(rest, maxsplit=1)
        test_id = parts[0].strip().strip("`")
        reason = parts[1].strip() if len(parts) > 1 else ""
        if test_id:
            found[test_id] = reason
    return found
