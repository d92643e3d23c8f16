"""Which step a chat message concerns, decided when it is sent while a step is under review (or
being made) and the next one is prepared ahead. Nothing asks the model: a plain rule the user can
predict (docs/tui.md, "Chat while a step is prepared ahead").

The message concerns the step prepared ahead when it names it: "step 3" (its number), a word of
its title that the current step's title lacks ("mul" in "Add mul" beside "Add sub"), or a file
only it touches (its path or file name). Otherwise it concerns the current step: it goes with
that step's next model call, and the step prepared ahead is not touched.
"""

from __future__ import annotations

import re

from tui_engineer.engine.plans.plan import Step

# Words a title shares with any other: naming one says nothing about which step is meant.
_COMMON = frozenset(
    "a an and the to of for in on at by with from into onto as is are be it its this that "
    "add adds make use new all not but or so up out step steps test tests code file files "
    "fix update change".split()
)


def _words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9_]+", text.lower()) if len(w) >= 3 and w not in _COMMON}


def _names_number(text: str, index: int) -> bool:
    return re.search(rf"\bstep\s*#?\s*{index}\b", text, re.IGNORECASE) is not None


def _names_file(text: str, path: str) -> bool:
    lowered, name = text.lower(), path.rsplit("/", 1)[-1].lower()
    if path.lower() in lowered:
        return True
    return re.search(rf"(?<![\w/.]){re.escape(name)}\b", lowered) is not None


def about_step_ahead(text: str, current: Step, ahead: Step) -> bool:
    """Whether `text`, sent while `current` is worked on or reviewed, concerns `ahead` (the step
    prepared meanwhile) rather than `current`."""
    if _names_number(text, ahead.index):
        return True
    if _names_number(text, current.index):
        return False
    if _words(text) & (_words(ahead.title) - _words(current.title)):
        return True
    only_ahead = set(ahead.files) - set(current.files)
    return any(_names_file(text, path) for path in only_ahead)


def restarted_line(step: int) -> str:
    """What a front end says when a chat message named the step prepared ahead (one wording)."""
    return (
        f"Your message names step {step}, prepared ahead: it is being prepared again with it "
        "now (a message that does not name it stays with the step under review)."
    )
