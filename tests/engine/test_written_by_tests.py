"""Files a test run writes (a snapshot, coverage data, a rewritten lock file) are not the step's
(issue 33, part 2; DESIGN.md invariant 9): the step's change is the model's edits and the
human's own; what the tests created or changed is shown apart ("written by the tests"), left out
of the commit, and committed only when the human keeps it, file by file.

The target repository is the calc project with a red `test_add` (`add` returns `a - b`) and a
test that, like a snapshot or coverage tool, writes `tests/snapshot.txt` (once) and
`coverage.dat` (each run, from what `add` returns) in its working folder. The baseline's run
writes them in the shadow before any edit."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import git
from tests.engine_support import KEY, StepReviewer, edit, plan_reply, run_headless
from tests.scripted_server import Reply, ScriptedServer
from tests.tiers import whole_session
from tests.timing_support import run_answering
from tui_engineer.engine import events as ev
from tui_engineer.engine.reviews.review import Decision, Proposal

WRITER_TEST = (
    "from pathlib import Path\n\nfrom calc import add\n\n\n"
    "def test_writes_its_files():\n"
    "    snapshot = Path(__file__).parent / 'snapshot.txt'\n"
    "    if not snapshot.exists():\n"
    "        snapshot.write_text('snapshot\\n')\n"
    "    Path('coverage.dat').write_text(f'add(2, 3) -> {add(2, 3)}\\n')\n"
    "    assert add(3, 0) == 3\n"  # passes on the starting commit; `a * b` breaks it
)
FILES = {
    "calc.py": "def add(a, b):\n    return a - b\n",
    "tests/test_calc.py": "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n",
    "tests/test_writer.py": WRITER_TEST,
}
FIX = "The sign is wrong.\n\n" + edit("calc.py", "    return a - b\n", "    return a + b\n")
WRONG = edit("calc.py", "    return a - b\n", "    return a * b\n")
RIGHT = edit("calc.py", "    return a * b\n", "    return a + b\n")
WRITTEN = [["A", "coverage.dat"], ["A", "tests/snapshot.txt"]]


pytestmark = pytest.mark.usefixtures("api_key")


def run_cli(repo: Path, server: ScriptedServer, *args: str) -> list[dict]:
    """`tui-engineer run "fix add" --yes --no-plan --json ARGS` as a user runs it: its events."""
    done = subprocess.run(
        [sys.executable, "-m", "tui_engineer", "run", "fix add", "--yes", "--no-plan", "--json"]
        + ["--base-url", server.base_url, "--model", "test-model", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        env={**os.environ, "OPENAI_API_KEY": KEY},
        timeout=180,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]


def of(events: list[dict], kind: str) -> list[dict]:
    return [e for e in events if e["type"] == kind]


def committed(repo: Path) -> list[str]:
    return git(repo, "show", "--name-status", "--format=", "HEAD").splitlines()


def test_the_commit_holds_only_the_models_edit(make_repo, scripted_server: ScriptedServer) -> None:
    repo = make_repo(FILES)
    scripted_server.script(Reply(text=FIX))
    events = run_cli(repo, scripted_server)

    [proposal] = of(events, "proposal_ready")
    assert proposal["changes"] == [["M", "calc.py"]]
    assert "calc.py" in proposal["diff"]
    assert "coverage.dat" not in proposal["diff"] and "snapshot" not in proposal["diff"]
    assert proposal["written_by_tests"] == WRITTEN
    assert "+add(2, 3) -> 5" in proposal["written_diff"]
    assert committed(repo) == ["M\tcalc.py"]
    assert git(repo, "status", "--porcelain") == ""  # nothing of the tests' in the user's tree


class Keeping(StepReviewer):
    """A reviewer who accepts, keeping `kept` of the files the tests wrote; it notes what each
    review showed."""

    def __init__(self, *kept: str) -> None:
        self.kept = kept
        self.shown: list[Proposal] = []

    async def review(self, proposal: Proposal) -> Decision:
        self.shown.append(proposal)
        return Decision("accept", kept_written=self.kept)


@whole_session
async def test_a_file_the_tests_wrote_is_committed_when_kept(
    make_repo, scripted_server: ScriptedServer
) -> None:
    repo = make_repo(FILES)
    scripted_server.script(Reply(text=FIX))
    reviewer = Keeping("coverage.dat")
    result, seen = await run_headless(
        repo, "fix add", scripted_server.base_url, reviewer=reviewer, plan=False
    )

    assert result.exit_code == 0, [e.to_dict() for e in seen.of(ev.ErrorEvent)]
    [shown] = reviewer.shown
    assert shown.written == (("A", "coverage.dat"), ("A", "tests/snapshot.txt"))
    assert committed(repo) == ["M\tcalc.py", "A\tcoverage.dat"]
    assert (repo / "coverage.dat").read_text() == "add(2, 3) -> 5\n"  # as the last run left it
    assert not (repo / "tests" / "snapshot.txt").exists()
    assert "Kept files the tests wrote: coverage.dat." in git(repo, "log", "-1", "--format=%B")
    [decision] = seen.of(ev.DecisionMade)
    assert decision.kept_written == ("coverage.dat",)


@whole_session
async def test_a_wrong_first_fix_then_the_right_one_commits_only_the_edit(
    make_repo, scripted_server: ScriptedServer
) -> None:
    """Each run rewrites coverage.dat: the fix loop is not fooled (the diff the model is shown
    and the "changed nothing" check hold only the edits), nor is the commit."""
    repo = make_repo(FILES)
    scripted_server.script(Reply(text=WRONG), Reply(text="add multiplies."), Reply(text=RIGHT))
    result, seen = await run_headless(repo, "fix add", scripted_server.base_url, plan=False)

    assert result.exit_code == 0, [e.to_dict() for e in seen.of(ev.ErrorEvent)]
    assert [f.ok for f in seen.of(ev.TestsFinished)] == [False, True]
    diagnose = scripted_server.chat_requests[1].messages[-1]["content"]
    assert "+    return a * b" in diagnose and "b/coverage.dat" not in diagnose
    [proposal] = seen.of(ev.ProposalReady)
    assert proposal.changes == (("M", "calc.py"),)
    assert proposal.written_by_tests == (("A", "coverage.dat"), ("A", "tests/snapshot.txt"))
    assert committed(repo) == ["M\tcalc.py"]


@whole_session
async def test_a_file_the_model_wrote_stays_its_own_when_a_test_rewrites_it(
    make_repo, scripted_server: ScriptedServer
) -> None:
    repo = make_repo(FILES)
    # A FILE block: coverage.dat is in the shadow already (the baseline's run wrote it).
    whole = "coverage.dat\n```\n<<<<<<< FILE\nplaceholder\n>>>>>>> FILE\n```\n"
    scripted_server.script(Reply(text=FIX + whole))
    result, seen = await run_headless(repo, "fix add", scripted_server.base_url, plan=False)

    assert result.exit_code == 0, [e.to_dict() for e in seen.of(ev.ErrorEvent)]
    [proposal] = seen.of(ev.ProposalReady)
    assert sorted(proposal.changes) == [("A", "coverage.dat"), ("M", "calc.py")]
    assert proposal.written_by_tests == (("A", "tests/snapshot.txt"),)
    assert sorted(committed(repo)) == ["A\tcoverage.dat", "M\tcalc.py"]


@whole_session
async def test_a_step_prepared_ahead_is_built_and_committed_without_them(
    make_repo, scripted_server: ScriptedServer
) -> None:
    """Step 2 is prepared while step 1 is reviewed, on step 1's files (not on what step 1's
    tests wrote); each commit holds its own edits only."""
    repo = make_repo(FILES)
    prepared = asyncio.Event()

    class Slow(Keeping):
        async def review(self, proposal: Proposal) -> Decision:
            if not self.shown:
                await asyncio.wait_for(prepared.wait(), 30)
            return await super().review(proposal)

    def sink(event: ev.Event) -> None:
        if isinstance(event, ev.NextStepPrepared) and event.ready:
            prepared.set()

    mul = edit("calc.py", "    return a + b\n", "    return a + b\n\n\ndef mul(a, b):\n"
               "    return a * b\n")  # fmt: skip
    scripted_server.script(
        Reply(text=plan_reply("Fix add", "Add mul")), Reply(text=FIX), Reply(text=mul)
    )
    reviewer = Slow()
    result, seen = await run_headless(
        repo, "fix add, add mul", scripted_server.base_url, reviewer=reviewer, sink=sink,
        pipeline=True,
    )  # fmt: skip

    assert result.exit_code == 0, [e.to_dict() for e in seen.of(ev.ErrorEvent)]
    assert [p.written for p in reviewer.shown] == [
        (("A", "coverage.dat"), ("A", "tests/snapshot.txt")),
    ] * 2
    assert committed(repo) == ["M\tcalc.py"]
    assert git(repo, "show", "--name-status", "--format=", "HEAD~1") == "M\tcalc.py"
    assert "def mul" in (repo / "calc.py").read_text()


@whole_session
def test_p_keeps_a_file_the_tests_wrote_file_by_file(
    make_repo, scripted_server: ScriptedServer
) -> None:
    """`tui-engineer run` asking on the terminal: the review names them apart; `p` asks hunk
    by hunk, then file by file for what the tests wrote (left out unless kept)."""
    repo = make_repo(FILES)
    scripted_server.script(Reply(text=FIX))
    # The hunk, coverage.dat kept, the snapshot not; done.
    done = run_answering(repo, scripted_server, "fix add", "p\ny\ny\nn\n\n\n", "--no-plan")

    assert done.returncode == 0, done.stdout + done.stderr
    written = "written by the tests, not committed: coverage.dat (new), tests/snapshot.txt (new)"
    assert f"  {written}\n" in done.stdout  # the progress line
    assert f"  {written} (p to keep one)" in done.stdout  # the review's
    assert "Commit coverage.dat too (written by the tests) [y,N,q]?" in done.stdout
    assert "kept, written by the tests: coverage.dat" in done.stdout
    assert committed(repo) == ["M\tcalc.py", "A\tcoverage.dat"]
    assert not (repo / "tests" / "snapshot.txt").exists()


CARGO = shutil.which("cargo") or (
    "/root/.cargo/bin/cargo" if os.path.exists("/root/.cargo/bin/cargo") else None
)
STALE_LOCK = (  # an older Cargo's lock, with the crate's old version: `cargo test` rewrites it
    "# This file is automatically @generated by Cargo.\n"
    "# It is not intended for manual editing.\n"
    'version = 3\n\n[[package]]\nname = "calc"\nversion = "0.0.9"\n'
)
CRATE = {
    "Cargo.toml": '[package]\nname = "calc"\nversion = "0.1.0"\nedition = "2021"\n\n'
    "[dependencies]\n",
    "Cargo.lock": STALE_LOCK,
    ".gitignore": "target/\n",
    "src/lib.rs": "pub fn add(a: i64, b: i64) -> i64 {\n    a + b\n}\n\n"
    "#[cfg(test)]\nmod tests {\n    use super::*;\n\n"
    "    #[test]\n    fn adds() {\n        assert_eq!(add(2, 3), 5);\n    }\n}\n",
}
MUL_RS = edit(
    "src/lib.rs",
    "    a + b\n}\n\n",
    "    a + b\n}\n\npub fn mul(a: i64, b: i64) -> i64 {\n    a * b\n}\n\n",
)


@pytest.mark.skipif(CARGO is None, reason="cargo is not installed")
async def test_a_lock_file_cargo_test_rewrites_is_not_committed(
    make_repo, scripted_server: ScriptedServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    if shutil.which("cargo") is None:
        monkeypatch.setenv("PATH", f"{Path(CARGO).parent}:{os.environ.get('PATH', '')}")
    repo = make_repo(CRATE)
    scripted_server.script(Reply(text=MUL_RS))
    result, seen = await run_headless(repo, "add mul", scripted_server.base_url, plan=False)

    assert result.exit_code == 0, [e.to_dict() for e in seen.of(ev.ErrorEvent)]
    assert seen.of(ev.TestsStarted)[0].command.startswith("cargo test")
    [proposal] = seen.of(ev.ProposalReady)
    assert proposal.changes == (("M", "src/lib.rs"),)
    assert proposal.written_by_tests == (("M", "Cargo.lock"),)
    assert "-version = 3" in proposal.written_diff
    assert committed(repo) == ["M\tsrc/lib.rs"]
    assert (repo / "Cargo.lock").read_text() == STALE_LOCK
