"""The pool of spare shadows (vcs/spare.py): one repository keeps up to as many spares as a
session has shadows, and processes racing for them (two sessions on one repository, a session's
steps prepared side by side) never share one, nor overfill the pool; pruning
(vcs/spare_prune.py) deletes what no session would take and keeps the rest. Real git
repositories, real processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from tui_engineer.vcs.repo import open_repo
from tui_engineer.vcs.shadow import Shadow
from tui_engineer.vcs.shadow_place import shadow_home
from tui_engineer.vcs.spare import pool_for, slots
from tui_engineer.vcs.spare_prune import OLD_LAYOUT, prune, spares_root

ROUNDS = 5
RACERS = 4

# One racing process: for each round, waits for its start file, then takes a spare (or parks
# its own folder) as soon as it appears, and writes what it got.
RACER = """
import json, os, sys, time
from pathlib import Path
from tui_engineer.vcs import spare
home, me, mode = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
for round in range(int(sys.argv[4])):
    go = home / f"go-{round}"
    while not go.exists():
        time.sleep(0.0005)
    mine = home / f"{me}-{round}"
    if mode == "take":
        got = spare.take(mine) and (mine / "which").read_text()
    else:
        got = spare.park(mine, 2)
    (home / f"saying-{me}-{round}").write_text(json.dumps(got))
    os.rename(home / f"saying-{me}-{round}", home / f"said-{me}-{round}")  # whole when seen
"""


def _home(root: Path) -> Path:
    with open_repo(root) as repo:
        return shadow_home(repo)


def _race(home: Path, mode: str, before_round) -> list[list[object]]:
    """RACERS processes take (or park) at once, ROUNDS times; what each got, per round."""
    home.mkdir(parents=True, exist_ok=True)
    racers = [
        subprocess.Popen([sys.executable, "-c", RACER, str(home), f"r{n}", mode, str(ROUNDS)])
        for n in range(RACERS)
    ]
    said: list[list[object]] = []
    try:
        for round in range(ROUNDS):
            before_round(round)
            (home / f"go-{round}").touch()
            files = [home / f"said-r{n}-{round}" for n in range(RACERS)]
            deadline = time.monotonic() + 120
            while not all(f.exists() for f in files) and time.monotonic() < deadline:
                time.sleep(0.01)
            said.append([json.loads(f.read_text()) for f in files])
    finally:
        for racer in racers:  # each ends after its last round; on a failure here, stopped
            try:
                racer.wait(timeout=30)
            except subprocess.TimeoutExpired:
                racer.kill()
                racer.wait()
    assert [racer.returncode for racer in racers] == [0] * RACERS
    return said


def _spare_like(folder: Path, which: str) -> None:
    """A folder park() takes for a whole shadow (its .git has an index), marked `which`."""
    (folder / ".git").mkdir(parents=True)
    (folder / ".git" / "index").write_bytes(b"")
    (folder / "which").write_text(which)


def test_each_spare_goes_to_one_of_many_processes_taking_at_once(make_repo):
    home = _home(make_repo())
    pool = pool_for(home)

    def two_spares(round: int) -> None:
        for slot in ("0", "1"):
            _spare_like(pool / slot, f"{round}/{slot}")

    said = _race(home, "take", two_spares)
    for round, got in enumerate(said):
        # Two spares, four takers: two got one each, never the same one; the others none.
        assert sorted(g for g in got if g) == [f"{round}/0", f"{round}/1"], got
        assert got.count(False) == RACERS - 2
        assert slots(pool) == []


def test_processes_parking_at_once_fill_the_pool_and_no_more(make_repo):
    home = _home(make_repo())
    pool = pool_for(home)
    taken: list[str] = []

    def four_shadows(round: int) -> None:
        for slot in slots(pool):  # the last round's, taken by the next sessions
            os.rename(pool / slot, home / f"taken-{round}-{slot}")
            taken.append((home / f"taken-{round}-{slot}" / "which").read_text())
        for n in range(RACERS):
            _spare_like(home / f"r{n}-{round}", f"r{n}-{round}")

    said = _race(home, "park", four_shadows)
    four_shadows(ROUNDS)
    for round, got in enumerate(said):
        assert got.count(True) == 2, got  # a pool of two: two kept, two left to be deleted
        left = sorted(f"r{n}-{round}" for n in range(RACERS) if not got[n])
        assert left == sorted(p.name for p in home.glob(f"r*-{round}")), left
        parked = sorted(t for t in taken if t.endswith(f"-{round}"))
        assert parked == sorted(f"r{n}-{round}" for n in range(RACERS) if got[n])


def test_pruning_deletes_a_gone_repositorys_spares_and_keeps_a_live_ones(make_repo):
    gone, live = make_repo(name="gone"), make_repo(name="live")
    for root in (gone, live):
        Shadow.create(root, session_id="s1").remove()
    gone_pool, live_pool = pool_for(_home(gone)), pool_for(_home(live))
    kept = (live_pool / "0" / "calc.py").stat().st_ino
    subprocess.run(["rm", "-rf", str(gone)], check=True)

    assert prune(spares_root()) == [gone_pool / "0"]
    assert not gone_pool.exists()
    assert slots(live_pool) == ["0"]
    again = Shadow.create(live, session_id="s2")  # still made from its spare
    try:
        assert (again.path / "calc.py").stat().st_ino == kept
    finally:
        again.remove()


def test_pruning_deletes_spares_unused_for_days_beyond_the_pool_or_left_half_deleted(make_repo):
    root = make_repo()
    made = [Shadow.create(root, session_id=f"s{n}", spares=3) for n in range(3)]
    for shadow in made:
        shadow.remove()
    pool = pool_for(_home(root))
    long_ago = time.time() - 15 * 86400
    os.utime(pool / "1", (long_ago, long_ago))
    (pool / "deleting-0-0123abcd" / "pkg").mkdir(parents=True)  # a kill mid-deletion
    assert slots(pool) == ["0", "1", "2"]  # what is being deleted is never taken
    old = spares_root().parent / OLD_LAYOUT / "repo-0123456789"  # the one-spare layout
    (old / ".git").mkdir(parents=True)

    # A pool of two now (parallel_steps lowered): slot 2 goes, and slot 1, unused for 15 days.
    assert sorted(prune(spares_root(), size=2, days=14)) == [pool / "1", pool / "2"]
    assert sorted(p.name for p in pool.iterdir()) == ["0"]
    assert not old.parent.exists()


def test_a_session_with_a_smaller_pool_leaves_other_repositories_spares(make_repo):
    """`parallel_steps` is a repository's own setting: a session kept to one spare (e.g.
    --no-pipeline) prunes its own repository's pool to one, never another's."""
    mine, theirs = make_repo(), make_repo(name="theirs")
    for root in (mine, theirs):
        for shadow in [Shadow.create(root, session_id=f"s{n}", spares=3) for n in range(3)]:
            shadow.remove()
    own = pool_for(_home(mine))
    prune(spares_root(), size=1, own=own)
    assert slots(own) == ["0"]
    assert slots(pool_for(_home(theirs))) == ["0", "1", "2"]
