"""`tui-engineer doctor`: one command that checks what a session needs, says what to do for each
miss, and exits 0 only when a session can start (issue 23). Real git, the real sandbox, the
scripted server over real HTTP, the repo's real test command."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import start_conflicting_merge
from tests.engine_support import KEY
from tests.sandbox_support import APPARMOR, path_without, stand_in_bwrap
from tests.scripted_server import ScriptedServer
from tui_engineer.vcs.shadow import Shadow


def doctor(repo: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tui_engineer", "doctor", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        timeout=180,
    )


def line(out: str, topic: str) -> str:
    return next(x for x in out.splitlines() if x[2:].startswith(topic + ":"))


def test_a_ready_repo_passes_every_check(make_repo, scripted_server: ScriptedServer) -> None:
    repo = make_repo()
    Shadow.create(repo, session_id="last").remove()  # a session's shadow, kept as a spare
    url = scripted_server.base_url
    done = doctor(repo, "--base-url", url, "--model", "test-model", OPENAI_API_KEY=KEY)
    out = done.stdout
    assert done.returncode == 0, out + done.stderr
    assert line(out, "git").startswith("✓") and "Test Author" in line(out, "git")
    assert line(out, "repository").startswith("✓") and "clean" in line(out, "repository")
    spares = line(out, "spares")
    assert spares.startswith("✓ spares: 1 for this repository (0 MiB), 1 in all (0 MiB), in ")
    assert spares.endswith("tui-engineer/spares (safe to delete when no session runs)"), spares
    assert "bwrap" in line(out, "sandbox") and line(out, "network").startswith("✓ network: off")
    assert line(out, "model server") == f"✓ model server: {url} answers and serves test-model"
    tests = line(out, "tests")
    assert tests.startswith("✓ tests: `python -m pytest`") and "1 passed" in tests
    assert out.rstrip().endswith("A session can start here.")
    assert scripted_server.chat_requests == []  # no model call, no tokens spent


def test_each_miss_says_what_to_do_and_the_exit_is_1(
    make_repo, scripted_server: ScriptedServer, tmp_path: Path
) -> None:
    """A merge in progress, no API key, and a bwrap refused namespaces (Ubuntu's AppArmor
    rule): each is a ✗ line followed by what to do."""
    repo = make_repo({"notes.txt": "start\n"})
    start_conflicting_merge(repo, "notes.txt")
    folder = tmp_path / "bin"
    path = path_without(folder, "bwrap")
    stand_in_bwrap(folder, APPARMOR)
    done = doctor(repo, "--base-url", scripted_server.base_url, PATH=path)
    out = done.stdout
    assert done.returncode == 1, out + done.stderr
    assert "Traceback" not in out + done.stderr
    assert line(out, "repository").startswith("✗") and "merge is in progress" in out
    assert "git merge --abort" in out
    assert line(out, "sandbox").startswith("✗") and APPARMOR in out
    assert "--sandbox none" in out
    assert line(out, "model server").startswith("✗") and "export OPENAI_API_KEY=" in out
    assert out.rstrip().endswith("fix the ✗ lines above.")


def test_it_shows_the_agents_md_it_read_and_the_test_command_from_it(
    make_repo, scripted_server: ScriptedServer
) -> None:
    from tests.conftest import SAMPLE_FILES

    rules = "".join(f"- rule {n}: keep functions short\n" for n in range(300))
    agents = f"Test command: `python -m pytest -x tests`\n{rules}"
    repo = make_repo({**SAMPLE_FILES, "AGENTS.md": agents})
    url = scripted_server.base_url
    done = doctor(repo, "--base-url", url, "--model", "test-model", OPENAI_API_KEY=KEY)
    out = done.stdout
    assert done.returncode == 0, out + done.stderr
    read = line(out, "agent instructions")
    assert read.startswith("! agent instructions:"), read  # cut: a warning to read
    assert str(repo / "AGENTS.md") in read and "test command: python -m pytest -x tests" in read
    assert "the model is given its first" in out  # the cut is said
    tests = line(out, "tests")
    assert "`python -m pytest -x tests` (pytest), from AGENTS.md" in tests and "1 passed" in tests


def test_a_unittest_project_in_a_venv_without_pytest_is_tried_with_unittest(
    make_repo, scripted_server: ScriptedServer
) -> None:
    """Its own .venv holds no pytest and is active: the line names unittest and why."""
    from tests.engine.test_unittest_sessions import FILES

    repo = make_repo(FILES)
    venv = repo / ".venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    done = doctor(
        repo, "--base-url", scripted_server.base_url, "--model", "test-model",
        OPENAI_API_KEY=KEY, VIRTUAL_ENV=str(venv), PATH=f"{venv}/bin:{os.environ['PATH']}",
    )  # fmt: skip
    tests = line(done.stdout, "tests")
    assert tests.startswith(
        "! tests: `python -m unittest` (unittest), auto-detected (tests/ folder: unittest "
        f"tests, no pytest in the active virtualenv ({venv}))"
    ), done.stdout
    assert "1 passed, 2 failed" in tests
