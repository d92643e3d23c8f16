"""The map's background reader (context/fill.py) is a process of its own beside the session:
it must never write the shadow's index. git fails a second writer of an index at once
(`index.lock: File exists`), so a `git add` of the filler's, 0.5 s long at 200,000 files, made
the session's own staging fail and the session stop with an internal error. Real git, a real
shadow and the real filler process; which git commands it ran is read from git's trace."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tui_engineer.context.map_cache import cache_file, cached_count
from tui_engineer.context.repomap import build_map
from tui_engineer.vcs.shadow import Shadow

_FILES = {f"pkg/m{n}.py": f"def f{n}(x):\n    return x + {n}\n" for n in range(30)}


def _commands(trace: Path) -> list[list[str]]:
    """Each git command the trace saw start (argv without "git")."""
    if not trace.exists():
        return []
    events = [json.loads(line) for line in trace.read_text().splitlines()]
    return [e["argv"][1:] for e in events if e.get("event") == "start"]


def _writes_the_index(argv: list[str]) -> bool:
    """A command that takes the index's lock: a staging, or a status free to refresh it."""
    words = [word for word in argv if not word.startswith("-c")]
    sub = next((word for word in words if not word.startswith("-")), "")
    if sub == "status":
        return "--no-optional-locks" not in argv
    return sub in {"add", "update-index", "reset", "checkout", "read-tree", "rm", "mv"}


def test_the_background_map_reader_never_takes_the_shadows_index(make_repo, tmp_path):
    repo = make_repo(_FILES)
    shadow = Shadow.create(repo, session_id="filler")
    try:
        # The session's own edits, as the filler finds them: one changed, one new.
        (shadow.path / "pkg" / "m0.py").write_text("def renamed_f0(x):\n    return x\n")
        (shadow.path / "pkg" / "new.py").write_text("def brand_new(y):\n    return y\n")
        trace = tmp_path / "trace.jsonl"
        env = {**os.environ, "GIT_TRACE2_EVENT": str(trace)}
        command = [sys.executable, "-m", "tui_engineer.context.fill", str(shadow.path), str(repo)]
        subprocess.run(command, env=env, check=True, timeout=120)

        ran = _commands(trace)
        assert ran, "the filler ran no git command: the trace saw nothing"
        assert [argv for argv in ran if _writes_the_index(argv)] == []
        # It still read the whole map into the cache, the session's edits by their content.
        assert cached_count(cache_file(repo)) >= len(_FILES) + 1
        again = build_map(shadow.path, cache_root=repo)
        assert again.parsed == 0  # all known by their bytes
        assert [path for path, _ in again.defining("brand_new")] == ["pkg/new.py"]
        assert [path for path, _ in again.defining("renamed_f0")] == ["pkg/m0.py"]
    finally:
        shadow.remove()
