"""Stopping a reply early when it plainly is not what was asked.

A small or misconfigured local model asked for a plan may write thousands of tokens of anything
else, for minutes, before the reply cap cuts it. A caller that knows how a right reply begins
says so (`Expected`: what it is, the signs that show it, within how many tokens); the stream is
stopped (`OffTrackReply`, its tokens counted) once that many tokens came without any sign, or
as soon as the reply is plainly the prompt repeated back: gemma3-270m, a base model, answered a
plan request by copying the request, its example plan included (so the signs were there), over
and over until the window was full; or, before any sign, as soon as it plainly loops on its own
lines (the same model under a chat format it was not trained on). Where the expected part
closes (a plan's ```json block), the block is checked for an echo as soon as it closes (the same
model copied the prompt's example plan, then talked on), and the reply is whole once a bounded
tail of talk followed it: the stream ends there (`COMPLETE`), the rest is not waited for. Text
inside <think>…</think> (a reasoning model's thoughts, where a server leaves them in the reply)
does not count: the answer comes after it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from tui_engineer.llm.errors import ModelReplyError

CHARS_PER_TOKEN = 4  # the estimate used everywhere else (llm/usage.py)
CHECK_EVERY_CHARS = 64  # the reply is looked at again after this much more text
EXCERPT_CHARS = 60
# An echo: at least this many whole lines of the reply, this share of them copied from the
# prompt word for word. Lines shorter than ECHO_LINE_CHARS ("```json", "}") prove nothing.
ECHO_MIN_LINES = 3
ECHO_SHARE = 0.8
ECHO_LINE_CHARS = 12
# A loop: before any sign, at least this many whole long lines, this share of them repeating
# earlier lines of the reply itself. gemma3-270m under a chat format it was not trained on
# wrote its own distorted copy of the file listing again and again.
LOOP_MIN_LINES = 12
LOOP_SHARE = 0.5
WATCHED_TOKENS = 1000  # past this a reply that showed its sign is no longer looked at
_THINKING = re.compile(r"<think>.*?(?:</think>|\Z)", re.DOTALL)

ECHOED = "repeated the prompt back"
LOOPED = "kept repeating itself"
NO_SIGN = "no sign of one"
# What `ReplyWatch.feed` says: go on (""), stop the reply as off track, or end it as whole.
OFF_TRACK = "off track"
COMPLETE = "complete"


@dataclass(frozen=True)
class Expected:
    """How a right reply shows itself early: `what` it is (for the user: "a plan"), any of
    `signs` (exact text) or a line matching `sign_line` (a regex), within `within_tokens`
    tokens of the reply's visible text."""

    what: str
    signs: tuple[str, ...]
    within_tokens: int
    echo: bool = True  # a reply copying the prompt is off track (not for edits: SEARCH copies)
    sign_line: str = ""
    # A line closing the expected part after a sign (a plan's closing fence): what follows
    # it is talk, and the reply is whole after `tail_tokens` of it with no new sign.
    closed_by: str = ""
    tail_tokens: int = 0
    # Parts of the prompt a right reply may quote word for word (the human's words, the
    # repository's code): an echo copies the rest, the instructions around them.
    quotable: tuple[str, ...] = ()

    def shown_in(self, text: str) -> bool:
        """Whether `text` holds a sign of the expected reply."""
        if any(sign in text for sign in self.signs):
            return True
        return bool(self.sign_line) and re.search(self.sign_line, text, re.MULTILINE) is not None


class OffTrackReply(ModelReplyError):
    """A reply stopped early: `tokens` of it came, `reason` ECHOED, LOOPED or NO_SIGN."""

    def __init__(
        self, message: str, *, partial: str, tokens: int, reason: str, what: str = ""
    ) -> None:
        super().__init__(message)
        self.partial = partial
        self.tokens = tokens
        self.reason = reason
        self.what = what  # what was asked for: "a plan", "an edit"


