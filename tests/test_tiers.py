"""What a run skipped reaches $SKIPPED_TESTS_TO whole, serially and with pytest-xdist workers,
so .ci/run's full pass runs each of those tests once (tests/tiers.py). Real pytest processes
over a tiny suite in a temp folder, loading tests/tiers.py as a plugin."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

SUITE = {
    "test_some.py": (
        "import pytest\n\n\n"
        "def test_runs():\n    pass\n\n\n"
        "def test_skips():\n    pytest.skip('no tool')\n\n\n"
        "@pytest.mark.parametrize('n', [1, 2])\n"
        "def test_skips_one(n):\n    if n == 2:\n        pytest.skip('no extra')\n\n\n"
        "@pytest.mark.xdist_group('one_at_a_time')\n"
        "@pytest.mark.parametrize('who', ['a@b', 'c'])\n"
        "def test_grouped(who):\n    pytest.skip('no server')\n\n\n"
        "@pytest.mark.xfail(reason='known')\n"
        "def test_known_bug():\n    assert False\n"
    ),
    "test_extra.py": "import pytest\n\npytest.importorskip('no_such_extra_module')\n\n\n"
    "def test_needs_it():\n    pass\n",
}
SKIPPED = {
    "test_some.py::test_skips",
    "test_some.py::test_skips_one[2]",
    "test_some.py::test_grouped[a@b]",
    "test_some.py::test_grouped[c]",
    "test_extra.py",
}


XDIST = ["-p", "xdist.plugin", "-n", "2"]


@pytest.mark.parametrize(
    "workers", [[], XDIST, [*XDIST, "--dist", "loadgroup"]], ids=["serial", "n2", "loadgroup"]
)
def test_each_skipped_id_is_written_and_nothing_else(tmp_path: Path, workers: list[str]) -> None:
    for name, text in SUITE.items():
        (tmp_path / name).write_text(text)
    written = tmp_path / "skipped.txt"
    env = {**os.environ, "SKIPPED_TESTS_TO": str(written), "PYTHONPATH": str(REPO)}
    args = ["-q", "-p", "no:cacheprovider", "-p", "tests.tiers", *workers]
    done = subprocess.run(
        [sys.executable, "-m", "pytest", *args],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 xfailed" in done.stdout
    assert set(written.read_text().splitlines()) == SKIPPED
    # .ci/run's full pass: each id once (the workers and their controller each wrote them).
    left = tmp_path / "left.txt"
    left.write_text(
        "".join(
            f"{nodeid}\n" for nodeid in dict.fromkeys(written.read_text().split("\n")) if nodeid
        )
    )
    again = subprocess.run(
        [sys.executable, "-m", "pytest", *args, f"@{left}"],
        cwd=tmp_path,
        env={**env, "SKIPPED_TESTS_TO": str(tmp_path / "again.txt")},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert again.returncode == 0 and "5 skipped" in again.stdout, again.stdout + again.stderr


# The suite's own hook (tests/conftest.py) over a tiny suite: in a full pass on xdist workers, a
# slow test of a heavy process joins the one-at-a-time group; a whole session goes to any worker.
GROUPED = {
    "conftest.py": "from tests.conftest import pytest_collection_modifyitems  # noqa: F401\n",
    "test_kinds.py": (
        "import pytest\n\nfrom tests.tiers import whole_session\n\n\n"
        "@pytest.mark.slow\ndef test_heavy():\n    pass\n\n\n"
        "@whole_session\ndef test_session():\n    pass\n\n\n"
        "def test_quick():\n    pass\n"
    ),
}


@pytest.mark.parametrize("asked", [[], ["--slow"]], ids=["quick", "full"])
def test_heavy_tests_run_one_at_a_time_and_sessions_side_by_side(
    tmp_path: Path, asked: list[str]
) -> None:
    for name, text in GROUPED.items():
        (tmp_path / name).write_text(text)
    # As the README runs it: no -n, no --dist (tests/workers.py asks for loadgroup), 2 workers.
    args = ["-p", "no:cacheprovider", "-p", "xdist.plugin", "-p", "tests.tiers"]
    args += ["-p", "tests.workers", "-v"]
    done = subprocess.run(
        [sys.executable, "-m", "pytest", *args, *asked],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(REPO), "PYTEST_XDIST_AUTO_NUM_WORKERS": "2"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    outcome = "PASSED" if asked else "SKIPPED"
    # xdist's lines: "[gw0] [ 33%] PASSED test_kinds.py::test_heavy@heavy"
    seen = dict(reversed(line.split()[-2:]) for line in done.stdout.splitlines() if "] [" in line)
    assert seen == {
        "test_kinds.py::test_heavy@heavy": outcome,
        "test_kinds.py::test_session": outcome,
        "test_kinds.py::test_quick": "PASSED",
    }, done.stdout


# .ci/run's full pass runs the heavy ones in a process of their own (`-m heavy`) beside the rest
# on workers (`-m "not heavy"`): between them, each test once.
@pytest.mark.parametrize(
    ("expression", "ran"),
    [("heavy", {"test_heavy"}), ("not heavy", {"test_session", "test_quick"})],
)
def test_the_full_pass_picks_the_heavy_tests_apart_from_the_rest(
    tmp_path: Path, expression: str, ran: set[str]
) -> None:
    for name, text in GROUPED.items():
        (tmp_path / name).write_text(text)
    args = ["-p", "no:cacheprovider", "-p", "no:xdist", "-p", "tests.tiers", "-v", "--slow"]
    done = subprocess.run(
        [sys.executable, "-m", "pytest", *args, "-m", expression],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    passed = {
        line.split("::")[1].split()[0] for line in done.stdout.splitlines() if "PASSED" in line
    }
    assert passed == ran, done.stdout
