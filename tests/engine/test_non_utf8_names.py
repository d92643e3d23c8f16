"""A repository holding a file whose name is not UTF-8 (issue 24): Latin-1 `caf\\xe9.txt`, as
`git add` accepts on Linux. Every path through the code that reads names (start-up, shadow
creation, context and repo map, diff, commit, undo) carries the name exactly and shows it
readably (U+FFFD for the byte), never a traceback; an edit the model proposes to it applies to
exactly that file or is refused with a reason."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import git
from tests.engine_support import KEY, SUB, edit, run_headless
from tests.scripted_server import Reply, ScriptedServer
from tests.tiers import whole_session
from tui_engineer.engine import events as ev

RAW = b"caf\xe9.txt"  # the name on disk and in git, byte for byte
NAME = os.fsdecode(RAW)  # how Python carries it: "caf\udce9.txt"
SHOWN = "caf\ufffd.txt"  # how a user (and the model) reads it
CONTENT = "caf\u00e9 latin\n"


pytestmark = pytest.mark.usefixtures("api_key")


def latin1_repo(make_repo: Callable[..., Path], *more: bytes) -> Path:
    """The calc sample repo plus `caf\\xe9.txt` (and `more` such names), committed."""
    repo = make_repo()
    for raw in (RAW, *more):
        (repo / os.fsdecode(raw)).write_text(CONTENT, encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "latin-1 name")
    return repo


def tracked(repo: Path) -> list[bytes]:
    out = subprocess.run(["git", "ls-files", "-z"], cwd=repo, capture_output=True, check=True)
    return sorted(n for n in out.stdout.split(b"\0") if n)


@whole_session
@pytest.mark.parametrize("output", [[], ["--json"]])
def test_headless_session_starts_and_commits(
    make_repo, scripted_server: ScriptedServer, output: list[str]
) -> None:
    """Start-up, shadow creation, context, commit: the CLI as a user runs it, the edited file
    named readably in the output (progress lines or JSON events)."""
    repo = latin1_repo(make_repo)
    scripted_server.script(Reply(text=SUB + edit(SHOWN, CONTENT, "caf\u00e9 au lait\n")))
    done = subprocess.run(
        [sys.executable, "-m", "tui_engineer", "run", "add sub", "--yes", "--no-plan", *output]
        + ["--base-url", scripted_server.base_url, "--model", "test-model"],
        cwd=repo,
        capture_output=True,
        env={**os.environ, "OPENAI_API_KEY": KEY},
        timeout=120,
    )
    out, err = done.stdout.decode(), done.stderr.decode()  # UTF-8 through and through
    assert "Traceback" not in out + err, out + err
    assert done.returncode == 0, out + err
    assert SHOWN in out, out
    assert git(repo, "log", "-1", "--format=%s") == "add sub"
    assert "def sub" in (repo / "calc.py").read_text()
    assert (repo / NAME).read_text(encoding="utf-8") == "caf\u00e9 au lait\n"
    assert RAW in tracked(repo)


@whole_session
async def test_the_model_sees_the_name_readably(make_repo, scripted_server: ScriptedServer) -> None:
    """Context and repo map: the file is listed for the model, with U+FFFD for the byte (a
    surrogate could not even be encoded into the request)."""
    repo = latin1_repo(make_repo)
    scripted_server.script(Reply(text=SUB))
    result, seen = await run_headless(repo, "add sub", scripted_server.base_url, plan=False)
    assert result.exit_code == 0, [e.to_dict() for e in seen.of(ev.ErrorEvent)]
    prompt = scripted_server.chat_requests[0].messages[-1]["content"]
    files = prompt.split("Files in the repository:")[1]
    assert SHOWN in files


@whole_session
async def test_an_edit_to_the_shown_name_changes_exactly_that_file(
    make_repo, scripted_server: ScriptedServer
) -> None:
    """The model writes the name as it read it; the edit lands in `caf\xe9.txt`, the commit
    holds that name byte for byte, and no file named with U+FFFD appears."""
    repo = latin1_repo(make_repo)
    scripted_server.script(Reply(text=edit(SHOWN, CONTENT, "caf\u00e9 au lait\n")))
    result, seen = await run_headless(repo, f"edit {SHOWN}", scripted_server.base_url, plan=False)
    assert result.exit_code == 0, [e.to_dict() for e in seen.of(ev.ErrorEvent)]
    assert (repo / NAME).read_text(encoding="utf-8") == "caf\u00e9 au lait\n"
    assert not (repo / SHOWN).exists()
    assert tracked(repo) == sorted([RAW, b"calc.py", b"tests/test_calc.py"])
    changed = subprocess.run(
        ["git", "show", "--name-only", "-z", "--format=", "HEAD"], cwd=repo, capture_output=True
    ).stdout
    assert changed == RAW + b"\0"
    (applied,) = seen.of(ev.EditsApplied)
    assert applied.changed == (NAME,)  # events carry the exact name; front ends show it


@whole_session
async def test_an_edit_to_an_ambiguous_shown_name_is_refused(
    make_repo, scripted_server: ScriptedServer
) -> None:
    """`caf\xe9.txt` and `caf\xe8.txt` both read as `caf\ufffd.txt`: the edit is refused with
    the reason (the model hears it) and neither file changes."""
    repo = latin1_repo(make_repo, b"caf\xe8.txt")
    scripted_server.script(
        Reply(text=edit(SHOWN, CONTENT, "changed\n")), Reply(text=SUB), Reply(text=SUB)
    )
    result, seen = await run_headless(repo, "edit it", scripted_server.base_url, plan=False)
    retry = scripted_server.chat_requests[1].messages[-1]["content"]
    assert "2 files" in retry and SHOWN in retry, retry
    assert (repo / NAME).read_text(encoding="utf-8") == CONTENT
    assert (repo / os.fsdecode(b"caf\xe8.txt")).read_text(encoding="utf-8") == CONTENT
    assert result.exit_code == 0, [e.to_dict() for e in seen.of(ev.ErrorEvent)]


LATIN1_TESTS = {
    "calc.py": "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n",
    "tests/test_calc.py": (
        "import sys\n\nfrom calc import add, sub\n\n\ndef test_add():\n"
        "    assert add(2, 3) == 5\n\n\ndef test_sub():\n"
        "    sys.stdout.buffer.write(b'caf\\xe9 says \\xff\\n')\n    sys.stdout.flush()\n"
        "    assert sub(5, 3) == 2, 'caf\\xe9'\n"
    ),
}
SUB_BODY = "def sub(a, b):\n    return a - b\n"
SUB_BROKEN = "def sub(a, b):\n    return a + b  # broken\n"


@whole_session
async def test_test_output_that_is_not_utf8_still_reads(
    make_repo, scripted_server: ScriptedServer
) -> None:
    """A test printing Latin-1 bytes: the counts and the failing test names read, the bytes
    shown as U+FFFD; the model hears the failure."""
    repo = make_repo(LATIN1_TESTS)
    scripted_server.script(
        Reply(text=edit("calc.py", SUB_BODY, SUB_BROKEN)),
        Reply(text="sub adds instead of subtracting"),
        Reply(text=edit("calc.py", SUB_BROKEN, SUB_BODY.replace("b\n", "b  # fixed\n"))),
    )
    result, seen = await run_headless(repo, "touch sub", scripted_server.base_url, plan=False)
    first = seen.of(ev.TestsFinished)[0]
    assert (first.passed, first.failed) == (1, 1), first
    assert first.failing == ("tests/test_calc.py::test_sub",)
    assert "caf\ufffd says \ufffd" in first.output_tail, first.output_tail
    diagnose = scripted_server.chat_requests[1].messages[-1]["content"]
    assert "test_sub" in diagnose
    assert result.exit_code == 0, [e.to_dict() for e in seen.of(ev.ErrorEvent)]


def test_the_test_selection_fingerprint_keeps_the_name(make_repo) -> None:
    """Affected-tests selection fingerprints the shadow's files with git: the name is a key."""
    from tui_engineer.verify.selection import tree_fingerprint

    repo = latin1_repo(make_repo)
    assert NAME in tree_fingerprint(repo)


