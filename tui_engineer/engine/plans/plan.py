"""The plan: steps the model proposes, parsed from a fenced JSON block and validated.

The schema is a public contract documented in docs/protocol.md ("Plans").
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace

from tui_engineer.engine.events import StepInfo
from tui_engineer.engine.plans.step_graph import dependencies
from tui_engineer.llm.reply_watch import Expected

_FENCE = re.compile(r"```(?:json)?[ \t]*\r?\n(.*?)\r?\n[ \t]*```", re.DOTALL)
MAX_STEPS = 12
NO_PLAN = 'No plan found: reply with one ```json block holding {"steps": [...]}.'
# How a plan reply shows itself early: its JSON (a fence, or the "steps" key) within this many
# tokens, else it is stopped there. Real models open the block within a few dozen tokens; a
# model that wrote 200 without one is writing something else (gemma3-270m rambled on for
# 19,000). Thinking (<think>…</think>) does not count.
PLAN_SIGN_TOKENS = 200
# The plan is whole once its block closed and this many tokens of talk followed with no new
# block: the same model copied the prompt's example plan, then talked on to the reply cap.
PLAN_TAIL_TOKENS = 200
# A sign only where a line starts: a small model writes our own "reply with one ```json block
# holding {"steps": [...]}" back inside its prose, and went on for 2,000 tokens unstopped. The
# signs: a ```json fence, a line opening with the "steps" key, a bare fence opening an object,
# or a reply that is an object (a plan on one line may name "steps" after 200 tokens of "goal").
PLAN_SHOWS = Expected(
    "a plan",
    (),
    PLAN_SIGN_TOKENS,
    sign_line=r'^[ \t]*(?:```[ \t]*(?i:json)|\{?[ \t]*"steps"[ \t]*:|```[ \t]*\r?\n[ \t]*\{)'
    r"|\A\s*\{",
    closed_by=r"^[ \t]*```[ \t]*$",
    tail_tokens=PLAN_TAIL_TOKENS,
)


class PlanError(Exception):
    """The model's plan is unusable; the message is written for the model to correct it."""


@dataclass
class Step:
    index: int
    title: str
    description: str = ""
    files: list[str] = field(default_factory=list)  # what it changes
    reads: list[str] = field(
        default_factory=list
    )  # what it needs as it is (engine/plans/step_graph.py)
    verify: str = ""
    depends_on: list[int] = field(default_factory=list)
    # The step adds behaviour: its test is written first and must fail on the old code.
    test_first: bool = False
    asked: str = ""  # the human's words it was planned from ("what is still wrong?")
    # Tests red on the starting commit it is to make pass: it passes only when they do.
    fixes: list[str] = field(default_factory=list)
    status: str = "pending"  # pending | proposing | testing | review | accepted | skipped | failed
    commit: str | None = None

    def info(self) -> StepInfo:
        return StepInfo(
            index=self.index,
            title=self.title,
            description=self.description,
            files=tuple(self.files),
            reads=tuple(self.reads),
            verify=self.verify,
            depends_on=tuple(self.depends_on),
            test_first=self.test_first,
            asked=self.asked,
            fixes=tuple(self.fixes),
        )

    @classmethod
    def from_info(cls, info: StepInfo, status: str = "pending", commit: str | None = None) -> Step:
        """The step again from what its events said (a resumed session's plan): `info`'s inverse."""
        said = asdict(info)
        said["files"], said["depends_on"] = list(info.files), list(info.depends_on)
        said["reads"] = list(info.reads)
        said.pop("after", None)  # derived from the plan again (engine/plans/step_graph.py)
        said["fixes"] = list(info.fixes)
        return cls(**said, status=status, commit=commit)


def infos(plan: Sequence[Step]) -> tuple[StepInfo, ...]:
    """The plan as its events say it, each step with the earlier ones it waits for."""
    after = dependencies(plan)
    return tuple(replace(step.info(), after=after[step.index]) for step in plan)


def _json_candidates(reply: str) -> list[str]:
    blocks = _FENCE.findall(reply)
    stripped = reply.strip()
    if stripped.startswith("{"):
        blocks.append(stripped)
    return blocks


