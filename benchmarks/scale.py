"""Benchmark: the product's own share of a one-step session as the repository grows.

Generates Python repositories of N modules (six small functions each), N/20 test files and
one planted bug (`add` in pkg/core.py subtracts) with its red test, then runs one session per
size as a user does: `tui-engineer run "fix add in pkg/core.py" --yes --no-plan --json`, a
subprocess against the scripted model server (tests/scripted_server.py), which answers at once
with the fix. From the --json events' timestamps it prints:

- wall: the process, start to exit;
- tests: the user's own test runs (the baseline's and the step's: *_started → tests_finished /
  baseline_ready, overlaps counted once);
- model: the model's time (model_call_started → the next event of the session);
- own share: wall − tests − model, what the product itself costs;
- first call: seconds from the start to the first model call;
- context_ready: when the session says the map is ready, with files read / reused (if said);
- peak memory: the largest resident size of the tool's process (wait4's ru_maxrss);
- over the smallest: own share less the smallest size's (same run kind), what grows with the
  repository.

Then the floor no session goes under, whatever the repository: the CPU time, in the same
environment, of Python starting, of the headless command's own imports, and of importing the
openai SDK (which the first model call needs; it loads in a thread beside the start-up, but
on the one interpreter lock). A target for the own share below that floor cannot be met by
anything the repository's size decides.

Each size runs cold (an empty user cache) then warm (a second session on the same repository,
reset to the starting commit, with the cache and the baseline's result the first left).
Sizes 1k and 10k files by default; `--big` adds 40k and 200k. The machine may be shared:
`--runs 2` keeps the lower of each.

`--shadows` times only a shadow made and removed, in this process: a fresh checkout (deleted
after), then one made from the spare the last one left (vcs/spare.py) after a one-file
commit; then a session's shadow and three steps prepared side by side (made as the pipeline
makes them), twice: the first session, then the next one (times, the disk they hold and what
stays after them, as the file system counts it). `--cache DIR` puts the repositories and the
shadows in DIR: on a file system with reflinks (scripts/reflink_folder.sh mounts one), a step
prepared beside the session's shadow is a clone of its files (vcs/spare_clone.py).

`--venv DIR` runs the `tui-engineer` of that virtual environment, and its `python` for the
repositories' tests: the built wheel installed without extras into a fresh venv, as a user has
it (`python -m venv DIR && DIR/bin/pip install dist/*.whl`), instead of this checkout's.

Run: python benchmarks/scale.py [--big] [--sizes 1000,10000] [--runs 1] [--shadows [--cache DIR]]
    [--venv DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.engine_support import edit  # noqa: E402
from tests.scripted_server import Reply, ScriptedServer  # noqa: E402

REQUEST = "fix add in pkg/core.py"
GIT_IDENTITY = {
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "b@example.invalid",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "b@example.invalid",
}
CORE = "def add(a, b):\n    return a - b\n"
FIX = edit("pkg/core.py", "    return a - b\n", "    return a + b\n")
MODULE = """\"\"\"Module {n}.\"\"\"


def scale_{n}(x):
    return x * {n}


def offset_{n}(x):
    return x + {n}


def clamp_{n}(x, low=0, high={n}):
    return max(low, min(high, x))


def label_{n}(x):
    return f"m{n}:{{x}}"


def pairs_{n}(items):
    return list(zip(items, items[1:]))


def total_{n}(items):
    return sum(items) + {n}
"""
TEST = """from pkg.mod_{n} import offset_{n}, scale_{n}


def test_scale_{n}():
    assert scale_{n}(2) == {double}


def test_offset_{n}():
    assert offset_{n}(1) == {plus}
