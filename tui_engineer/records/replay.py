"""Replay a recorded run: the model's replies come from the record, in order, not from a server."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tui_engineer.errors import UserError
from tui_engineer.llm import CallUsage, ModelReplyError, UsageLedger
from tui_engineer.llm.reply_watch import NO_SIGN, Expected, OffTrackReply
from tui_engineer.records.recorder import read_record

if TYPE_CHECKING:  # the client module loads the openai SDK: not on every start-up's path
    from tui_engineer.llm import Completion


class ReplayModel:
    def __init__(self, path: Path) -> None:
        if not path.is_file():
            raise UserError(f"--replay: no such record file: {path}")
        events = read_record(path)
        self._replies = [e for e in events if _answered(e)]
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
        **kwargs: object,
    ) -> Completion:
        if self._next >= len(self._replies):
            raise ModelReplyError(
                f"The recording has no reply for model call {self._next + 1}: "
                "the session went differently from the recorded one."
            )
        recorded = self._replies[self._next]
        self._next += 1
        if recorded.get("type") == "model_call_failed":
            raise self._stopped(recorded, on_text, kwargs.get("expect"))
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

    def _stopped(
        self, recorded: dict[str, Any], on_text: Callable[[str], None] | None, expect: object
    ) -> OffTrackReply:
        """The stop the session met at this call, met again: its partial reply streams, then
        the same OffTrackReply the reply watch raised."""
        partial = str(recorded.get("partial_reply") or "")
        if on_text is not None and partial:
            on_text(partial)
        tokens = int(recorded.get("completion_tokens") or 0)
        self.ledger.add(
            CallUsage(
                prompt_tokens=int(recorded.get("prompt_tokens") or 0),
                completion_tokens=tokens,
                usd=None,
                estimated=True,
            )
        )
        return OffTrackReply(
            str(recorded.get("error") or "The reply was stopped."),
            partial=partial,
            tokens=tokens,
            reason=str(recorded.get("stop_reason") or NO_SIGN),
            what=expect.what if isinstance(expect, Expected) else "",
        )

    async def aclose(self) -> None:
        return None


def _answered(event: dict[str, Any]) -> bool:
    """A model call the record answers: a reply, or a reply our watch stopped (a failed call of
    another kind ended the session, or was asked again and recorded then)."""
    kind = event.get("type")
    return kind == "model_exchange" or (kind == "model_call_failed" and bool(event.get("stopped")))
