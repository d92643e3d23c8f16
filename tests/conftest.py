"""Shared fixtures: a hermetic environment and real git repositories in temp folders."""

from __future__ import annotations

import gc
import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

GIT_IDENTITY = {
    "GIT_AUTHOR_NAME": "Test Author",
    "GIT_AUTHOR_EMAIL": "author@example.invalid",
    "GIT_COMMITTER_NAME": "Test Author",
    "GIT_COMMITTER_EMAIL": "author@example.invalid",
}


def pytest_configure(config: pytest.Config) -> None:
    """A run started in the background of a script (`pytest ... &`, as a CI job may be)
    inherits SIGINT ignored, and so would every process its tests start: the tests that press
    Ctrl-C need it as a terminal gives it. (A handler of ours is reset to the default at exec;
    an ignored signal stays ignored.)"""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(autouse=True)
def collected_again() -> Iterator[None]:
    """A headless run in this process sets aside what exists at its start (gc.freeze, in
    base/start_collection.py); the next test's garbage is this process's collector's again,
    and a collector a test left held is on again."""
    yield
    from tui_engineer.base import start_collection

    start_collection.release()
    if gc.get_freeze_count():
        gc.unfreeze()


@pytest.fixture(autouse=True)
def hermetic_env(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """No real keys or user config leak into a test; git gets an identity via env."""
    for name in list(os.environ):
        if name.startswith(("OPENAI_", "TUI_ENGINEER_")):
            monkeypatch.delenv(name)
    # Only this run writes what it skipped there (a pytest a test starts would add its own ids);
    # the variable is back for the run's own report at its end.
    monkeypatch.delenv("SKIPPED_TESTS_TO", raising=False)
    monkeypatch.delenv("TESTS_XDIST_LOADGROUP", raising=False)  # tests/workers.py: this run's
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / "config"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / "cache"))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / "data"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(home / "gitconfig"))
    for key, value in GIT_IDENTITY.items():
        monkeypatch.setenv(key, value)
    # `python` in the sessions' test commands is the one running these tests, activated or not
    # (`/path/to/venv/bin/python -m pytest`): a user's PATH may have no `python` at all.
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    # The pytest runs our tests start in temp repos need none of this machine's plugins; loading
    # them (textual, syrupy...) costs about a second per run.
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    # What this process learned of each model server (can it count tokens?) is kept by its
    # address; a later test's server may get the same port from the OS, and is another server.
    monkeypatch.setattr("tui_engineer.llm.tokens._KNOWN", {})
    monkeypatch.setattr("tui_engineer.llm.tokens._COUNTED", set())


@pytest.fixture
def api_key(monkeypatch: pytest.MonkeyPatch) -> str:
    """OPENAI_API_KEY set to the scripted server's key (hermetic_env removed any real one).
    A module whose every test starts a session says
    `pytestmark = pytest.mark.usefixtures("api_key")`."""
    from tests.engine_support import KEY

    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    return KEY


def git(cwd: Path, *args: str) -> str:
    """Run real git in `cwd` and return its stdout (raises on failure)."""
    done = subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True)
    return done.stdout.strip()


def fresh_python(code: str) -> str:
    """What `code` prints, run by this interpreter in a process of its own: one that imported
    nothing before, so its sys.modules says what `code` loaded (fails, with stderr, if it fails)."""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


def write_hook(root: Path, name: str, body: str) -> Path:
    """The git hook `name` of the repo at `root`: a shell script running `body`."""
    path = root / ".git" / "hooks" / name
    path.parent.mkdir(exist_ok=True)
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)
    return path


def write_files(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def start_conflicting_merge(root: Path, path: str) -> None:
    """Leave `root` (on branch main) in the middle of a merge that conflicts on `path`."""
    git(root, "checkout", "-q", "-b", "other")
    (root / path).write_text("other\n")
    git(root, "commit", "-q", "-am", "other")
    git(root, "checkout", "-q", "main")
    (root / path).write_text("main\n")
    git(root, "commit", "-q", "-am", "main")
    subprocess.run(["git", "merge", "other"], cwd=root, capture_output=True)  # exits 1: conflict


SAMPLE_FILES = {
    "calc.py": "def add(a, b):\n    return a + b\n",
    "tests/test_calc.py": "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n",
}


@pytest.fixture
def make_repo(tmp_path: Path) -> Callable[..., Path]:
    """Create a real git repo with `files` committed (default: a tiny calc project)."""

    def _make(
        files: dict[str, str] | None = None, *, name: str = "repo", commit: bool = True
    ) -> Path:
        return repo_at(tmp_path / name, files, commit=commit)

    return _make


def repo_at(root: Path, files: dict[str, str] | None = None, *, commit: bool = True) -> Path:
    """A real git repo made at `root` (a new folder) with `files` committed (default: a tiny calc
    project): make_repo's, for a repository that must live elsewhere (a small disk)."""
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    write_files(root, SAMPLE_FILES if files is None else files)
    if commit:
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", "initial")
    return root


# Shared fixtures from helper modules: `scripted_server` (a real OpenAI-compatible HTTP server on
# 127.0.0.1) and the docker ones (docker_client, docker_image, sandbox_template, make_sandbox),
# which skip with the reason where no Docker Engine is reachable, and `llama_server` (a real
# llama.cpp server with a tiny model, shared by the session), which skips without the llama extra.
# A small real file system for the disk-full tests, root or not: tests/disk_support.py.
from tests.disk_support import pytest_pyfunc_call, small_disk, small_disk_bytes  # noqa: E402, F401
from tests.docker_support import (  # noqa: E402, F401
    docker_client,
    docker_image,
    make_sandbox,
    sandbox_template,
)
from tests.llama_support import llama_server  # noqa: E402, F401
from tests.scripted_server import scripted_server  # noqa: E402, F401

# A test stuck on an await that nothing resolves fails after 10 min with every task's stack.
from tests.stuck_tasks import pytest_runtest_call  # noqa: E402, F401

# The slow tier (tests/tiers.py: skipped unless asked for with --slow or -m; CONTRIBUTING.md says
# how long each takes): the whole-process tests under tests/e2e/, and every test that starts a real
# Docker container or llama.cpp server. Tests starting tmux or a Ray cluster are marked where they
# are. tests/tiers.py also writes what a run skipped for .ci/run's full pass.
from tests.tiers import (  # noqa: E402, F401
    ONE_AT_A_TIME,
    pytest_addoption,
    pytest_collectreport,
    pytest_deselected,
    pytest_runtest_logreport,
    pytest_sessionfinish,
    runs_one_at_a_time,
    skip_slow_unless_asked,
)

# The suite runs in parallel (pytest-xdist) unless the run says `-n`: tests/workers.py.
from tests.workers import pytest_cmdline_main, pytest_xdist_auto_num_workers  # noqa: E402, F401

SLOW_FIXTURES = {"docker_client", "llama_server"}


@pytest.hookimpl(tryfirst=True)  # before xdist's own, which reads the groups into the ids
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if item.path.parent.name == "e2e" or SLOW_FIXTURES & set(item.fixturenames):
            item.add_marker(pytest.mark.slow)
        if runs_one_at_a_time(item):
            # On one worker, one after another: each takes a core or more (llama.cpp's servers
            # are the session's too, one set of them on that worker), beside the sessions.
            # `-m heavy` picks them (.ci/run's full pass runs them in a process of their own).
            item.add_marker(pytest.mark.xdist_group(ONE_AT_A_TIME))
            item.add_marker(pytest.mark.heavy)
    skip_slow_unless_asked(config, items)
