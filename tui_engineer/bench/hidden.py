"""Hidden acceptance tests: run on a copy of the repo's final commit, never in the session's repo
or shadow, so the engine never sees them."""

from __future__ import annotations

import io
import subprocess
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path

from tui_engineer.config.settings import Settings
from tui_engineer.sandbox.factory import make_sandbox


@dataclass(frozen=True)
class HiddenResult:
    passed: bool
    summary: str
    seconds: float = 0.0  # the hidden test command's own time


def head_sha(repo: Path) -> str:
    done = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def _export_head(repo: Path, dest: Path) -> None:
    archive = subprocess.run(["git", "archive", "HEAD"], cwd=repo, capture_output=True, check=True)
    with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
        tar.extractall(dest, **SAFE_EXTRACT)


# tarfile's "data" filter (no absolute paths, no links out, no device files) where this Python
# has it: 3.11.4 and later. Debian 12's python3 is 3.11.2, where the argument is a TypeError.
SAFE_EXTRACT: dict[str, str] = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}


async def run_hidden(
    repo: Path, hidden: dict[str, str], command: str, settings: Settings
) -> HiddenResult:
    """The hidden tests against HEAD of `repo`, in the session's kind of sandbox. Passing means
    they ran (at least one test) and none failed."""
    import asyncio

    with tempfile.TemporaryDirectory(prefix="tui-bench-hidden-") as tmp:
        work = Path(tmp)
        await asyncio.to_thread(_export_head, repo, work)
        for rel, text in hidden.items():
            (work / rel).parent.mkdir(parents=True, exist_ok=True)
            (work / rel).write_text(text, encoding="utf-8")
        sandbox = make_sandbox(settings, work, cache_of=repo)  # built already: reuse it
        try:
            report = await sandbox.run_tests(work, command, timeout=settings.test_timeout)
        finally:
            await sandbox.close()
    return HiddenResult(report.ok and report.passed > 0, report.summary(), report.duration)
