"""The bench's stand-in for the human: accepts passing steps like `--yes`, answers "what is
still wrong?" with the task's scripted follow-ups while the hidden tests fail, and gives the
run's verdict from the hidden tests."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from tui_engineer.bench.hidden import HiddenResult
from tui_engineer.engine.reviews.approval import AutoReviewer
from tui_engineer.engine.reviews.review import Decision, Proposal, Verdict


class BenchReviewer:
    def __init__(
        self, follow_ups: tuple[str, ...], evaluate: Callable[[], Awaitable[HiddenResult]]
    ) -> None:
        self._auto = AutoReviewer()
        self._pending = list(follow_ups)
        self._evaluate = evaluate
        self.follow_ups_used = 0
        self.ran = False  # set by the runner from the events before the verdict
        self.hidden: HiddenResult | None = None

    async def review(self, proposal: Proposal) -> Decision:
        return await self._auto.review(proposal)

    async def still_wrong(self) -> str | None:
        self.hidden = await self._evaluate()
        if self.hidden.passed or not self._pending:
            return None
        self.follow_ups_used += 1
        return self._pending.pop(0)

    async def verdict(self) -> Verdict | None:
        self.hidden = await self._evaluate()
        worked = self.hidden.passed
        return Verdict(
            ran=self.ran,
            worked=worked,
            perfect=worked and self.follow_ups_used == 0,
            comment=f"bench hidden tests: {self.hidden.summary}",
        )
