"""Stopping a reply early when it plainly is not what was asked.

A small or misconfigured local model asked for a plan may write thousands of tokens of anything
else, for minutes, before the reply cap cuts it. A caller that knows how a right reply begins
says so (`Expected`: what it is, the signs that show it, within how many tokens); the stream is
stopped once that many tokens came without any sign (`OffTrackReply`), and the tokens are
counted. Text inside <think>…</think> (a reasoning model's thoughts, where a server leaves them
in the reply) does not count: the answer comes after it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tui_engineer.llm.errors import ModelReplyError

CHARS_PER_TOKEN = 4  # the estimate used everywhere else (llm/usage.py)
CHECK_EVERY_CHARS = 64  # the reply is looked at again after this much more text
EXCERPT_CHARS = 60
_THINKING = re.compile(r"<think>.*?(?:</think>|\Z)", re.DOTALL)


@dataclass(frozen=True)
class Expected:
    """How a right reply shows itself early: `what` it is (for the user: "a plan"), any of
    `signs` (exact text) within `within_tokens` tokens of the reply's visible text."""

    what: str
    signs: tuple[str, ...]
    within_tokens: int


class OffTrackReply(ModelReplyError):
    """A reply stopped early: `tokens` of it came without a sign of what was asked."""

    def __init__(self, message: str, *, partial: str, tokens: int) -> None:
        super().__init__(message)
        self.partial = partial
        self.tokens = tokens


class ReplyWatch:
    """Watches one streamed reply for `expected`; `feed` each text piece as it arrives."""

    def __init__(self, expected: Expected) -> None:
        self.expected = expected
        self._parts: list[str] = []
        self._chars = 0
        self._checked_at = 0
        self._answer_from = 0  # the piece after the thinking (0: no thinking)
        self._on_track = False

    def feed(self, piece: str) -> bool:
        """True when the reply is off track: stop it."""
        if self._on_track:
            return False
        self._parts.append(piece)
        self._chars += len(piece)
        if self._chars - self._checked_at < CHECK_EVERY_CHARS:
            return False
        self._checked_at = self._chars
        visible = self.visible()
        if any(sign in visible for sign in self.expected.signs):
            self._on_track = True
            return False
        return self.tokens(visible) >= self.expected.within_tokens

    def visible(self) -> str:
        """The reply so far, without its thinking."""
        return _THINKING.sub("", "".join(self._parts))

    def tokens(self, visible: str) -> int:
        """Tokens of the visible text so far: the larger of the pieces streamed after any
        thinking (a piece is about a token) and chars / 4 (a model rambling in long runs of
        spaces streams few pieces of many characters)."""
        text = "".join(self._parts)
        if "<think>" in text:
            if "</think>" not in text:
                return 0  # still thinking: no answer yet
            if not self._answer_from:
                self._answer_from = len(self._parts)
        pieces = len(self._parts) - self._answer_from
        return max(pieces, len(visible) // CHARS_PER_TOKEN)

    def off_track(self, model: str) -> OffTrackReply:
        """The error for a reply stopped early, naming what was asked and how it began."""
        visible = self.visible()
        tokens = self.tokens(visible)
        began = " ".join(visible.split())[:EXCERPT_CHARS]
        return OffTrackReply(
            f"The reply from {model} was not {self.expected.what}: {tokens} tokens in, it had "
            f"no sign of one, so it was stopped there (it began: \"{began}…\").",
            partial=visible,
            tokens=tokens,
        )
