"""Errors of the model layer. Each message is the whole actionable text for the user.

None of these messages may contain the API key: the client redacts server text before using it.
"""

from __future__ import annotations

from tui_engineer.base.errors import UserError


class LLMError(UserError):
    """Talking to the model server failed in a way the user can act on."""


class MissingApiKey(LLMError):
    """No API key was configured."""


class AuthRejected(LLMError):
    """The server answered 401/403 to our key."""


class UnknownModel(LLMError):
    """The server does not serve the configured model."""


class ServerUnreachable(LLMError):
    """Nothing answered at the base URL (refused, DNS, timeouts after retries)."""


class NotTheApi(LLMError):
    """The base URL answers, but with a web page (a web UI, a proxy's login page, a URL
    without /v1): asking again changes nothing, the address must."""


class ModelReplyError(LLMError):
    """The server answered, but the reply is unusable (empty, cut off, filtered, dropped)."""


class ContextWindowExceeded(ModelReplyError):
    """A prompt, or a prompt and its reply, does not fit the model's context window."""


class BudgetExceeded(UserError):
    """A session budget ran out; the call that would overspend was not made.

    `budget` is "tokens", "usd" or "wall_time"; `used` and `cap` are in that budget's unit.
    """

    def __init__(self, message: str, *, budget: str, used: float, cap: float) -> None:
        super().__init__(message)
        self.budget = budget
        self.used = used
        self.cap = cap
