"""zope.testrunner's report read test by test (issue 48, part 5), from real output kept as data
(tests/data/runner_output/zope_testrunner_*.txt: zope.testrunner 8.3 on Python 3.11, a small
project laid out as zope.event is, `src/calc/tests/`, run with `--test-path=src -vc` and with
the `-vv` the runner adds), and colour escapes never reaching a tail or a traceback. The slow
test installs zope.testrunner from the package index into the project's own venv and runs it
in the local sandbox."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tui_engineer.sandbox.local import LocalSandbox
from tui_engineer.verify.report import report_from_run
from tui_engineer.verify.runners import read_output, report_command, runner_for, runner_name
from tui_engineer.verify.test_process import RunResult

DATA = Path(__file__).parents[1] / "data" / "runner_output"
ESC = "\x1b["
CALC = "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n"
TEST_CALC = """import unittest

from calc import add, mul


class CalcTests(unittest.TestCase):
    def test_add(self):
        self.assertEqual(add(2, 3), 5)

    def test_mul(self):
        self.assertEqual(mul(4, 3), 12)

    def test_boom(self):
        raise RuntimeError("boom")

    @unittest.skip("not yet")
    def test_skipped(self):
        pass
"""
TEST_DOC = '''import doctest


def double(x):
    """
    >>> double(2)
    5
    """
    return x * 2


def test_suite():
    return doctest.DocTestSuite()
'''
TEST_MORE = "import unittest\n\n\nclass MoreTests(unittest.TestCase):\n    def test_one(self):\n" \
    "        self.assertTrue(True)\n"  # fmt: skip
FILES = {
    "src/calc/__init__.py": CALC,
    "src/calc/tests/__init__.py": "",
    "src/calc/tests/test_calc.py": TEST_CALC,
    "src/calc/tests/test_doc.py": TEST_DOC,
    "src/calc/tests/test_more.py": TEST_MORE,
}
ADD = "src/calc/tests/test_calc.py::CalcTests::test_add"
BOOM = "src/calc/tests/test_calc.py::CalcTests::test_boom"
DOUBLE = "src/calc/tests/test_doc.py::double"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "calc"
    for name, text in FILES.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    return root


def test_the_command_is_claimed_and_run_so_each_test_is_named() -> None:
    command = "zope-testrunner --test-path=src -vc"
    assert runner_for(command) is not None
    assert runner_name(command) == "zope.testrunner"
    assert report_command(command) == "zope-testrunner --test-path=src -vc -vv"
    assert runner_for("python -m zope.testrunner --test-path=src") is not None


def test_the_verbose_report_is_read_test_by_test(project: Path) -> None:
    result = read_output((DATA / "zope_testrunner_vc_vv.txt").read_text("utf-8"), project)
    assert result is not None and result.runner == "zope.testrunner"
    assert (result.passed, result.failed, result.errors, result.skipped) == (2, 2, 1, 1)
    by_id = {f.test_id: f for f in result.failures}
    assert sorted(by_id) == sorted([ADD, BOOM, DOUBLE])
    assert by_id[ADD].message == "AssertionError: -1 != 5"
    assert by_id[BOOM].message == "RuntimeError: boom"
    assert "Expected:" in by_id[DOUBLE].traceback and "Got:" in by_id[DOUBLE].traceback
    assert 'test_calc.py", line 8, in test_add' in by_id[ADD].traceback
    assert sorted(result.passing) == [
        "src/calc/tests/test_calc.py::CalcTests::test_mul",
        "src/calc/tests/test_more.py::MoreTests::test_one",
    ]
    assert not any(ESC in f.traceback + f.message for f in result.failures)


def test_the_dots_report_still_names_the_failing_tests(project: Path) -> None:
    result = read_output((DATA / "zope_testrunner_vc.txt").read_text("utf-8"), project)
    assert result is not None
    assert (result.passed, result.failed, result.errors, result.skipped) == (2, 2, 1, 1)
    assert sorted(f.test_id for f in result.failures) == sorted([ADD, BOOM, DOUBLE])


def test_a_module_that_cannot_be_imported_is_an_error_named_by_its_file(project: Path) -> None:
    result = read_output((DATA / "zope_testrunner_import.txt").read_text("utf-8"), project)
    assert result is not None and (result.passed, result.errors) == (0, 2)
    assert sorted(f.test_id for f in result.failures) == [
        "src/calc/tests/test_calc.py",
        "src/calc/tests/test_more.py",
    ]
    assert result.failures[0].message == "ModuleNotFoundError: No module named 'calc'"


def test_colour_escapes_never_reach_the_tail_or_the_tracebacks(project: Path) -> None:
    output = (DATA / "zope_testrunner_vc_vv.txt").read_text("utf-8")
    assert ESC in output  # the data is what -c prints
    run = RunResult(1, False, 0.1, output, False)
    report = report_from_run("zope-testrunner --test-path=src -vc", run, root=project)
    assert report.structured and report.failed == 2
    assert ESC not in report.output_tail
    assert "Ran 6 tests with 2 failures, 1 errors, 1 skipped" in report.output_tail
    assert not any(ESC in f.traceback for f in report.failures)


def _venv_with_zope_testrunner(project: Path) -> Path:
    venv = project / ".venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    done = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "zope.testrunner"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    if done.returncode != 0:
        pytest.skip(f"zope.testrunner could not be installed from the package index: {done.stderr}")
    return venv


@pytest.mark.slow
async def test_the_real_zope_testrunner_in_the_sandbox_is_read_and_has_no_colour(
    project: Path,
) -> None:
    venv = _venv_with_zope_testrunner(project)
    command = "PYTHONPATH=src .venv/bin/zope-testrunner --test-path=src -vc"
    assert venv.is_dir()
    lines: list[str] = []
    sandbox = LocalSandbox()
    try:
        report = await sandbox.run_tests(project, command, timeout=120, on_output=lines.append)
    finally:
        await sandbox.close()
    assert report.structured, report.output_tail
    assert sorted(f.test_id for f in report.failures) == sorted([ADD, BOOM, DOUBLE])
    assert "src/calc/tests/test_calc.py::CalcTests::test_mul" in report.passing
    assert ESC not in report.output_tail and not any(ESC in line for line in lines)


def test_the_lines_about_old_failures_are_told_apart() -> None:
    """What the model is not shown of a run: the blocks and lines of tests red before."""
    from tui_engineer.verify.runners import zope_testrunner

    lines = (DATA / "zope_testrunner_vc_vv.txt").read_text("utf-8").splitlines()
    old = zope_testrunner.old_lines(lines, {BOOM, DOUBLE})
    kept = "\n".join(line for i, line in enumerate(lines) if i not in old)
    assert "test_boom" not in kept and "double" not in kept and "RuntimeError" not in kept
    assert "Failure in test test_add" in kept and "AssertionError: -1 != 5" in kept
    assert "test_mul" in kept
