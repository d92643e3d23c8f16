"""A test run may leave folders nested deeper than Python's recursion limit in a shadow (a test
of path limits, a runaway recursion of its own). Python 3.11's own rmtree walks by recursion and
raises RecursionError there, which no `ignore_errors` catches: the shadow, and the spares made
from it, are still removed (real shadows and spares)."""

from __future__ import annotations

import subprocess

from tui_engineer.vcs import spare
from tui_engineer.vcs.shadow import Shadow

DEPTH = 1_100  # past the default recursion limit (1,000)


def _nest(top) -> None:
    script = f"p=deep; i=0; while [ $i -lt {DEPTH} ]; do p=$p/d; i=$((i+1)); done; mkdir -p $p"
    subprocess.run(["sh", "-c", script], cwd=top, check=True)


def test_a_shadow_with_folders_nested_past_the_recursion_limit_is_removed(make_repo):
    shadow = Shadow.create(make_repo(), session_id="deep", spares=0)  # no spare kept: deleted
    _nest(shadow.path)
    shadow.remove()
    assert not shadow.path.exists()


def test_a_spare_with_them_is_deleted_when_it_cannot_be_used(make_repo):
    shadow = Shadow.create(make_repo(), session_id="deep-spare")
    _nest(shadow.path)
    target = shadow.path
    shadow.remove()  # kept as a spare: one rename
    (kept,) = spare.slots(spare.pool_for(target.parent))
    spare.clear(spare.pool_for(target.parent) / kept)
    assert spare.slots(spare.pool_for(target.parent)) == []
