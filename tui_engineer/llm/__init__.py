"""The model layer: an OpenAI-compatible chat client with usage accounting and budgets."""

from typing import TYPE_CHECKING

from tui_engineer.llm.errors import (
    AuthRejected,
    BudgetExceeded,
    ContextWindowExceeded,
    LLMError,
    MissingApiKey,
    ModelReplyError,
    NotTheApi,
    ServerUnreachable,
    UnknownModel,
)
from tui_engineer.llm.usage import Budget, CallUsage, UsageLedger, cost_usd, price_for

if TYPE_CHECKING:
    from tui_engineer.llm.client import Completion, ModelClient

_CLIENT_NAMES = {"Completion", "ModelClient"}


def __getattr__(name: str) -> object:
    # The client imports the openai SDK, the largest part of start-up (about a second on 2 idle
    # cores): it loads when first asked for, so the app paints first (benchmarks/first_paint.py).
    if name in _CLIENT_NAMES:
        from tui_engineer.llm import client

        return getattr(client, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "AuthRejected",
    "Budget",
    "BudgetExceeded",
    "CallUsage",
    "Completion",
    "ContextWindowExceeded",
    "LLMError",
    "MissingApiKey",
    "ModelClient",
    "ModelReplyError",
    "NotTheApi",
    "ServerUnreachable",
    "UnknownModel",
    "UsageLedger",
    "cost_usd",
    "price_for",
]
