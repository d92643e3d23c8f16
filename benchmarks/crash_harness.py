"""Crash harness: kill real headless sessions at each phase, then check what is left.

Each session is a real `tui-engineer run ... --yes` on a fresh copy of the demo's sample repo,
talking to the built-in demo model over HTTP (tui_engineer/demo) and running its tests in the
local sandbox. The harness kills it with SIGKILL — the tool's process alone, or its whole
process group — at one phase:

  plan          as soon as the plan is printed (model calls in flight)
  tests         while a test run prints slowly (a test printing a line every 50 ms)
  announced     the moment the `decision` line of `--json` appears (read as it is written):
                an announced accept must be on disk, committed now or by the next start
  decided       after the decision, before the commit: as soon as the accept journal is
                written (a slow pre-commit hook keeps the commit from being made yet)
  pre-commit    during a silent, slow pre-commit hook
  accept        a random 0-40 ms after pre-commit started (objects, ref move, file writes)
  ref-moved     just after the branch moved, before any file is written
                (a reference-transaction hook that pauses once git committed the ref)
  post-commit   during a silent, slow post-commit hook
  random        at a random time in the session

and one phase kills nothing:

  disk-full     a session on a nearly full disk (the repository's, the cache's, or one
                holding both), left a random 0-300 KB free: what the session writes runs out
                at any point, from its start to the accept

Then it checks: the user's tree is as before the step or as committed (a tree that differs
from HEAD only while the accept journal names HEAD as its new commit is "committed, files
pending": the next start finishes it); no `.git/**/*.lock` is left; the next run starts,
finishes (exit 0) and leaves a clean tree, no lock, no journal and a clean `git fsck`. A step
killed after its decision and before its commit is committed by the next start (a decision is
never lost: DESIGN.md invariant 8). A disk-full session must end (exit 0, or the disk named
with its folder and how much is needed: never "This is a bug", never exit 70), leave no
half-written file or lock, and the next start, with the space freed, must finish clean. The
small disk is a tmpfs: mounted here when this user may, else in a user namespace by bwrap (the
harness runs itself again inside it), or `--disk DIR`, a folder on a small file system of yours.

Run: python benchmarks/crash_harness.py [--sessions 56] [--seed 1] [--json] [--phase announced]
Prints one line per session and the counts; exits 1 if any check failed.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tui_engineer.demo import DEFAULT_REQUEST, DemoServer, make_sample_repo  # noqa: E402
from tui_engineer.vcs.journal import JOURNAL  # noqa: E402

PHASES = [
    "plan", "tests", "announced", "decided", "pre-commit", "accept", "ref-moved", "post-commit",
    "random",
]  # fmt: skip
MODES = ["process", "group"]
DISK_FULL = "disk-full"
ON_DISK = ["both", "repo", "cache"]  # what a disk-full session has on the small disk
MOST_FREE = 300 * 1024  # a demo session writes about 220 KB in its repository, 150 KB of cache
DISK_BYTES = 16 * 1024 * 1024
NAMED = ("No space left on device", "Disk quota exceeded", "Read-only file system")
SLOW_TEST = """import sys, time


def test_prints_slowly():
    for i in range(30):
        print(f"line {i}", flush=True)
        sys.stdout.flush()
        time.sleep(0.05)
