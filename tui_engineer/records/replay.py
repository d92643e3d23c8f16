"""Replay a recorded run: the model's replies come from the record, in order, not from a server."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from tui_engineer.errors import UserError
from tui_engineer.llm import CallUsage, ModelReplyError, UsageLedger
from tui_engineer.records.recorder import read_record

if TYPE_CHECKING:  # the client module loads the openai SDK: not on every start-up's path
    from tui_engineer.llm import Completion


class ReplayModel:
    def __init__(self, path: Path) -> None:
        if not path.is_file():
            raise UserError(f"--replay: no such record file: {path}")
        events = read_record(path)
        self._replies = [e for e in events if e.get("type") == "model_exchange"]
        if not self._replies:
            raise UserError(f"--replay: {path} holds no model replies to replay")
        started = next((e for e in events if e.get("type") == "session_started"), {})
        self.model = str(started.get("model") or "replay")
        self.request = str(started.get("request") or "")
        self.ledger = UsageLedger()
        self._next = 0

    async def complete(
        self,
        messages: list[dict[str, str]],
        *,
        on_text: Callable[[str], None] | None = None,
        **_: object,
    ) -> Completion:
        if self._next >= len(self._replies):
            raise ModelReplyError(
                f"The recording has no reply for model call {self._next + 1}: "
                "the session went differently from the recorded one."
            )
        recorded = self._replies[self._next]
        self._next += 1
        text = str(recorded["reply"])
        if on_text is not None:
            on_text(text)
        usage = CallUsage(
            prompt_tokens=int(recorded.get("prompt_tokens") or 0),
            completion_tokens=int(recorded.get("completion_tokens") or 0),
            usd=recorded.get("usd"),  # type: ignore[arg-type]
        )
        self.ledger.add(usage)
        from tui_engineer.llm import Completion

        return Completion(
            text=text,
            finish_reason=str(recorded.get("finish_reason") or "stop"),
            usage=usage,
            model=self.model,
        )

    async def aclose(self) -> None:
        return None
