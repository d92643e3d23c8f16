"""The reply cap, enforced by the client as well as asked of the server.

OpenAI's name for the cap is `max_completion_tokens`; llama-cpp-python, older llama-server and
llamafile read only `max_tokens` and ignore the newer name. A server that streams more pieces
than the cap allows has ignored it: the client cuts the reply there (like a "length" finish) and
later calls send the cap as `max_tokens`. A non-streamed reply that reports more completion
tokens than the cap comes too late to cut, in time for the next call.
"""

from __future__ import annotations

from typing import Any

# Content chunks beyond the reply cap before the client cuts the stream itself. A server sends at
# least one token per chunk, so more chunks than the cap means it ignored the cap; the slack
# only forgives a server that splits its last token.
CAP_SLACK_CHUNKS = 2


class ReplyCap:
    """Which name this server reads the reply cap under, learned from how it answers."""

    def __init__(self) -> None:
        # OpenAI's name for the reply cap; "max_tokens" once the server is seen ignoring it.
        self.param = "max_completion_tokens"

    def ask(self, params: dict[str, Any], cap: int | None) -> None:
        """Put the cap (if any) into a request's parameters under the name the server reads."""
        if cap is not None:
            params[self.param] = cap

    def sent(self, params: dict[str, Any]) -> int | None:
        """The cap a request was sent with."""
        return params.get(self.param)

    def stream_overran(self, pieces: int, cap: int | None) -> bool:
        """True when a stream has sent more pieces than the cap allows: cut it there."""
        if cap is not None and pieces > cap + CAP_SLACK_CHUNKS:
            self._learn_ignored()
            return True
        return False

    def check_whole(self, completion_tokens: int | None, cap: int | None) -> None:
        """A whole reply over the cap: too late for this reply, in time for the next."""
        if cap is not None and completion_tokens is not None and completion_tokens > cap:
            self._learn_ignored()

    def _learn_ignored(self) -> None:
        """The server sent more than the reply cap allows: it does not read the cap under the
        name it was sent. Servers that ignore OpenAI's newer name read `max_tokens`."""
        if self.param == "max_completion_tokens":
            self.param = "max_tokens"
