"""Fixtures for the model client's tests."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from tui_engineer.llm import ModelClient


@pytest.fixture
async def clients() -> AsyncIterator[list[ModelClient]]:
    """A list a test adds each ModelClient it makes to: every one is closed when the test ends
    (its HTTP connections with it), whatever the test's own `make` passes to it."""
    made: list[ModelClient] = []
    yield made
    for client in made:
        await client.aclose()
