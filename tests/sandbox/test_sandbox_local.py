"""LocalSandbox on real tiny repos with real pytest subprocesses."""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import git
from tui_engineer.base.errors import UserError
from tui_engineer.sandbox import LocalSandbox, Sandbox
from tui_engineer.verify import CommandNotFound, TestReport, run_command, scrubbed_env

PY = sys.executable
PYTEST = f"{PY} -m pytest"

MakeRepo = Callable[..., Path]


@pytest.fixture(autouse=True)
def fast_pytest(monkeypatch: pytest.MonkeyPatch) -> None:
    # Speed only: the inner pytest skips third-party plugins (this machine's take ~1 s to load).
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")


async def run(
    workdir: Path, command: str = PYTEST, timeout: float = 60, secret_names: tuple[str, ...] = ()
) -> TestReport:
    return await LocalSandbox(secret_names=secret_names).run_tests(
        workdir, command, timeout=timeout
    )


def test_local_sandbox_is_a_sandbox() -> None:
    sandbox = LocalSandbox()
    assert isinstance(sandbox, Sandbox)
    assert sandbox.name == "local"


async def test_passing_suite_leaves_the_worktree_clean(make_repo: MakeRepo) -> None:
    repo = make_repo()
    lines: list[str] = []
    report = await LocalSandbox().run_tests(repo, PYTEST, timeout=60, on_output=lines.append)
    assert report.ok, report.for_model()
    assert report.structured
    assert (report.passed, report.failed, report.errors) == (1, 0, 0)
    assert report.summary().startswith("1 passed in ")
    assert report.command == PYTEST  # as the user wrote it, without our extra flags
    assert any("1 passed" in line for line in lines)
    # No .pytest_cache, __pycache__ or JUnit file for the step's diff to pick up.
    assert git(repo, "status", "--porcelain", "--ignored") == ""


async def test_failing_suite_reports_ids_and_assertion(make_repo: MakeRepo) -> None:
    repo = make_repo(
        {
            "calc.py": "def add(a, b):\n    return a - b\n",
            "tests/test_calc.py": (
                "from calc import add\n\n\n"
                "def test_add():\n    assert add(2, 3) == 5\n\n\n"
                "class TestMore:\n    def test_zero(self):\n        assert add(0, 0) == 0\n\n"
                "    def test_neg(self):\n        assert add(-1, -1) == -2\n"
            ),
        }
    )
    report = await run(repo)
    assert not report.ok
    assert (report.passed, report.failed, report.errors, report.skipped) == (1, 2, 0, 0)
    assert report.summary().startswith("1 passed, 2 failed in ")
    ids = [f.test_id for f in report.failures]
    assert ids == ["tests/test_calc.py::test_add", "tests/test_calc.py::TestMore::test_neg"]
    first = report.failures[0]
    assert first.message.startswith("assert -1 == 5")
    assert "E       assert -1 == 5" in first.traceback
    assert "tests/test_calc.py:5: AssertionError" in first.traceback
    assert "tests/test_calc.py::test_add" in report.for_model()


async def test_collection_error_counts_as_an_error(make_repo: MakeRepo) -> None:
    repo = make_repo({"tests/test_broken.py": "import no_such_module\n\ndef test_x():\n    pass\n"})
    report = await run(repo)
    assert not report.ok
    assert report.structured
    assert report.errors == 1
    assert report.failures[0].test_id == "tests/test_broken.py"
    assert "No module named 'no_such_module'" in report.failures[0].traceback


async def test_skipped_tests_are_counted(make_repo: MakeRepo) -> None:
    repo = make_repo(
        {
            "tests/test_s.py": (
                "import pytest\n\n\n@pytest.mark.skip(reason='later')\n"
                "def test_later():\n    pass\n\n\ndef test_now():\n    pass\n"
            )
        }
    )
    report = await run(repo)
    assert report.ok
    assert (report.passed, report.skipped) == (1, 1)
    assert report.summary().startswith("1 passed, 1 skipped in ")


async def test_pytest_that_writes_no_report_falls_back_and_says_so(make_repo: MakeRepo) -> None:
    repo = make_repo()
    report = await run(repo, f"{PYTEST} --no-such-option")
    assert not report.ok
    assert not report.structured
    assert report.exit_code == 4
    assert "wrote no JUnit report" in report.note
    assert "--no-such-option" in report.output_tail


async def test_hanging_test_is_killed_at_the_timeout(make_repo: MakeRepo) -> None:
    repo = make_repo(
        {"tests/test_hang.py": "import time\n\ndef test_hang():\n    time.sleep(1000)\n"}
    )
    started = time.monotonic()
    report = await run(repo, timeout=1)
    assert time.monotonic() - started < 6
    assert report.timed_out and not report.ok
    assert report.summary().startswith("timed out after")
    assert "timeout" in report.note


async def test_other_commands_are_judged_by_exit_code(make_repo: MakeRepo) -> None:
    repo = make_repo()
    report = await run(repo, "sh -c 'echo hi; exit 3'")
    assert not report.structured
    assert report.exit_code == 3 and not report.ok
    assert "exit code 3" in report.summary()
    assert report.output_tail == "hi"
    passing = await run(repo, "echo fine")
    assert passing.ok and passing.summary().startswith("exit code 0")


