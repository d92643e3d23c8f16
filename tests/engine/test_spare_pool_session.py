"""A session and the steps it prepares side by side make their shadows from the repository's
spares (vcs/spare.py, issue 47): on a repository whose spares exist, none of them is a checkout
of every file, and they are all kept again at the end; at its start the session prunes the
spares of a repository that is gone, in the background. Real sessions, real git, real pytest,
the scripted model over HTTP."""

from __future__ import annotations

import asyncio
import time

import pytest

from tests.engine.test_parallel_steps import (
    DIV_MODULE,
    DIV_STEP,
    MUL_MODULE,
    MUL_STEP,
    SUB_STEP,
    ByStep,
    Reader,
)
from tests.engine_support import SUB, run_headless, shadows_left
from tests.scripted_server import Reply, ScriptedServer
from tests.tiers import whole_session
from tui_engineer.engine import events as ev
from tui_engineer.vcs import spare
from tui_engineer.vcs.repo import open_repo
from tui_engineer.vcs.shadow import Shadow
from tui_engineer.vcs.shadow_place import shadow_home
from tui_engineer.vcs.spare_prune import spares_root

pytestmark = pytest.mark.usefixtures("api_key")


def _pool(repo):
    with open_repo(repo) as opened:
        return spare.pool_for(shadow_home(opened))


def _unchanged_files(repo) -> set[int]:
    """The inode of a file no step changes, in each spare of `repo`."""
    pool = _pool(repo)
    return {(pool / slot / "tests" / "test_calc.py").stat().st_ino for slot in spare.slots(pool)}


@whole_session
async def test_steps_prepared_side_by_side_are_made_from_spares_not_checked_out(
    make_repo, scripted_server: ScriptedServer, monkeypatch
) -> None:
    repo = make_repo()
    # What the last session on this repository left: its shadow and its two prepared steps'.
    made = [Shadow.create(repo, session_id=f"last{n}", spares=3) for n in range(3)]
    for shadow in made:
        shadow.remove()
    spares = _unchanged_files(repo)
    assert len(spares) == 3
    # A spare of a repository deleted since: pruned at the session's start.
    gone = make_repo(name="gone")
    Shadow.create(gone, session_id="old", spares=3).remove()
    gone_pool = _pool(gone)
    assert spare.slots(gone_pool) == ["0"]
    (gone / ".git").rename(gone / "not-git-any-more")

    taken: list[tuple[str, bool]] = []  # each shadow made: its name, and whether from a spare
    take = spare.take

    def watched(path):
        got = take(path)
        taken.append((path.name, got))
        return got

    monkeypatch.setattr(spare, "take", watched)
    ByStep(
        scripted_server,
        [SUB_STEP, MUL_STEP, DIV_STEP],
        step1=[Reply(text=SUB)],
        step2=[Reply(text=MUL_MODULE)],
        step3=[Reply(text=DIV_MODULE)],
    )
    reader = Reader()

    async def both_prepared() -> None:
        await reader.prepared_event(2).wait()
        await reader.prepared_event(3).wait()

    reader.before = {1: both_prepared}
    result, seen = await run_headless(
        repo, "add sub, mul and div", scripted_server.base_url, reviewer=reader,
        sink=reader.sink, pipeline=True, parallel_steps=2,
    )  # fmt: skip
    assert result.exit_code == 0, result.message
    assert [e.step for e in seen.of(ev.StepPreparing)] == [2, 3]

    # The session's shadow and both prepared steps': each from a spare, none checked out anew.
    assert len(taken) == 3 and all(got for _, got in taken), taken
    assert sum("-next" in name for name, _ in taken) == 2, taken
    # All three kept again, the same files: not one of them was written again.
    assert _unchanged_files(repo) == spares
    assert shadows_left(repo) == []
    # The gone repository's spare is pruned meanwhile (a thread of its own: awaited here).
    deadline = time.monotonic() + 60
    while gone_pool.exists() and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    assert not gone_pool.exists()
    assert spare.slots(_pool(repo)) == ["0", "1", "2"]
    assert sorted(p.name for p in spares_root().iterdir()) == [_pool(repo).name]
