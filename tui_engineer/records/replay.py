"""Replay a recorded run: the model's replies come from the record, in order, not from a server."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tui_engineer.base.errors import UserError
from tui_engineer.llm import BudgetExceeded, CallUsage, ModelReplyError, UsageLedger
from tui_engineer.llm.reply_watch import NO_SIGN, Expected, OffTrackReply
from tui_engineer.records.recorder import read_record

if TYPE_CHECKING:  # the client module loads the openai SDK: not on every start-up's path
    from tui_engineer.llm import Completion


class ReplayModel:
    def __init__(self, path: Path) -> None:
        if not path.is_file():
            raise UserError(f"--replay: no such record file: {path}")
        events = read_record(path)
        # The failed call the recorded run ended on, if any, and that end's outcome: the
        # replay enforces no budget, and meets no cut reply, so it ends there alike.
        self._ended, self._outcome = _ending_failure(events)
        self._replies = [e for e in events if _answered(e) or e is self._ended]
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
            raise self._ran_out()
        recorded = self._replies[self._next]
        self._next += 1
        if recorded.get("type") == "model_call_failed":
            if recorded.get("stopped"):
                raise self._stopped(recorded, on_text, kwargs.get("expect"))
            raise self._unusable(recorded, on_text)
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
        partial, tokens = self._partial(recorded, on_text)
        return OffTrackReply(
            str(recorded.get("error") or "The reply was stopped."),
            partial=partial,
            tokens=tokens,
            reason=str(recorded.get("stop_reason") or NO_SIGN),
            what=expect.what if isinstance(expect, Expected) else "",
        )

    def _unusable(
        self, recorded: dict[str, Any], on_text: Callable[[str], None] | None
    ) -> ModelReplyError | BudgetExceeded:
        """The call the session ended on, met again: its partial reply streams, then the same
        error, in the same words (a budget's, or an unusable reply's). A call a budget refused
        before it was made cost nothing, and counts nothing here."""
        if self._outcome != "budget" or recorded.get("partial_reply"):
            self._partial(recorded, on_text)
        return self._ending()

    def _ran_out(self) -> ModelReplyError | BudgetExceeded:
        """No reply left. Where the recorded run ended on a failed call, that end again: a step
        prepared ahead keeps its failed call to itself (never recorded) and is asked again in
        its turn, so in the replay the preparation takes the recorded failure and the turn
        finds none left."""
        if self._ended is not None:
            return self._ending()
        return ModelReplyError(
            f"The recording has no reply for model call {self._next + 1}: "
            "the session went differently from the recorded one."
        )

    def _ending(self) -> ModelReplyError | BudgetExceeded:
        """The error the recorded run ended on, in its words."""
        sentence = str((self._ended or {}).get("error") or "The reply was unusable.")
        if self._outcome == "budget":
            return _budget_exceeded(sentence)
        return ModelReplyError(sentence)

    def _partial(
        self, recorded: dict[str, Any], on_text: Callable[[str], None] | None
    ) -> tuple[str, int]:
        """A failed call's partial reply streamed again and counted (estimated, as it was):
        the text and its tokens."""
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
        return partial, tokens

    async def aclose(self) -> None:
        return None


def _answered(event: dict[str, Any]) -> bool:
    """A model call the record answers: a reply, or a reply our watch stopped (a failed call of
    another kind ended the session, see _ending_failure, or was asked again and recorded then)."""
    kind = event.get("type")
    return kind == "model_exchange" or (kind == "model_call_failed" and bool(event.get("stopped")))


def _ending_failure(events: list[dict[str, Any]]) -> tuple[dict[str, Any] | None, str]:
    """The failed call the recorded run ended on, when its reply was unusable (cut off by the
    token limit even after its continuations, cut at the context window, empty, filtered) or a
    budget ran out: a replay ends at that call with the same words, rather than running out of
    replies. Only the run's last part counts (from its last start): a failure a resume went on
    from was asked again. With it, the session's outcome ("" without it)."""
    failed: dict[str, Any] | None = None
    for event in _last_part(events):
        kind = event.get("type")
        if kind == "model_call_failed":
            failed = event
        elif kind == "session_finished" and _ended_on(failed, event):
            return failed, str(event.get("outcome"))
        elif kind == "session_finished":
            break
    return None, ""


_ENDS = ("failed", "budget")  # the outcomes of a ModelReplyError, of a BudgetExceeded


def _ended_on(failed: dict[str, Any] | None, end: dict[str, Any]) -> bool:
    """Whether the session ended (`end`) on `failed`, an unusable reply or a budget that ran
    out: its outcome one of _ENDS, its sentence the session's last (a stopped reply is
    answered already)."""
    if failed is None or failed.get("stopped"):
        return False
    return end.get("outcome") in _ENDS and failed.get("error") == end.get("message")


def _last_part(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The recorded run's last part: from its last start (a resume's), or all of it."""
    starts = [i for i, e in enumerate(events) if e.get("type") == "session_started"]
    return events[starts[-1] if starts else 0 :]


# Which budget a sentence of llm/usage.py's Budget is about, from its first word.
_BUDGET_NAMES = {"Token": "tokens", "Money": "usd", "Time": "wall_time"}


def _budget_exceeded(sentence: str) -> BudgetExceeded:
    """The recorded budget stop again, in its words: its amounts are in the sentence only."""
    name = _BUDGET_NAMES.get(sentence.split(" ", 1)[0], "tokens")
    return BudgetExceeded(sentence, budget=name, used=float("nan"), cap=float("nan"))