async def test_missing_program_raises_a_clear_error(make_repo: MakeRepo) -> None:
    repo = make_repo()
    with pytest.raises(CommandNotFound) as caught:
        await run(repo, "no-such-test-runner --all")
    message = str(caught.value)
    assert "`no-such-test-runner`" in message and "test_command" in message
    assert isinstance(caught.value, UserError)
    with pytest.raises(CommandNotFound):
        await run(repo, "./scripts/test.sh")


async def test_127_from_inside_the_suite_is_a_normal_failure(make_repo: MakeRepo) -> None:
    # The test command exists; a program *it* runs is missing: that is for the model to fix.
    repo = make_repo({"run.sh": "no-such-helper-program\n"})
    report = await run(repo, "sh run.sh")
    assert report.exit_code == 127 and not report.ok


async def test_secrets_are_not_visible_to_tests(
    make_repo: MakeRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-openai-value")
    monkeypatch.setenv("MY_MODEL_CREDS", "custom-secret-value")  # named in the user's config
    repo = make_repo()
    report = await run(repo, "env", secret_names=("MY_MODEL_CREDS",))
    assert "secret-openai-value" not in report.output_tail
    assert "custom-secret-value" not in report.output_tail
    assert any(line.startswith("PATH=") for line in report.output_tail.splitlines())
    assert f"PYTHONPATH={repo}" in report.output_tail.splitlines()


EDITABLE_BACKEND = '''\
"""A minimal PEP 660 backend: the editable wheel holds a .pth pointing at src/, as setuptools'
editable installs of src layouts do (no setuptools or wheel needed, so it works offline)."""
import base64, hashlib, pathlib, zipfile

NAME, VERSION = "mypkg", "0.1"
DIST = f"{NAME}-{VERSION}.dist-info"


def _record(path, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{path},sha256={digest},{len(data)}"


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    src = pathlib.Path(__file__).resolve().parent / "src"
    files = {
        f"{NAME}.pth": f"{src}\\n".encode(),
        f"{DIST}/METADATA": f"Metadata-Version: 2.1\\nName: {NAME}\\nVersion: {VERSION}\\n"
        .encode(),
        f"{DIST}/WHEEL": b"Wheel-Version: 1.0\\nGenerator: t\\nRoot-Is-Purelib: true\\n"
        b"Tag: py3-none-any\\n",
    }
    lines = [_record(p, d) for p, d in files.items()] + [f"{DIST}/RECORD,,"]
    files[f"{DIST}/RECORD"] = ("\\n".join(lines) + "\\n").encode()
    name = f"{NAME}-{VERSION}-py3-none-any.whl"
    with zipfile.ZipFile(pathlib.Path(wheel_directory) / name, "w") as wheel:
        for path, data in files.items():
            wheel.writestr(path, data)
    return name


build_wheel = build_editable
'''

EDITABLE_REPO = {
    "pyproject.toml": (
        '[build-system]\nrequires = []\nbuild-backend = "editable_backend"\nbackend-path = ["."]\n'
    ),
    "editable_backend.py": EDITABLE_BACKEND,
    "src/mypkg/__init__.py": "def answer():\n    return 1\n",
    "tests/test_answer.py": (
        "from mypkg import answer\n\n\ndef test_answer():\n    assert answer() == 2\n"
    ),
}


def _see_our_packages(vpy: Path) -> None:
    """Let the venv at `vpy` import what the interpreter running this suite imports (pytest).

    `--system-site-packages` gives it the *base* interpreter's packages only: when this suite
    runs from a virtualenv (where pytest is), the inner venv found no pytest. A .pth file in
    its site-packages adds the folders this interpreter uses, after the venv's own (where the
    editable install goes)."""
    ask = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    purelib = subprocess.run([vpy, "-c", ask], capture_output=True, text=True, check=True)
    ours = [p for p in sys.path if p.endswith(("site-packages", "dist-packages"))]
    (Path(purelib.stdout.strip()) / "outer-environment.pth").write_text("\n".join(ours) + "\n")


async def test_worktree_code_wins_over_an_editable_install(
    make_repo: MakeRepo, tmp_path: Path
) -> None:
    """The user's checkout is `pip install -e`'d into a venv; the shadow worktree changes the
    function. Tests run in the worktree must import the worktree's code, not the checkout's."""
    original = make_repo(EDITABLE_REPO, name="checkout")
    venv = tmp_path / "venv"
    subprocess.run([PY, "-m", "venv", "--without-pip", venv], check=True)
    vpy = venv / "bin" / "python"
    _see_our_packages(vpy)
    pip = [PY, "-m", "pip", "--python", str(vpy), "install", "-q", "--no-deps"]
    subprocess.run([*pip, "--no-build-isolation", "-e", original], check=True)
    worktree = tmp_path / "worktree"
    shutil.copytree(original, worktree, ignore=shutil.ignore_patterns(".git"))
    (worktree / "src" / "mypkg" / "__init__.py").write_text("def answer():\n    return 2\n")
    command = f"{vpy} -m pytest -q"

    # Control: without the sandbox's PYTHONPATH the venv imports the checkout (answer() == 1).
    plain = await run_command(command, worktree, timeout=60, env=scrubbed_env())
    assert plain.exit_code == 1 and "assert 1 == 2" in plain.output

    report = await run(worktree, command)
    assert report.ok, report.for_model()
    assert report.passed == 1
