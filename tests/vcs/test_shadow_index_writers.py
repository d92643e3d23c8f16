"""Two things stage a shadow's files at a session's start: the baseline (the starting commit's
tree id) and the test selection's fingerprint. Both run in threads beside each other; git lets
one process at a time hold the index, and the other failed with `index.lock: File exists`
(seen in full runs: the session ended with a CalledProcessError before any model call)."""

from __future__ import annotations

import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from tui_engineer.engine.baseline import tree_id
from tui_engineer.verify.selection import tree_fingerprint


def _repo(path: Path, files: int) -> Path:
    path.mkdir()
    for i in range(files):
        (path / f"m{i}.py").write_text(f"X = {i}\n")
    subprocess.run(["git", "init", "-q"], cwd=path, check=True)
    return path


def test_the_baseline_and_the_fingerprint_stage_one_after_the_other(tmp_path: Path) -> None:
    shadow = _repo(tmp_path / "shadow", 400)
    with ThreadPoolExecutor(max_workers=2) as pool:
        for round_ in range(25):
            (shadow / "m0.py").write_text(f"X = {round_}\n")  # something to stage each round
            futures = [pool.submit(tree_id, shadow), pool.submit(tree_fingerprint, shadow)]
            tree, prints = (f.result() for f in futures)  # raises CalledProcessError on a clash
            assert len(prints) == 400 and len(tree) == 40