"""
HOOK_PAUSE = 1.5


@dataclass
class Outcome:
    phase: str
    mode: str
    killed: bool = False  # False: the session ended before the kill point
    state: str = ""  # before / committed / files-pending / BAD: ...
    locks_after_kill: list[str] = field(default_factory=list)
    recovery: str = ""  # what the next start said
    exit: int | None = None  # disk-full: the session's exit status
    said: str = ""  # disk-full: its line naming the full disk, if it stopped
    ended: str = ""  # disk-full: its last line ("Finished (…)", or the problem on stderr)
    free: int = 0  # disk-full: bytes left free when it started
    next_exit: int | None = None
    problems: list[str] = field(default_factory=list)


def git(root: Path, *args: str, check: bool = True) -> str:
    done = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True)
    if check and done.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)}: {done.stderr}")
    return done.stdout.strip()


def hook(root: Path, name: str, body: str) -> None:
    path = root / ".git" / "hooks" / name
    path.parent.mkdir(exist_ok=True)
    path.write_text("#!/bin/sh\n" + body + "\nexit 0\n")
    path.chmod(0o755)


def prepare_repo(parent: Path, phase: str, marker: Path) -> Path:
    root = make_sample_repo(parent)
    if phase == "tests":
        (root / "tests" / "test_slow.py").write_text(SLOW_TEST)
        (root / "pytest.ini").write_text("[pytest]\naddopts = -q -s\n")
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", "A slowly printing test")
    if phase in ("pre-commit", "decided"):
        hook(root, "pre-commit", f"touch {marker}\nsleep {HOOK_PAUSE}")
    if phase == "accept":
        hook(root, "pre-commit", f"touch {marker}")
    if phase == "post-commit":
        hook(root, "post-commit", f"touch {marker}\nsleep {HOOK_PAUSE}")
    if phase == "ref-moved":
        hook(
            root,
            "reference-transaction",
            f'[ "$1" = committed ] && grep -q "refs/heads/main$" && touch {marker} '
            f"&& sleep {HOOK_PAUSE}",
        )
    return root


def command(root: Path, base_url: str, json_lines: bool = False, record: bool = False) -> list[str]:
    return [
        sys.executable, "-m", "tui_engineer", "run", DEFAULT_REQUEST, "--yes",
        *([] if record else ["--no-record"]),
        "-C", str(root), "--base-url", base_url, "--model", "demo-model",
        "--test-cmd", f"{sys.executable} -m pytest", *(["--json"] if json_lines else []),
    ]  # fmt: skip


def environment(cache: Path | None = None) -> dict[str, str]:
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    env = {**os.environ, "OPENAI_API_KEY": "demo", "PYTHONUNBUFFERED": "1", "PYTHONPATH": path}
    return env if cache is None else {**env, "XDG_CACHE_HOME": str(cache)}


def wait_for_kill_point(
    child: subprocess.Popen[str], phase: str, marker: Path, rng: random.Random, root: Path
) -> bool:
    """Block until the phase's kill point; False if the session ended first."""
    deadline = time.monotonic() + 60
    delay = rng.uniform(0.0, 9.0) if phase == "random" else None
    start = time.monotonic()
    output = marker.with_suffix(".out")  # what the tool printed so far
    while time.monotonic() < deadline:
        if child.poll() is not None:
            return False
        if delay is not None and time.monotonic() - start >= delay:
            return True
        if phase == "decided" and (root / ".git" / JOURNAL).exists():
            return True
        if phase in ("pre-commit", "ref-moved", "post-commit") and marker.exists():
            time.sleep(0.2 if phase != "ref-moved" else 0.05)
            return True
        if phase == "accept" and marker.exists():
            time.sleep(rng.uniform(0.0, 0.04))
            return True
        text = output.read_text(errors="replace") if phase in ("plan", "tests") else ""
        if phase == "announced":
            if '"type": "decision"' in output.read_text(errors="replace"):
                return True
            time.sleep(0.0005)  # read as it is written: the kill comes at the announcement
            continue
        if phase == "plan" and "Plan (" in text:
            return True
        if phase == "tests" and "edited:" in text:
            time.sleep(rng.uniform(0.3, 1.5))
            return True
        time.sleep(0.01)
    return False


def kill(child: subprocess.Popen[str], mode: str) -> None:
    if mode == "group":
        os.killpg(child.pid, signal.SIGKILL)
    else:
        os.kill(child.pid, signal.SIGKILL)
    child.wait()
    deadline = time.monotonic() + 20  # orphans of a process-only kill (hooks, git) finish first
    while time.monotonic() < deadline:
        try:
            os.killpg(child.pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.05)
    os.killpg(child.pid, signal.SIGKILL)


def locks(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in (root / ".git").rglob("*.lock"))


def classify(root: Path, before: str) -> str:
    head = git(root, "rev-parse", "HEAD")
    dirty = git(root, "status", "--porcelain", "--untracked-files=all")
    if not dirty:
        return "before" if head == before else "committed"
    journal = root / ".git" / JOURNAL
    if head != before and journal.exists() and json.loads(journal.read_text()).get("new") == head:
        return "files-pending"
    if head == before:
        return "BAD: written but uncommitted:\n" + dirty
    return "BAD: tree differs from the committed step:\n" + dirty