"""
CORE_TEST = "from pkg.core import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"


def make_repo(folder: Path, files: int) -> Path:
    """A repository of about `files` files: modules, a test file per 20 of them, the bug."""
    repo = folder / "repo"
    modules = max(1, files * 20 // 21)
    (repo / "pkg").mkdir(parents=True)
    (repo / "tests").mkdir()
    (repo / "pkg" / "__init__.py").write_text("")
    (repo / "pkg" / "core.py").write_text(CORE)
    (repo / "tests" / "test_core.py").write_text(CORE_TEST)
    for n in range(modules):
        (repo / "pkg" / f"mod_{n}.py").write_text(MODULE.format(n=n))
        if n % 20 == 0:
            test = TEST.format(n=n, double=2 * n, plus=n + 1)
            (repo / "tests" / f"test_mod_{n}.py").write_text(test)
    (repo / "pyproject.toml").write_text('[project]\nname = "pkg"\nversion = "0"\n')
    env = {**os.environ, **GIT_IDENTITY}
    init = ["init", "-q", "-b", "main"]
    # No background `gc --auto`: it would pack the objects while the copies are made. Packed
    # once here instead, as a clone is (and as gc.auto leaves a repository past 6,700 loose
    # objects): 40,000 loose objects made each tree written ~3x slower than a real repository's.
    made = (["add", "-A"], ["commit", "-qm", "initial"], ["repack", "-adq"], ["prune-packed"])
    for args in (init, ["config", "gc.auto", "0"], *made):
        subprocess.run(["git", *args], cwd=repo, check=True, env=env)
    return repo


@dataclass
class Measured:
    wall: float
    tests: float
    model: float
    first_call: float
    peak_mib: float
    committed: bool
    context: str = ""  # context_ready's numbers, when the session says them

    @property
    def own(self) -> float:
        return self.wall - self.tests - self.model


def _union(intervals: list[tuple[float, float]]) -> float:
    total, end = 0.0, float("-inf")
    for start, stop in sorted(intervals):
        if stop > end:
            total += stop - max(start, end)
            end = stop
    return total


def read_events(lines: list[dict], started: float) -> tuple[float, float, float, str]:
    """(tests, model, first call, context) from the --json events (`at`: epoch seconds)."""
    runs: list[tuple[float, float]] = []
    open_runs: list[float] = []
    model, first_call, context = 0.0, -1.0, ""
    for i, event in enumerate(lines):
        kind, at = event.get("type"), event.get("at", started)
        if kind in ("tests_started", "baseline_started"):
            open_runs.append(at)
        elif kind in ("tests_finished", "baseline_ready") and open_runs:
            runs.append((open_runs.pop(0), at))
        elif kind == "model_call_started":
            first_call = at - started if first_call < 0 else first_call
            after = next((e["at"] for e in lines[i + 1 :] if "at" in e), at)
            model += after - at
        elif kind == "context_ready":
            context = (
                f"at {at - started:.2f} s, {event.get('seconds', 0):.2f} s, "
                f"{event.get('files_read', '?')} read, {event.get('files_reused', '?')} reused"
            )
    return _union(runs), model, first_call, context


def run_session(repo: Path, base_url: str, env: dict[str, str]) -> Measured:
    command = [
        *("tui-engineer", "run", REQUEST, "--yes", "--no-plan", "--json"),
        *("--base-url", base_url, "--model", "test-model", "--no-record"),
    ]
    started_epoch, started = time.time(), time.perf_counter()
    proc = subprocess.Popen(
        command, cwd=repo, env=env, stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    assert proc.stdout is not None and proc.stderr is not None
    out = proc.stdout.read()
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - started
    lines = []
    for line in out.decode(errors="replace").splitlines():
        try:
            lines.append(json.loads(line))
        except ValueError:
            continue
    tests, model, first_call, context = read_events(lines, started_epoch)
    committed = "a + b" in (repo / "pkg" / "core.py").read_text()
    if not committed:
        print(out.decode(errors="replace")[-2000:], err.decode(errors="replace")[-2000:])
    peak = usage.ru_maxrss / 1024  # KiB on Linux
    return Measured(wall, tests, model, first_call, peak, committed, context)


def measure(files: int, runs: int, venv: Path | None = None) -> tuple[Measured, Measured]:
    """(cold, warm): the lowest own share of `runs` pairs (`venv`: whose tool and python)."""
    colds, warms = [], []
    with tempfile.TemporaryDirectory(prefix="tui-scale-") as tmp:
        made = time.perf_counter()
        template = make_repo(Path(tmp) / "template", files)
        print(f"  made {files:,} files in {time.perf_counter() - made:.1f} s", flush=True)
        for run in range(runs):
            cache = Path(tmp) / f"cache{run}"
            env = {
                **os.environ, **GIT_IDENTITY,
                "OPENAI_API_KEY": "sk-benchmark", "XDG_CACHE_HOME": str(cache),
            }  # fmt: skip
            if venv is not None:
                env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
            repo = Path(tmp) / f"repo{run}"
            shutil.copytree(template, repo, symlinks=True)
            for kept in (colds, warms):
                with ScriptedServer() as server:
                    server.script(*[Reply(text=FIX)] * 4)
                    kept.append(run_session(repo, server.base_url, env))
                # The next session starts where this one did: the bug back, the commit gone.
                subprocess.run(["git", "reset", "-q", "--hard", "HEAD~1"], cwd=repo, check=True)
            shutil.rmtree(repo)
    return min(colds, key=lambda m: m.own), min(warms, key=lambda m: m.own)


def shadow_times(repo: Path, cache: Path) -> str:
    """A shadow made and removed on `repo`, in this process: a fresh checkout of every file (as
    every shadow was before issue 47's spare, and still is the first one), then one made from
    the spare the last one left (vcs/spare.py), after a commit changed one file."""
    os.environ["XDG_CACHE_HOME"] = str(cache)
    from tui_engineer.vcs import spare
    from tui_engineer.vcs.shadow import Shadow

    times = []
    for name, keep in (("fresh", False), ("fresh", True), ("spare", True)):
        made, cpu = time.perf_counter(), _cpu()
        shadow = Shadow.create(repo, session_id=f"bench-{name}")
        created, cpus = time.perf_counter() - made, _cpu() - cpu
        if name == "fresh" and keep:
            (repo / "pkg" / "core.py").write_text(CORE + "\n")
            subprocess.run(["git", "commit", "-qam", "a change"], cwd=repo, check=True)
        park, removing = spare.park, time.perf_counter()
        if not keep:
            spare.park = lambda *args: False  # type: ignore[assignment]  # deleted, as before
        try:
            shadow.remove()
        finally:
            spare.park = park  # type: ignore[assignment]
        times.append((created, cpus, time.perf_counter() - removing))
    subprocess.run(["git", "reset", "-q", "--hard", "HEAD~1"], cwd=repo, check=True)
    (fresh, fresh_cpu, deleted), (spare_made, spare_cpu, parked) = times[0], times[2]
    return (
        f"fresh checkout {fresh:.2f} s ({fresh_cpu:.2f} s CPU), deleted {deleted:.2f} s; "
        f"from the spare {spare_made:.2f} s ({spare_cpu:.2f} s CPU), "
        f"kept as the spare {parked:.2f} s"
    )


def side_by_side(repo: Path, cache: Path, width: int = 3) -> str:
    """A session's shadow, then `width` steps prepared beside it (a shadow each, made in
    threads as engine/ahead/pipeline.py makes them), all removed at the end: the first session
    on `repo` (no spare yet), then the next one after a one-file commit. For each: the session's
    shadow and the prepared steps' times and CPU, the disk the shadows hold while they live and
    what stays after, as the file system counts it (a file whose blocks are shared with
    another's, vcs/spare_clone.py, takes none of its own)."""
    os.environ["XDG_CACHE_HOME"] = str(cache)
    from concurrent.futures import ThreadPoolExecutor
    from functools import partial

    from tui_engineer.engine.ahead.stacked import stacked_shadow
    from tui_engineer.vcs.shadow import Shadow

    cache.mkdir(parents=True, exist_ok=True)
    empty, said = _used(cache), []
    for run in ("first", "next"):
        made, cpu = time.perf_counter(), _cpu()
        session = Shadow.create(repo, session_id=f"side-{run}")
        own, own_cpu = time.perf_counter() - made, _cpu() - cpu
        made, cpu = time.perf_counter(), _cpu()
        names = [f"side-{run}-next{k}" for k in range(width)]
        with ThreadPoolExecutor(width) as threads:
            ahead = list(
                threads.map(partial(stacked_shadow, session), names, [session.baseline] * width)
            )
        steps, steps_cpu = time.perf_counter() - made, _cpu() - cpu
        held = _used(cache) - empty
        for shadow in [session, *ahead]:
            shadow.remove()
        kept = _used(cache) - empty
        said.append(
            f"{run}: session's shadow {own:.2f} s ({own_cpu:.2f} s CPU), {width} prepared side by "
            f"side {steps:.2f} s ({steps_cpu:.2f} s CPU), held {held / MIB:.0f} MiB, kept after "
            f"{kept / MIB:.0f} MiB"
        )
        if run == "first":
            (repo / "pkg" / "core.py").write_text(CORE + "\n")
            subprocess.run(["git", "commit", "-qam", "a change"], cwd=repo, check=True)
    subprocess.run(["git", "reset", "-q", "--hard", "HEAD~1"], cwd=repo, check=True)
    return "; ".join(said)


MIB = 1024 * 1024


def _used(folder: Path) -> int:
    """Bytes in use on `folder`'s file system, once what was written has reached it."""
    os.sync()
    info = os.statvfs(folder)
    return (info.f_blocks - info.f_bfree) * info.f_frsize


def _cpu() -> float:
    """CPU seconds of this process and its finished children (the git processes)."""
    own = os.times()
    return own.user + own.system + own.children_user + own.children_system


# What a headless session has loaded by its first model call, cumulatively: each stage's code
# runs in a fresh interpreter, and the stage's share is its CPU less the stage before it.
FLOOR_STAGES = (
    ("python starting", "pass"),
    (
        "the headless command's own imports",
        "import tui_engineer.session.run, tui_engineer.headless.printer",
    ),
    ("the openai SDK (the model client)", "import tui_engineer.llm.client"),
)


def floor(venv: Path | None, runs: int = 3) -> list[tuple[str, float]]:
    """Each FLOOR_STAGES stage's CPU seconds (the least of `runs`): the process's, children's
    times as this process sees them, so the interpreter's own start counts too."""
    python = str(venv / "bin" / "python") if venv is not None else sys.executable
    totals, code = [], []
    for _, line in FLOOR_STAGES:
        code.append(line)
        seconds = []
        for _ in range(runs):
            before = os.times()
            subprocess.run([python, "-c", "; ".join(code)], check=True)
            after = os.times()
            seconds.append(
                after.children_user + after.children_system
                - before.children_user - before.children_system
            )  # fmt: skip
        totals.append(min(seconds))
    shares = [total - before for total, before in zip(totals, [0.0, *totals[:-1]], strict=True)]
    return [(name, share) for (name, _), share in zip(FLOOR_STAGES, shares, strict=True)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="1000,10000", help="file counts, comma separated")
    parser.add_argument("--big", action="store_true", help="also 40,000 and 200,000 files")
    parser.add_argument("--runs", type=int, default=1, help="keep the lowest of this many")
    parser.add_argument(
        "--shadows", action="store_true", help="only time a shadow made and removed"
    )
    parser.add_argument(
        "--cache", type=Path, default=None,
        help="with --shadows: the folder the repositories and shadows go in (for example one on "
        "a file system with reflinks: scripts/reflink_folder.sh)",
    )  # fmt: skip
    parser.add_argument(
        "--venv", type=Path, help="the virtual environment whose tui-engineer and python run"
    )
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",") if s]
    if args.big:
        sizes += [40_000, 200_000]
    header = (
        "| files | run | wall | tests | model | own share | over the smallest | first call "
        "| peak | map |"
    )
    rows = []
    smallest: dict[str, float] = {}
    for files in sizes:
        print(f"{files:,} files:", flush=True)
        if args.shadows:
            with tempfile.TemporaryDirectory(prefix="tui-scale-", dir=args.cache) as tmp:
                repo = make_repo(Path(tmp), files)
                rows.append(f"| {files:,} | shadow | {shadow_times(repo, Path(tmp) / 'cache')} |")
                print("  " + rows[-1], flush=True)
                shutil.rmtree(Path(tmp) / "cache")
                rows.append(f"| {files:,} | side by side | {side_by_side(repo, Path(tmp) / 'c')} |")
                print("  " + rows[-1], flush=True)
            continue
        measured = measure(files, args.runs, args.venv and args.venv.resolve())
        for kind, m in zip(("cold", "warm"), measured, strict=True):
            state = "" if m.committed else " NOT COMMITTED"
            over = m.own - smallest.setdefault(kind, m.own)
            rows.append(
                f"| {files:,} | {kind} | {m.wall:.2f} s | {m.tests:.2f} s | {m.model:.2f} s | "
                f"{m.own:.2f} s | {over:+.2f} s | {m.first_call:.2f} s | {m.peak_mib:.0f} MiB | "
                f"{m.context or '(not said)'}{state} |"
            )
            print("  " + rows[-1], flush=True)
    print(f"\nload {os.getloadavg()[0]:.1f} at {time.strftime('%H:%M')}\n{header}\n|{'---|' * 10}")
    print("\n".join(rows))
    if not args.shadows:
        parts = floor(args.venv and args.venv.resolve())
        print(f"\nThe floor: {sum(s for _, s in parts):.2f} s of CPU before any session's work")
        for name, seconds in parts:
            print(f"  {name}: {seconds:.2f} s")


if __name__ == "__main__":
    main()