class ReplyWatch:
    """Watches one streamed reply for `expected`; `feed` each text piece as it arrives.
    `prompt`: the texts the reply was asked with, to tell an echo of them."""

    def __init__(self, expected: Expected, prompt: Iterable[str] = ()) -> None:
        self.expected = expected
        self._prompt_lines = _lines(prompt) - _lines(expected.quotable)
        self._parts: list[str] = []
        self._chars = 0
        self._checked_at = 0
        self._answer_from = 0  # the piece after the thinking (0: no thinking)
        self._signed = False  # a sign of the expected reply came
        self._done = False  # watched long enough
        self.reason = ""

    def feed(self, piece: str) -> str:
        """OFF_TRACK when the reply is off track, COMPLETE when it is whole (stop it either
        way), else ""."""
        if self._done:
            return ""
        self._parts.append(piece)
        self._chars += len(piece)
        if self._chars - self._checked_at < CHECK_EVERY_CHARS:
            return ""
        self._checked_at = self._chars
        visible = self.visible()
        tokens = self.tokens(visible)
        long = _long_lines(visible)
        if self.expected.echo and self._echoes(long):
            return self._off(ECHOED)
        if not self._signed and self.expected.shown_in(visible):
            self._signed = True
        if self._signed:
            return self._after_sign(visible, tokens)
        if self._loops(long):
            return self._off(LOOPED)
        if tokens >= self.expected.within_tokens:
            return self._off(NO_SIGN)
        return ""

    def _off(self, reason: str) -> str:
        self.reason = reason
        return OFF_TRACK

    def _after_sign(self, visible: str, tokens: int) -> str:
        """Once signed: a closed block copied from the prompt is an echo; a closed block
        followed by `tail_tokens` of talk is the whole reply."""
        closed = self._closed(visible)
        if closed is None:
            # Watched to the end where a block may yet close; else a while, then let go.
            self._done = not self.expected.closed_by and tokens >= WATCHED_TOKENS
            return ""
        block, tail = closed
        if self.expected.echo and self._echoes(_long_lines(block + "\n")):
            return self._off(ECHOED)
        if len(tail) // CHARS_PER_TOKEN >= self.expected.tail_tokens:
            return COMPLETE
        return ""

    def _closed(self, visible: str) -> tuple[str, str] | None:
        """(the block, the text after it) where the last sign's block has closed, else None."""
        if not self.expected.closed_by or not self.expected.sign_line:
            return None
        whole = visible[: visible.rfind("\n") + 1]  # a line still streaming may go on
        signs = list(re.finditer(self.expected.sign_line, whole, re.MULTILINE))
        if not signs:
            return None
        closing = re.compile(self.expected.closed_by, re.MULTILINE)
        close = closing.search(whole, signs[-1].end())
        if close is None:
            return None
        return whole[signs[-1].start() : close.start()], visible[close.end() :]

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

    def _echoes(self, long: list[str]) -> bool:
        """Whether the reply's whole long lines so far are mostly the prompt's, word for word."""
        if len(long) < ECHO_MIN_LINES:
            return False
        copied = sum(line in self._prompt_lines for line in long)
        return copied >= ECHO_SHARE * len(long)

    def _loops(self, long: list[str]) -> bool:
        """Whether the reply's whole long lines so far mostly repeat its own earlier lines."""
        if len(long) < LOOP_MIN_LINES:
            return False
        return len(long) - len(set(long)) >= LOOP_SHARE * len(long)

    def off_track(self, model: str) -> OffTrackReply:
        """The error for a reply stopped early, naming what was asked and how it began."""
        visible = self.visible()
        tokens = self.tokens(visible)
        began = " ".join(visible.split())[:EXCERPT_CHARS]
        why = {
            ECHOED: "it repeated the prompt back",
            LOOPED: f"{tokens} tokens in, it kept repeating itself",
        }.get(self.reason, f"{tokens} tokens in, it had no sign of one")
        return OffTrackReply(
            f"The reply from {model} was not {self.expected.what}: {why}, so it was stopped "
            f'there (it began: "{began}…").',
            partial=visible,
            tokens=tokens,
            reason=self.reason or NO_SIGN,
            what=self.expected.what,
        )


def _lines(texts: Iterable[str]) -> set[str]:
    """The long lines of `texts`, stripped: what an echo is told by."""
    return {
        line.strip()
        for text in texts
        for line in text.splitlines()
        if len(line.strip()) >= ECHO_LINE_CHARS
    }


def _long_lines(visible: str) -> list[str]:
    """The reply's whole lines (the last may go on) of ECHO_LINE_CHARS or more, stripped:
    shorter ones ("```json", "}") prove nothing about an echo or a loop."""
    lines = (line.strip() for line in visible.splitlines()[:-1])
    return [line for line in lines if len(line) >= ECHO_LINE_CHARS]


def without_sign(expected: Expected, reply: str) -> OffTrackReply:
    """A whole reply with nothing of `expected` in it, described as a stopped one is."""
    return OffTrackReply(
        f"no sign of {expected.what}",
        partial=reply,
        tokens=len(reply) // CHARS_PER_TOKEN,
        reason=NO_SIGN,
        what=expected.what,
    )


def unusable(model: str, first: OffTrackReply, second: OffTrackReply) -> ModelReplyError:
    """Two replies in a row stopped for want of what was asked: the session ends, saying why."""
    began = " ".join(second.partial.split())[:EXCERPT_CHARS]
    began = began or " ".join(first.partial.split())[:EXCERPT_CHARS]
    what = second.what or "a reply of the right kind"
    if first.reason == second.reason == ECHOED:
        wrote = "it repeated the prompt back both times"
    else:
        noun = what.split()[-1]
        wrote = f"it wrote {first.tokens} and then {second.tokens} tokens with no {noun} in them"
        wrote += _looping(first, second)
    return ModelReplyError(
        f"Stopped: the replies of {model} are unusable: asked twice for {what}, {wrote} (it "
        f'began: "{began}…"), so it is likely too small for this work or served without its '
        "chat template (try a larger, instruction-tuned model)."
    )


def _looping(first: OffTrackReply, second: OffTrackReply) -> str:
    """Which of the two replies went round in their own lines, said after their token counts."""
    looped = [which for which, r in (("first", first), ("second", second)) if r.reason == LOOPED]
    if len(looped) == 2:
        return ", both repeating their own lines"
    return f", the {looped[0]} repeating its own lines" if looped else ""
