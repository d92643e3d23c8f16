"""What each prompt shows of the repository (context/: the map, the relevant files whole or by
regions), sized to the context budget and to what the model's window leaves after the rest of
the prompt and the reply."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import threading
import time
from collections.abc import Callable

from tui_engineer.context import Context, RepoMap, build_map, frame_regions, gather_context
from tui_engineer.context.fill import start_filling, stop_filling
from tui_engineer.engine import events as ev
from tui_engineer.engine import prompts
from tui_engineer.engine.editor_buffers import unsaved_buffers
from tui_engineer.engine.plans.plan import Step
from tui_engineer.engine.runtime import Runtime
from tui_engineer.engine.steps.seeing_more import answer_room

# The map's time bound: a cold build of a big repository reads what the request names and then
# what fits in this (beside the baseline's tests); each later prompt's build goes on from there.
MAP_SECONDS = 3.0
MARGIN_CHARS = 2_000  # when the window is the limit: the estimate's slack
FIX_REGION_CHARS = 12_000  # the code at the failing lines, per fix message


async def _room(rt: Runtime, messages: list[prompts.Message], purpose: str) -> int:
    """Characters the context may take in `messages` (built without it) for `purpose`."""
    learn = getattr(rt.model, "learn_context_window", None)
    if learn is not None:  # the window comes from the config or the server, asked once
        await learn()
    room = answer_room(rt, messages, purpose)
    if room < rt.context_chars:  # the window is the limit: keep a margin for the estimate
        room -= MARGIN_CHARS
    return max(0, room)


def start_map(rt: Runtime, request: str = "") -> asyncio.Task[None]:
    """Build the repository map at session start, beside the baseline's tests: the first
    prompt then finds it ready (its own build only stats the files), and the time spent is
    said (`context_ready`) rather than a gap before the first model call."""
    if rt.map_task is None:
        rt.map_task = asyncio.ensure_future(_first_map(rt, request))
    return rt.map_task


async def _first_map(rt: Runtime, request: str) -> RepoMap:
    """The files `request` names are read whatever the bound: the first prompt need not list
    the repository again to read them. Nothing is edited in the shadow yet: its files are
    listed from the commit it was made from, not looked at (0.1-0.2 s at 40,000 files)."""
    started = time.monotonic()
    build = functools.partial(
        build_map, rt.workdir, cache_root=rt.root, text=request, seconds=MAP_SECONDS,
        enough=_baseline_in(rt), committed=rt.shadow.baseline,
    )  # fmt: skip
    built = await asyncio.to_thread(build)
    if built.left:  # the rest is read in the background, for the later prompts
        rt.map_filler = await start_filling(rt.workdir, rt.root)
    rt.emit(
        ev.ContextReady(
            seconds=round(time.monotonic() - started, 3),
            files=len(built.files),
            files_read=built.read,
            files_reused=built.reused,
            parsed=built.parsed,
            files_left=built.left,
        )
    )
    return built


async def stop_map_filler(rt: Runtime) -> None:
    """At the session's end: the background reading stops (what it saved stays cached)."""
    filler, rt.map_filler = rt.map_filler, None
    await stop_filling(filler)


def _baseline_in(rt: Runtime) -> Callable[[], bool] | None:
    """Once the baseline's result is in, the first model call no longer waits for it: nor
    does it wait for the map's reading of files that neither git nor the request names."""
    task = rt.baseline_task
    if task is None:
        return None
    known = threading.Event()
    task.add_done_callback(lambda _: known.set())
    return known.is_set


def _map_seconds(rt: Runtime) -> float:
    """A prompt's own build reads what it names; the rest only while nothing else reads it."""
    filler = rt.map_filler
    return 0.0 if filler is not None and filler.returncode is None else MAP_SECONDS


async def first_map(rt: Runtime) -> RepoMap | None:
    """The map built at start, for the first prompt only: nothing was edited before it (the
    next prompts build their own, which only stat the files the first one mapped)."""
    task, rt.map_task = rt.map_task, None
    if task is None:
        return None
    with contextlib.suppress(Exception):  # a failed first build: the prompt's own build
        return await asyncio.shield(task)
    return None


async def context_for(
    rt: Runtime, purpose: str, request: str, bare: list[prompts.Message], step: Step | None = None
) -> Context:
    """The map and contents for a plan or propose prompt; `bare` is that prompt without them."""
    repo_map = await first_map(rt)
    budget = await _room(rt, bare, purpose)
    step_text = f"{step.title}\n{step.description}\n{step.verify}" if step else ""
    gather = functools.partial(
        gather_context,
        rt.workdir,
        request,
        step_files=tuple(step.files) if step else (),
        step_text=step_text,
        budget_chars=budget,
        cache_root=rt.root,
        repo_map=repo_map,
        seconds=_map_seconds(rt),
    )
    context = await asyncio.to_thread(gather)
    roots = (rt.root, rt.workdir)
    buffers = await unsaved_buffers(rt.read_buffer, context.shown, roots, rt.emit, rt._warned)
    if buffers:  # the editor's unsaved text instead of the saved files
        context = await asyncio.to_thread(gather, buffers=buffers)
    return context


async def context_and_diff(
    rt: Runtime, request: str, bare: list[prompts.Message], step: Step
) -> tuple[Context, str]:
    """A propose prompt's context, and the shadow's diff before the step's edits: staged beside
    the context (0.1 s at 40,000 files, a wait before the first call when one after the other)."""
    before = asyncio.ensure_future(asyncio.to_thread(rt.shadow.diff))
    try:
        context = await context_for(rt, "propose", request, bare, step)
    except BaseException:
        with contextlib.suppress(BaseException):  # not left staging the shadow behind the next
            await before
        raise
    return context, await before


async def failing_code(rt: Runtime, report_text: str, messages: list[prompts.Message]) -> str:
    """The code around the failing test's traceback frames, as the files are now."""
    budget = min(FIX_REGION_CHARS, await _room(rt, messages, "fix"))
    if budget <= 0:
        return ""
    return await asyncio.to_thread(frame_regions, rt.workdir, report_text, budget)
