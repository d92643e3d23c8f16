"""`tui-engineer demo`: the real app on a sample repo, with a built-in rule-based model served
on 127.0.0.1 — no API key, no server to start, nothing to install."""

from tui_engineer.demo.model import reply
from tui_engineer.demo.sample import make_sample_repo
from tui_engineer.demo.server import MODEL, DemoServer

__all__ = ["MODEL", "DemoServer", "demo_flags", "make_sample_repo", "reply"]

DEFAULT_REQUEST = "add sub and mul functions"


def demo_flags(base_url: str) -> dict[str, object]:
    """Settings for a demo session, above any user config: the demo model, local tests."""
    import shlex
    import sys

    return {
        "base_url": base_url,
        "model": MODEL,
        "api_key": "demo",
        "sandbox": "local",
        # The interpreter running tui-engineer has pytest (a dependency); a bare `python` on
        # PATH might not.
        "test_command": f"{shlex.quote(sys.executable)} -m pytest",
    }
