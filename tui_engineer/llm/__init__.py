"""The model layer: an OpenAI-compatible chat client with usage accounting and budgets."""

from tui_engineer.llm.client import Completion, ModelClient
from tui_engineer.llm.errors import (
    AuthRejected,
    BudgetExceeded,
    ContextWindowExceeded,
    LLMError,
    MissingApiKey,
    ModelReplyError,
    ServerUnreachable,
    UnknownModel,
)
from tui_engineer.llm.usage import Budget, CallUsage, UsageLedger, cost_usd, price_for

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
    "ServerUnreachable",
    "UnknownModel",
    "UsageLedger",
    "cost_usd",
    "price_for",
]
