"""Where tests run: `local` (a contained subprocess) now, `docker` later."""

from tui_engineer.sandbox.base import Sandbox
from tui_engineer.sandbox.local import LocalSandbox

__all__ = ["LocalSandbox", "Sandbox"]
