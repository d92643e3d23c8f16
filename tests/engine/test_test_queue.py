"""The one queue every test run of a session goes through (engine/ahead/test_queue.py): steps
prepared side by side never run two suites on cores that fit one, and the step under review
goes first. Runs are futures the test finishes by hand: nothing waits on a clock."""

from __future__ import annotations

import asyncio

from tui_engineer.engine.ahead.test_queue import TestQueue, runs_at_once


async def test_runs_take_turns_the_step_under_review_first_then_the_one_reviewed_next() -> None:
    queue = TestQueue(1)
    order: list[str] = []
    release: dict[str, asyncio.Event] = {}

    async def run(name: str, *, rank: int) -> None:
        release[name] = asyncio.Event()
        async with queue.turn(rank=rank):
            order.append(name)
            assert queue.running == 1  # never two at once
            await release[name].wait()

    tasks = [asyncio.create_task(run("prepared 2", rank=2))]
    await asyncio.sleep(0)
    for name, rank in (("prepared 4", 2), ("reviewed next", 1), ("under review", 0)):
        tasks.append(asyncio.create_task(run(name, rank=rank)))
        await asyncio.sleep(0)
    expected = ["prepared 2", "under review", "reviewed next", "prepared 4"]
    for count, name in enumerate(expected, start=1):
        for _ in range(3):
            await asyncio.sleep(0)
        assert order == expected[:count]  # a human waits for the ones that came later
        release[name].set()
    await asyncio.gather(*tasks)
    assert queue.running == 0


async def test_a_run_stopped_while_it_waits_gives_no_place_away() -> None:
    queue = TestQueue(1)
    holding = asyncio.Event()

    async def hold() -> None:
        async with queue.turn():
            await holding.wait()

    first = asyncio.create_task(hold())
    await asyncio.sleep(0)
    stopped = asyncio.create_task(hold())
    await asyncio.sleep(0)
    stopped.cancel()
    holding.set()
    await first
    await asyncio.gather(stopped, return_exceptions=True)
    assert queue.running == 0
    async with queue.turn():  # the place is free again
        assert queue.running == 1


def test_two_cores_run_one_suite_at_a_time() -> None:
    assert runs_at_once(2) == 1
    assert runs_at_once(1) == 1
    assert runs_at_once(8) == 4
