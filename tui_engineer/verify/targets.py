"""Which of the tests red on the starting commit a step is meant to make pass.

"Fix add" with `test_add` red at the start is the most common request to a pair-programmer; if
that failure counted as "not the step's", a first attempt that fixes nothing would pass. A
step's targets are the old failures that:
- its plan entry lists under `fixes` (the model's plan, or the human's edit of it);
- its text names, by test id or test function (`test_add`), anywhere in the request or step;
- a fix request points at (it says fix, failing, broken, …): by the code its function is named
  for ("fix add" → `test_add`, `tests::adds`), or all of them ("make the failing tests pass").
Words are one signal, never the gate: what the step's change runs through is the step's too,
whatever the request says (engine/steps/reach.py). A word matching a test FILE's module points at
nothing: "optional() converters …" does not make every old failure of test_converters.py the
step's (attrs); the tests of that module the change runs through are reached anyway.
Every other old failure stays the repository's: shown apart, never blocking the step."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

_FIX_INTENT = re.compile(
    r"\b(fix\w*|repair\w*|broken|bug\w*|fail\w*|crash\w*|wrong|pass(es|ing)?|green|"
    r"regression\w*)\b",
    re.IGNORECASE,
)
_ALL_FAILING = re.compile(
    r"\b(failing|broken|red)\s+tests?\b|\btests?\s+(that\s+)?(are\s+)?(fail\w*|red|broken)\b|"
    r"\b(all|the)\s+tests?\s+(to\s+)?pass\b|\bfix\s+(the\s+|all\s+(the\s+)?)?tests\b",
    re.IGNORECASE,
)
# Words of a request that point at nothing: the fix's own vocabulary and English glue.
_PLAIN = frozenset(
    "fix fixes fixed fixing the a an and or of to in on for it its is are be this that with "
    "make makes pass passes passing test tests failing fails failure broken bug error wrong "
    "red green should must not so now again please function method file code when".split()
)
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True)
class StepAim:
    """What a step is about, for telling its old failures from the repository's."""

    text: str  # the request and the step (title, description, verify): names count anywhere
    pointing: str  # the words a fix request may point with (the step's own, or the request's)
    fixes: tuple[str, ...] = field(default=())  # the plan's `fixes` entries

    def targets(self, failing: Iterable[str]) -> frozenset[str]:
        """The ids in `failing` (red at the start) this step is meant to make pass."""
        failing = list(failing)
        named = {i for i in failing if names(i, self.text) or any(names(i, f) for f in self.fixes)}
        if fix_intent(self.pointing):
            if _ALL_FAILING.search(self.pointing):
                return frozenset(failing)
            words = _stems(self.pointing)
            named |= {i for i in failing if _parts(i) & words}
        return frozenset(named)


def fix_intent(text: str) -> bool:
    """Does `text` ask to fix something (fix, failing, broken, make … pass)?"""
    return bool(_FIX_INTENT.search(text))


def names(test_id: str, text: str) -> bool:
    """Does `text` name this test: its id, or its function's name as a word?"""
    if not text:
        return False
    name = _function(test_id)
    return test_id in text or bool(re.search(rf"(?<![\w.]){re.escape(name)}(?![\w])", text))


def _function(test_id: str) -> str:
    """`test_add` of `tests/test_calc.py::test_add[1]`, `adds` of `tests::adds`, a node test's
    name in words as it is."""
    name = test_id.split("[", 1)[0].split("::")[-1]
    return name if " " in name.strip() else re.split(r"[./]", name)[-1]


def _stem(word: str) -> str:
    word = word.lower()
    return word[:-1] if len(word) > 3 and word.endswith("s") else word


_AFFIX = re.compile(r"^(?:tests?_?)|(?:_?tests?)$", re.IGNORECASE)


def _core(name: str) -> str:
    """`add` of `test_add`, `testAdd`, `add_test`; `calc` of `test_calc`."""
    return _stem(_AFFIX.sub("", name))


def _stems(text: str) -> set[str]:
    """The request's identifiers, whole (`take_all` stays one), stemmed, glue words left out."""
    return {_core(w) for w in _WORD.findall(text) if len(w) >= 3 and w.lower() not in _PLAIN}


def _parts(test_id: str) -> set[str]:
    """What a fix request can point at this test by: the code its function is named for
    (`test_add` → add) or, for a test named in words (node, jest), those words. Never its file's
    module, a class or a word inside a longer name: "take's docstring" does not point at
    `test_simple_take`."""
    name = _function(test_id.split("[", 1)[0])
    parts = {_stem(w) for w in _WORD.findall(name) if len(w) >= 3 and w.lower() not in _PLAIN}
    if " " not in name:
        parts = {_core(name)}
    return {p for p in parts if len(p) >= 3}


def failures_for_model(
    lines: Sequence[tuple[str, str]], targets: frozenset[str], who: str = "This step"
) -> str:
    """The starting commit's failures as the model reads them: one line each, the step's first.
    '' when none failed. `who`: whose targets they are ("This step", "The request")."""
    if not lines:
        return ""
    mine = [(i, m) for i, m in lines if i in targets]
    others = [(i, m) for i, m in lines if i not in targets]
    out = ["Tests that fail on the starting commit, before any change:"]
    out += [f"- {i}: {m}" if m else f"- {i}" for i, m in (mine + others)[:30]]
    if len(lines) > 30:
        out.append(f"- ... and {len(lines) - 30} more")
    if mine:
        out.append(
            f"{who} is to make these pass (it passes only when they do): "
            + ", ".join(i for i, _ in mine)
        )
    if others:
        out.append(
            "The others are not this step's unless its change runs through them (the code "
            "they test): one it runs through must pass too."
        )
    return "\n".join(out)