def _str_list(raw: object, where: str) -> list[str]:
    if raw is None:
        return []
    if not isinstance(raw, list) or not all(isinstance(x, str) for x in raw):
        raise PlanError(f"{where} must be a list of strings")
    return list(raw)


def _parse_step(raw: object, number: int, first_index: int) -> Step:
    where = f"steps[{number - 1}]"
    if not isinstance(raw, dict):
        raise PlanError(f"{where} must be an object with at least a 'title'")
    title = raw.get("title")
    if not isinstance(title, str) or not title.strip():
        raise PlanError(f"{where}.title must be a non-empty string")
    deps = raw.get("depends_on") or []
    if not isinstance(deps, list) or not all(isinstance(d, int) for d in deps):
        raise PlanError(f"{where}.depends_on must be a list of step numbers (integers)")
    if any(d < 1 or d >= number for d in deps):
        raise PlanError(f"{where}.depends_on may only name earlier steps (1..{number - 1})")
    test_first = raw.get("test_first", False)
    if not isinstance(test_first, bool):
        raise PlanError(f"{where}.test_first must be true or false")
    return Step(
        index=first_index + number - 1,
        title=title.strip()[:120],
        description=str(raw.get("description") or raw.get("changes") or ""),
        files=_str_list(raw.get("files"), f"{where}.files"),
        reads=_str_list(raw.get("reads"), f"{where}.reads"),
        verify=str(raw.get("verify") or ""),
        depends_on=[first_index + d - 1 for d in deps],
        test_first=test_first,
        fixes=_str_list(raw.get("fixes"), f"{where}.fixes"),
    )


def parse_plan(reply: str, *, first_index: int = 1) -> list[Step]:
    """Parse the plan in a model reply. Raises PlanError with a message meant for the model."""
    candidates = _json_candidates(reply)
    if not candidates:
        raise PlanError(NO_PLAN)
    try:
        data = json.loads(candidates[-1])
    except json.JSONDecodeError as err:
        raise PlanError(f"The plan is not valid JSON: {err.msg} at line {err.lineno}") from None
    if not isinstance(data, dict) or not isinstance(data.get("steps"), list):
        raise PlanError('The plan must be an object with a "steps" list.')
    raw_steps = data["steps"]
    if not raw_steps:
        raise PlanError("The plan has no steps; give at least one.")
    if len(raw_steps) > MAX_STEPS:
        raise PlanError(
            f"The plan has {len(raw_steps)} steps; merge them into at most {MAX_STEPS}."
        )
    return [_parse_step(raw, n, first_index) for n, raw in enumerate(raw_steps, start=1)]


_FIXES_TAIL = re.compile(r"\s*\[fixes:\s*([^\]]*)\]\s*$")


def edit_line(step: Step) -> str:
    """A step as the plan editor shows it: its title, then `[fixes: id, …]` when it is to make
    tests that fail at the start pass (the human may change or remove that part)."""
    return step.title + (f"  [fixes: {', '.join(step.fixes)}]" if step.fixes else "")


def read_edit_line(line: str) -> tuple[str, list[str]]:
    """`edit_line`'s inverse: (title, fixes)."""
    found = _FIXES_TAIL.search(line)
    if found is None:
        return line.strip(), []
    fixes = [f.strip() for f in found.group(1).split(",") if f.strip()]
    return line[: found.start()].strip(), fixes


def single_step(request: str, index: int = 1, *, asked: str = "") -> Step:
    """The whole request as one step (`--no-plan`, or feedback turned into work: titled from
    the human's words `asked`, not from the prompt wrapped around them)."""
    words = asked.strip() or request.strip()
    title = words.splitlines()[0] if words else "Requested change"
    return Step(index=index, title=cut_at_word(title, 72), description=request.strip())


def cut_at_word(text: str, limit: int) -> str:
    """`text` within `limit` characters, cut after a whole word (and its punctuation) with an
    ellipsis: "add a flag; fix …", never "add a flag; fi" or "...; fix ". A single word longer
    than `limit` is cut where it must be."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    head = text[: limit - 1]
    whole = head.rsplit(" ", 1)[0] if text[limit - 1] != " " and " " in head else head
    return whole.rstrip(" ;,:-") + "…"