def fsck_problems(root: Path) -> list[str]:
    fsck = ["git", "fsck", "--no-progress"]
    done = subprocess.run(fsck, cwd=root, capture_output=True, text=True)
    bad = [
        line
        for line in (done.stdout + done.stderr).splitlines()
        if not line.startswith(("dangling ", "notice:"))
    ]
    return bad + ([f"git fsck exited {done.returncode}"] if done.returncode else [])


def resume(root: Path, base_url: str, cache: Path) -> subprocess.CompletedProcess[str]:
    """What a user does once space is freed: go on with the stopped session, with
    --allow-dirty (a half-written file must not be kept as their edit); a new one when the
    stop came before any record of it."""
    again = [c for c in command(root, base_url, record=True) if c != DEFAULT_REQUEST] + [
        "--resume",
        "--allow-dirty",
    ]
    done = subprocess.run(again, env=environment(cache), capture_output=True, text=True)
    if done.returncode == 2 and ("Nothing to resume" in done.stderr or "holds no" in done.stderr):
        again = command(root, base_url, record=True) + ["--allow-dirty"]
        done = subprocess.run(again, env=environment(cache), capture_output=True, text=True)
    return done


def next_run(root: Path, base_url: str, outcome: Outcome, cache: Path | None = None) -> None:
    for name in ("reference-transaction",):
        (root / ".git" / "hooks" / name).unlink(missing_ok=True)
    if cache is not None:
        done = resume(root, base_url, cache)
    else:
        done = subprocess.run(
            command(root, base_url), env=environment(), capture_output=True, text=True, timeout=300
        )
    outcome.next_exit = done.returncode
    notes = [line for line in done.stdout.splitlines() if "An accept of" in line]
    outcome.recovery = notes[0] if notes else ""
    if "Kept your edits" in outcome.recovery:
        outcome.problems.append(f"a file of the step kept as the user's edit: {outcome.recovery}")
    if outcome.phase == "decided" and outcome.killed and "committed now" not in outcome.recovery:
        outcome.problems.append(f"the decided step was not committed: {outcome.recovery!r}")
    if outcome.phase == "announced" and outcome.killed:
        said = outcome.recovery
        kept = outcome.state == "committed" or "committed now" in said or "now written" in said
        if not kept:
            outcome.problems.append("LOST: the announced accept was neither committed nor kept")
    if done.returncode != 0 or "Finished" not in done.stdout:
        said = (done.stdout + done.stderr)[-600:]
        outcome.problems.append(f"next run exit {done.returncode}: {said}")
    if git(root, "status", "--porcelain", "--untracked-files=all"):
        outcome.problems.append("tree not clean after the next run")
    if locks(root):
        outcome.problems.append(f"locks after the next run: {locks(root)}")
    if (root / ".git" / JOURNAL).exists():
        outcome.problems.append("journal left after the next run")
    outcome.problems += fsck_problems(root)


def one_session(parent: Path, base_url: str, phase: str, mode: str, rng: random.Random) -> Outcome:
    outcome = Outcome(phase, mode)
    work = Path(tempfile.mkdtemp(dir=parent))
    marker = work / "marker"
    root = prepare_repo(work, phase, marker)
    before = git(root, "rev-parse", "HEAD")
    with open(marker.with_suffix(".out"), "w") as out:
        child = subprocess.Popen(
            command(root, base_url, json_lines=phase == "announced"),
            env=environment(),
            stdout=out,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )
        outcome.killed = wait_for_kill_point(child, phase, marker, rng, root)
        if outcome.killed:
            kill(child, mode)
        else:
            child.wait(timeout=120)
    outcome.locks_after_kill = locks(root)
    outcome.state = classify(root, before)
    if outcome.state.startswith("BAD"):
        outcome.problems.append(outcome.state)
    next_run(root, base_url, outcome)
    shutil.rmtree(work, ignore_errors=True)
    return outcome


def fill(disk: Path, free: int) -> Path:
    """A file taking all of `disk`'s room but `free` bytes."""
    stats = os.statvfs(disk)
    filler = disk / "filler"
    with open(filler, "wb") as out:
        left = stats.f_bavail * stats.f_frsize - free
        while left > 0:
            left -= out.write(b"\0" * min(left, 1 << 20))
    return filler