def cli_run(repo: Path, base_url: str, *args: str) -> tuple[int, str, str]:
    done = subprocess.run(
        [sys.executable, "-m", "tui_engineer", "run", "add sub", "--yes", "--no-plan", *args]
        + ["--base-url", base_url, "--model", "test-model"],
        cwd=repo,
        capture_output=True,
        env={**os.environ, "OPENAI_API_KEY": KEY},
        timeout=120,
    )
    return done.returncode, done.stdout.decode(), done.stderr.decode()


@whole_session
def test_an_uncommitted_file_so_named_is_listed_readably_and_kept(
    make_repo, scripted_server: ScriptedServer
) -> None:
    """Start-up with the file uncommitted: the refusal names it readably; with --allow-dirty
    the session builds on it and leaves it uncommitted, byte for byte."""
    repo = make_repo()
    (repo / NAME).write_text(CONTENT, encoding="utf-8")
    code, out, err = cli_run(repo, scripted_server.base_url)
    assert code == 2 and f"  {SHOWN}\n" in err, err
    scripted_server.script(Reply(text=SUB))
    code, out, err = cli_run(repo, scripted_server.base_url, "--allow-dirty")
    assert code == 0 and "Traceback" not in out + err, out + err
    assert git(repo, "log", "-1", "--format=%s") == "add sub"
    assert (repo / NAME).read_text(encoding="utf-8") == CONTENT
    assert RAW not in tracked(repo)


def test_an_ignored_file_so_named_is_found_ignored(make_repo) -> None:
    """git check-ignore quotes such a name unless -z: it was never found among the ignored."""
    from tui_engineer.verify.setup_failures import ignored_paths

    repo = make_repo({".gitignore": "*.log\n", "calc.py": "x = 1\n"})
    name = os.fsdecode(b"caf\xe9.log")
    (repo / name).write_text("log\n")
    assert ignored_paths(repo, [name, "calc.py"]) == [name]


@whole_session
def test_a_test_file_so_named_gets_the_reason_pytest_cannot_report(
    make_repo, scripted_server: ScriptedServer
) -> None:
    """pytest's --junitxml cannot encode such a test file's name (it crashes writing the report,
    before its summary): the start says so and what to do, not just pytest's traceback."""
    repo = make_repo()
    (repo / "tests" / os.fsdecode(b"test_caf\xe9.py")).write_text("def test_two():\n    pass\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "latin-1 test file")
    scripted_server.script(Reply(text=SUB))  # the step is proposed while the baseline runs
    code, out, err = cli_run(repo, scripted_server.base_url)
    assert code == 2, out + err
    said = out + err
    assert "tests/test_caf\ufffd.py" in said and "git mv" in said, said
