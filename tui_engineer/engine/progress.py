"""How far a session has come: its plan, the commits it made, the last accepted proposal and
whether anything was left undone. One object, held by the session (engine/session.py) and
handed to the parts that move it on (engine/reviews/decisions.py, engine/reviews/pair_review.py),
so that no
part reaches into another for the state they share."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tui_engineer.engine.plans.plan import Step
    from tui_engineer.engine.reviews.review import Proposal


@dataclass
class Progress:
    plan: list[Step] = field(default_factory=list)
    commits: list[str] = field(default_factory=list)
    # The proposal of the last step accepted in this session: its tests are the final run's.
    last_accepted: Proposal | None = None
    unfinished: bool = False  # a step was skipped, failed or undone, or the plan was cut short