def disk_full_session(
    parent: Path, disk: Path, base_url: str, on_disk: str, rng: random.Random
) -> Outcome:
    """A session on a nearly full disk (see the module's docstring), then the next start."""
    outcome = Outcome(DISK_FULL, on_disk, free=rng.randrange(0, MOST_FREE))
    work = Path(tempfile.mkdtemp(dir=disk if on_disk in ("both", "repo") else parent))
    cache = Path(tempfile.mkdtemp(dir=disk if on_disk in ("both", "cache") else parent))
    root = prepare_repo(work, DISK_FULL, work / "marker")
    before = git(root, "rev-parse", "HEAD")
    filler = fill(disk, outcome.free)
    try:
        done = subprocess.run(
            command(root, base_url, record=True),
            env=environment(cache),
            capture_output=True,
            text=True,
            timeout=600,
        )
    finally:
        filler.unlink()  # the user frees space before the next start
    outcome.exit = done.returncode
    said = done.stdout + done.stderr
    outcome.said = next((ln for ln in said.splitlines() if named(ln)), "")
    last = done.stderr.strip().splitlines() or [
        ln for ln in done.stdout.splitlines() if ln.startswith("Finished")
    ]
    outcome.ended = last[-1][:160] if last else ""
    if done.returncode == 70 or "This is a bug" in said or "Traceback" in said:
        outcome.problems.append(f"a bug's exit ({done.returncode}): {said[-600:]}")
    elif done.returncode != 0 and not outcome.said:
        outcome.problems.append(f"exit {done.returncode} without the disk named: {said[-600:]}")
    outcome.locks_after_kill = locks(root)
    outcome.state = classify(root, before)
    if outcome.state.startswith("BAD"):
        outcome.problems.append(outcome.state)
    if outcome.locks_after_kill:
        outcome.problems.append(f"locks left: {outcome.locks_after_kill}")
    if done.returncode != 0:  # a finished session has nothing to go on with
        next_run(root, base_url, outcome, cache)
    elif (root / ".git" / JOURNAL).exists() or outcome.state != "committed":
        outcome.problems.append(f"finished, but the step is not all there: {outcome.state}")
    shutil.rmtree(work, ignore_errors=True)
    shutil.rmtree(cache, ignore_errors=True)
    return outcome


def named(line: str) -> bool:
    """A full disk said as such: what, which folder, how much room (or that it is read-only)."""
    return any(w in line for w in NAMED) and (" needed" in line or "cannot be written" in line)


def summary(outcomes: list[Outcome]) -> dict[str, object]:
    full = [o for o in outcomes if o.phase == DISK_FULL]
    outcomes = [o for o in outcomes if o.phase != DISK_FULL]
    counts = _kill_summary(outcomes) if outcomes else {}
    if full:
        counts["disk_full"] = {
            "sessions": len(full),
            "finished": sum(1 for o in full if o.exit == 0),
            "stopped_named": sum(1 for o in full if o.exit and o.said),
            "exit_70": sum(1 for o in full if o.exit == 70),
            "state_after": dict(Counter(o.state.split(":")[0] for o in full)),
            "next_run_ok": sum(1 for o in full if not o.problems),
            "failures": sum(1 for o in full if o.problems),
        }
        counts["failures"] = int(counts.get("failures", 0)) + counts["disk_full"]["failures"]
    return counts


def _kill_summary(outcomes: list[Outcome]) -> dict[str, object]:
    killed = [o for o in outcomes if o.killed]
    states = Counter(o.state.split(":")[0] for o in killed)
    recovered = Counter(
        "finished" if "files are now written" in o.recovery
        else "committed" if "committed now" in o.recovery
        else "rolled back" if "rolled back" in o.recovery
        else "none"
        for o in killed
    )  # fmt: skip
    return {
        "sessions": len(outcomes),
        "kills": len(killed),
        "kills_by_phase": dict(Counter(o.phase for o in killed)),
        "kills_by_mode": dict(Counter(o.mode for o in killed)),
        "state_after_kill": dict(states),
        "written_but_uncommitted": states.get("BAD", 0),
        "kills_leaving_a_lock": sum(1 for o in killed if o.locks_after_kill),
        "next_start_said": dict(recovered),
        "next_run_ok": sum(1 for o in outcomes if not o.problems),
        "failures": sum(1 for o in outcomes if o.problems),
    }


