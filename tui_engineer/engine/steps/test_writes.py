"""A test run, bracketed so that the files it writes are told from the step's edits (the
record is vcs/written.py's): every run in a step's shadow goes through `bracketed`."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tui_engineer.sandbox.base import Sandbox
    from tui_engineer.vcs.shadow import Shadow


@asynccontextmanager
async def bracketed(shadow: Shadow, sandbox: Sandbox) -> AsyncIterator[None]:
    """Around one test run in `shadow` by `sandbox`: what changed before it is its authors',
    what changes during it is the tests'."""
    await asyncio.to_thread(shadow.tests_starting)
    try:
        yield
    finally:
        await asyncio.to_thread(shadow.tests_ended, not sandbox.ends_every_process)
