"""tui-engineer as a user has it (issue 18): the built wheel installed without extras into a
fresh venv outside the checkout, the target repo's tests in the repo's own venv (pytest from the
package index, no pytest-testmon), two real headless sessions in the same repo against the
scripted server (the real openai client over HTTP).

The suite takes over 3 s (a sleeping test), so the second session narrows its runs: that is
where a missing pytest-testmon used to turn every run into "exit code 4" and a fix loop."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import git
from tests.engine_support import KEY, edit
from tests.env_support import VENV_PROJECT, project_venv
from tests.env_support import pytest_wheels as pytest_wheels  # a fixture
from tests.scripted_server import Reply, ScriptedServer

CHECKOUT = Path(__file__).resolve().parents[2]
FILES = {
    **VENV_PROJECT,
    "tests/test_slow.py": "import time\n\n\ndef test_slow():\n    time.sleep(3.2)\n",
}


# Both tests share one wheel, built in the checkout (pip's build folder there): on parallel
# workers each would build it at once and trip over the other's files. They do not: like every
# slow test of a heavy process they run one at a time on one worker (tests/conftest.py).


def _run(args: list[str], **kwargs) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, capture_output=True, text=True, check=False, **kwargs)


@pytest.fixture(scope="session")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The `tui-engineer` program of a fresh venv holding the wheel built from this checkout,
    installed without extras (its dependencies from the package index)."""
    where = tmp_path_factory.mktemp("user-install")
    built = _run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(where),
                  str(CHECKOUT)], timeout=300)  # fmt: skip
    assert built.returncode == 0, built.stderr[-2000:]
    (wheel,) = where.glob("tui_engineer-*.whl")
    venv = where / "venv"
    _run([sys.executable, "-m", "venv", str(venv)], timeout=120)
    done = _run([str(venv / "bin/pip"), "install", "-q", str(wheel)], timeout=600)
    if done.returncode != 0:
        pytest.skip(
            f"the wheel's dependencies did not install from the index: {done.stderr[-500:]}"
        )
    extras = _run([str(venv / "bin/python"), "-c", "import pytest_testmon"])
    assert extras.returncode != 0, "the user's install must not have the dev extras"
    return venv / "bin" / "tui-engineer"


def _session(program: Path, repo: Path, server: ScriptedServer) -> subprocess.CompletedProcess:
    venv = repo / ".venv"
    env = {
        **os.environ,
        "OPENAI_API_KEY": KEY,
        "VIRTUAL_ENV": str(venv),  # the project's venv is the active one
        "PATH": f"{venv / 'bin'}{os.pathsep}{os.environ['PATH']}",
    }
    args = [
        str(program),
        "run",
        "change calc",
        "--yes",
        "--no-plan",
        "--model",
        "test-model",
        "--base-url",
        server.base_url,
        "--test-cmd",
        "python -m pytest -q",
        "-C",
        str(repo),
    ]
    return _run(args, env=env, timeout=300, cwd=repo)  # fmt: skip


def test_two_sessions_from_a_users_install_commit_in_a_repo_without_testmon(
    installed: Path, make_repo, scripted_server: ScriptedServer, pytest_wheels
) -> None:
    repo = make_repo(FILES)
    project_venv(repo, pytest_wheels)
    scripted_server.script(Reply(text=edit("calc.py", "    return a + b\n", "    return b + a\n")))
    first = _session(installed, repo, scripted_server)
    assert first.returncode == 0, first.stdout + first.stderr
    scripted_server.script(
        Reply(text=edit("calc.py", "    return a - b\n", "    return -(b - a)\n"))
    )
    second = _session(installed, repo, scripted_server)
    assert second.returncode == 0, second.stdout + second.stderr
    assert "exit code 4" not in second.stdout
    assert "by name and imports" in second.stdout  # narrowed without testmon, and said so
    assert len(scripted_server.chat_requests) == 2  # one edit per session, no fix loop
    assert git(repo, "log", "--format=%s").splitlines() == ["change calc", "change calc", "initial"]


def test_a_unittest_project_whose_venv_has_no_pytest_commits_from_a_users_install(
    installed: Path, make_repo, scripted_server: ScriptedServer
) -> None:
    """No --test-cmd: the command is found as a user's would be. The project's venv has nothing
    installed (no pytest), and is active."""
    from tests.engine.test_unittest_sessions import FILES as UNITTEST_FILES
    from tests.engine.test_unittest_sessions import FIX_ADD

    repo = make_repo(UNITTEST_FILES)
    venv = project_venv(repo, [])
    env = {**os.environ, "OPENAI_API_KEY": KEY, "VIRTUAL_ENV": str(venv),
           "PATH": f"{venv / 'bin'}{os.pathsep}{os.environ['PATH']}"}  # fmt: skip
    scripted_server.script(Reply(text=FIX_ADD))
    done = _run(
        [str(installed), "run", "fix add", "--yes", "--no-plan", "--model", "test-model",
         "--base-url", scripted_server.base_url],
        env=env, timeout=300, cwd=repo,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "tests: python -m unittest" in done.stdout
    assert "1 failing before this session: tests/test_calc.py::CalcTests::test_mul" in done.stdout
    assert git(repo, "log", "-1", "--format=%s") == "fix add"