def every_phase(sessions: int) -> list[tuple[str, str]]:
    """(phase, kill mode) per session: each phase in turn, the two modes in alternate rounds."""
    return [(PHASES[i % len(PHASES)], MODES[(i // len(PHASES)) % 2]) for i in range(sessions)]


def disk_full_plan(sessions: int) -> list[tuple[str, str]]:
    """(disk-full, what is on the small disk) per session, in turn."""
    return [(DISK_FULL, ON_DISK[i % len(ON_DISK)]) for i in range(sessions)]


def run(
    plan: list[tuple[str, str]], seed: int = 1, quiet: bool = False, disk: Path | None = None
) -> tuple[list[Outcome], dict[str, object]]:
    """The sessions of `plan`; `disk`: a folder on a small file system (the disk-full phase)."""
    rng = random.Random(seed)
    outcomes: list[Outcome] = []
    with tempfile.TemporaryDirectory(prefix="tui-engineer-crash-") as tmp, DemoServer() as server:
        for i, (phase, mode) in enumerate(plan, 1):
            if phase == DISK_FULL:
                if disk is None:
                    raise ValueError("the disk-full phase needs a small disk")
                outcome = disk_full_session(Path(tmp), disk, server.base_url, mode, rng)
            else:
                outcome = one_session(Path(tmp), server.base_url, phase, mode, rng)
            outcomes.append(outcome)
            if not quiet:
                print(f"{i:3} {line(outcome)}", flush=True)
    return outcomes, summary(outcomes)


def line(outcome: Outcome) -> str:
    verdict = "ok" if not outcome.problems else "FAIL " + "; ".join(outcome.problems)
    if outcome.phase == DISK_FULL:
        return (
            f"{outcome.phase:11} {outcome.mode:7} free={outcome.free // 1024:3} KB "
            f"exit={outcome.exit} state={outcome.state.split(':')[0]:13} "
            f"said={outcome.said[:140] or '-'} next={outcome.recovery[:60] or '-'} {verdict}"
        )
    return (
        f"{outcome.phase:11} {outcome.mode:7} killed={outcome.killed!s:5} "
        f"state={outcome.state.split(':')[0]:13} locks={len(outcome.locks_after_kill)} "
        f"next={outcome.recovery[:60] or '-'} {verdict}"
    )


def on_small_disk(argv: list[str]) -> int | None:
    """Run the harness again where a fresh tmpfs is mounted (here if this user may mount,
    else in a user namespace of bwrap's); its exit status, or None when neither works."""
    where = Path(tempfile.mkdtemp(prefix="tui-engineer-small-disk-"))
    again = [sys.executable, str(Path(__file__).resolve()), *argv, "--disk", str(where)]
    mount = ["mount", "-t", "tmpfs", "-o", f"size={DISK_BYTES}", "tmpfs", str(where)]
    try:
        if subprocess.run(mount, capture_output=True, check=False).returncode == 0:
            try:
                return subprocess.run(again, check=False).returncode
            finally:
                subprocess.run(["umount", "-l", str(where)], check=False)
        from tui_engineer.sandbox.bwrap_program import find_bwrap

        bwrap = find_bwrap()
        if bwrap is None:
            return None
        namespace = [
            bwrap.path, "--dev-bind", "/", "/", "--unshare-user", "--die-with-parent",
            "--size", str(DISK_BYTES), "--tmpfs", str(where), "--",
        ]  # fmt: skip
        done = subprocess.run([*namespace, *again], check=False)
        return done.returncode
    finally:
        shutil.rmtree(where, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=56)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", action="store_true", help="print every outcome as JSON too")
    parser.add_argument(
        "--phase", choices=[*PHASES, DISK_FULL], help="kill at this phase only (or disk-full)"
    )
    parser.add_argument("--disk", type=Path, help="disk-full: a folder on a small file system")
    args = parser.parse_args()
    plan = every_phase(args.sessions)
    if args.phase == DISK_FULL:
        if args.disk is None:
            code = on_small_disk(sys.argv[1:])
            if code is None:
                print("disk-full: cannot mount a tmpfs here, nor in a user namespace (no bwrap)")
                return 1
            return code
        plan = disk_full_plan(args.sessions)
    elif args.phase:
        plan = [(args.phase, MODES[i % 2]) for i in range(args.sessions)]
    outcomes, counts = run(plan, args.seed, disk=args.disk)
    if args.json:
        print(json.dumps([asdict(o) for o in outcomes], indent=1))
    print(json.dumps(counts, indent=1))
    return 1 if counts["failures"] else 0


if __name__ == "__main__":
    sys.exit(main())
