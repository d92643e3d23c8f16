"""The plan and the steps it holds."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from tui_engineer.engine.events.base import Event


@dataclass(frozen=True)
class StepInfo:
    index: int
    title: str
    description: str
    files: tuple[str, ...]
    verify: str
    depends_on: tuple[int, ...]
    test_first: bool = False  # its test is written first and must fail on the old code
    asked: str = ""  # the human's words it was planned from ("what is still wrong?")
    # Tests red on the starting commit that it is to make pass (verify/targets.py).
    fixes: tuple[str, ...] = ()
    reads: tuple[str, ...] = ()  # files it needs as they are (files: those it changes)
    # The earlier steps it waits for: depends_on and the files (engine/plans/step_graph.py).
    after: tuple[int, ...] = ()

    @property
    def listed(self) -> str:
        """How a plan list names it: "Add sub (test first)", "Fix add (fixes test_add)"."""
        fixes = f" (fixes {', '.join(f.rsplit('::', 1)[-1] for f in self.fixes)})"
        return (
            self.title
            + (" (test first)" if self.test_first else "")
            + (fixes if self.fixes else "")
        )


@dataclass(frozen=True)
class PlanReady(Event):
    type: ClassVar[str] = "plan_ready"
    steps: tuple[StepInfo, ...]


@dataclass(frozen=True)
class StepStarted(Event):
    type: ClassVar[str] = "step_started"
    index: int
    title: str
