"""Two things stage a shadow's files at a session's start: the baseline (the starting commit's
tree id, vcs.partial.save_tree) and the test selection's fingerprint. Both run in threads beside
each other; git lets one process at a time hold the index, and the other failed with
`index.lock: File exists` (seen in full runs: the session ended with a CalledProcessError
before any model call)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from tui_engineer.vcs.partial import save_tree
from tui_engineer.vcs.shadow import Shadow
from tui_engineer.verify.selection import tree_fingerprint


def test_the_baseline_and_the_fingerprint_stage_one_after_the_other(make_repo) -> None:
    root = make_repo({f"m{i}.py": f"X = {i}\n" for i in range(400)})
    shadow = Shadow.create(root, session_id="writers")
    with ThreadPoolExecutor(max_workers=2) as pool:
        for round_ in range(25):
            (shadow.path / "m0.py").write_text(f"X = {round_}\n")  # something to stage each round
            futures = [pool.submit(save_tree, shadow), pool.submit(tree_fingerprint, shadow.path)]
            tree, prints = (f.result() for f in futures)  # raises on a clash
            assert len(prints) == 400 and len(tree) == 40


def test_the_first_proposal_and_the_baseline_stage_one_after_the_other(make_repo) -> None:
    # `run --no-plan`: the step's first edit lists the shadow's diff while the baseline stages
    # it (crashed with GitCommandError 'index.lock: File exists', exit 70).
    root = make_repo({f"m{i}.py": f"X = {i}\n" for i in range(400)})
    shadow = Shadow.create(root, session_id="race")
    try:
        with ThreadPoolExecutor(max_workers=2) as pool:
            for round_ in range(25):
                (shadow.path / "m0.py").write_text(f"X = {round_}\n")
                futures = [pool.submit(save_tree, shadow), pool.submit(shadow.diff)]
                tree, diff = (f.result() for f in futures)
                assert len(tree) == 40 and ("m0.py" in diff) == (round_ > 0)
    finally:
        shadow.remove()
