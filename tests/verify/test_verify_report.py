"""TestReport as the UI, the run records and the model see it; recognising pytest commands."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from tui_engineer.verify import FailingTest, RunResult, TestReport, report_from_run
from tui_engineer.verify.runners.pytest import (
    is_pytest_command,
    node_id,
    trim_traceback,
    with_pytest_report_args,
)


def failing(n: int, traceback_lines: int = 5) -> FailingTest:
    body = "\n".join(f"    frame line {i}" for i in range(traceback_lines))
    return FailingTest(
        test_id=f"tests/test_m.py::test_{n}",
        message=f"assert {n} == 0",
        traceback=f"{body}\nE       assert {n} == 0\n\ntests/test_m.py:{n}: AssertionError",
    )


def test_summary_lines() -> None:
    structured = TestReport("pytest", 1, 2.14, False, passed=3, failed=1, structured=True)
    assert structured.summary() == "3 passed, 1 failed in 2.1s"
    assert TestReport("pytest", None, 300.2, True).summary() == "timed out after 300s"
    assert TestReport("make test", 2, 0.31, False).summary() == "exit code 2 in 0.3s"
    no_tests = TestReport("pytest", 5, 0.4, False, structured=True)
    assert no_tests.summary() == "no tests ran in 0.4s (exit code 5)"
    one_error = TestReport("pytest", 2, 1.0, False, errors=1, skipped=2, structured=True)
    assert one_error.summary() == "1 error, 2 skipped in 1.0s"


def test_ok_needs_exit_zero_no_timeout_and_no_failures() -> None:
    assert TestReport("pytest", 0, 1.0, False, passed=2, structured=True).ok
    assert TestReport("sh run.sh", 0, 1.0, False).ok
    assert not TestReport("sh run.sh", 3, 1.0, False).ok
    assert not TestReport("pytest", None, 1.0, True).ok
    assert not TestReport("pytest", 5, 1.0, False, structured=True).ok
    # A run record where counts and exit code disagree is not trusted as green.
    assert not TestReport("pytest", 0, 1.0, False, failed=1, structured=True).ok


def test_to_dict_is_json_and_round_trips_the_counts() -> None:
    report = TestReport(
        "pytest", 1, 1.5, False, passed=1, failed=1, failures=[failing(1)], structured=True
    )
    data = json.loads(json.dumps(report.to_dict()))
    assert data["failed"] == 1 and data["ok"] is False
    assert data["summary"] == "1 passed, 1 failed in 1.5s"
    assert data["failures"][0]["test_id"] == "tests/test_m.py::test_1"


def test_for_model_stays_within_budget_and_keeps_ids_and_assertions() -> None:
    failures = [failing(n, traceback_lines=60) for n in range(40)]
    report = TestReport(
        "python -m pytest",
        1,
        9.0,
        False,
        failed=40,
        failures=failures,
        output_tail="\n".join(f"out {i}" for i in range(2000)),
        structured=True,
    )
    text = report.for_model(max_chars=6000)
    assert len(text) <= 6000
    assert "Result: 40 failed in 9.0s" in text
    assert "- tests/test_m.py::test_0: assert 0 == 0" in text
    assert "... and 10 more" in text  # ids beyond the first 30 are counted, not listed
    assert "E       assert 0 == 0" in text  # the first traceback is shown in full
    assert "more failures omitted" in text


def test_for_model_of_a_plain_command_shows_the_end_of_the_output() -> None:
    tail = "\n".join(f"line {i}" for i in range(5000))
    text = TestReport("make test", 2, 1.0, False, output_tail=tail).for_model(max_chars=1000)
    assert len(text) <= 1000
    assert "exit code 2" in text
    assert text.endswith("line 4999")
    assert "line 0\n" not in text


def test_trim_traceback_keeps_the_assertion_even_when_it_is_early() -> None:
    lines = ["def test():", ">   assert f() == 2", "E   assert 1 == 2", "E    +  where 1 = f()"]
    lines += [f"  deep frame {i}" for i in range(100)]
    trimmed = trim_traceback("\n".join(lines), max_lines=40).splitlines()
    assert "E   assert 1 == 2" in trimmed
    assert trimmed[-1] == "  deep frame 99"
    assert "deep frame 10" not in "\n".join(trimmed)
    assert len(trimmed) < 50


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("pytest", True),
        ("pytest -x -q tests/", True),
        ("python -m pytest -x", True),
        ("python3.11 -m pytest", True),
        (".venv/bin/python -m pytest -k 'a and b'", True),
        ("/opt/venv/bin/pytest", True),
        ("PYTHONHASHSEED=0 pytest", True),
        ("uv run pytest", True),
        ("make test", False),
        ("python -m unittest", False),
        ("python manage.py test", False),
        ("pytest | tee log.txt", False),
        ("cd sub && pytest", False),
        ("pytest; echo done", False),
        ("tox -e py311", False),
        ("pytest 'unclosed", False),
    ],
)
def test_recognises_pytest_commands(command: str, expected: bool) -> None:
    assert is_pytest_command(command) is expected


def test_report_args_go_to_pytest_outside_the_tree() -> None:
    cmd = with_pytest_report_args("python -m pytest -x", Path("/tmp/a b/report.xml"))
    assert shlex.split(cmd) == [
        *["python", "-m", "pytest", "-x"],
        *["--junitxml=/tmp/a b/report.xml", "-p", "no:cacheprovider"],
    ]
    kept = with_pytest_report_args("pytest -p no:cacheprovider", Path("/r.xml"))
    assert kept.count("no:cacheprovider") == 1


def test_node_ids_are_rebuilt_from_junit_classnames(tmp_path: Path) -> None:
    (tmp_path / "tests" / "unit").mkdir(parents=True)
    (tmp_path / "tests" / "unit" / "test_x.py").write_text("")
    assert node_id("tests.unit.test_x", "test_a[1]", tmp_path) == "tests/unit/test_x.py::test_a[1]"
    assert node_id("tests.unit.test_x.TestK", "test_m", tmp_path) == (
        "tests/unit/test_x.py::TestK::test_m"
    )
    assert node_id("", "tests.unit.test_x", tmp_path) == "tests/unit/test_x.py"  # collection
    assert node_id("pkg.mod", "test_b", tmp_path) == "pkg.mod::test_b"  # file not found


def test_unreadable_junit_falls_back_to_exit_code_and_says_why(tmp_path: Path) -> None:
    broken = tmp_path / "report.xml"
    broken.write_text("<testsuites><testsuite><testcase")
    run = RunResult(exit_code=1, timed_out=False, duration=0.5, output="boom\n", truncated=False)
    report = report_from_run("pytest", run, broken, tmp_path)
    assert not report.structured
    assert "could not be read" in report.note
    assert report.summary() == "exit code 1 in 0.5s"
    assert "Note: pytest's JUnit report could not be read" in report.for_model()


UNITTEST_TAIL = """test_add (tests.test_calc.CalcTests.test_add) ... FAIL
test_mul (tests.test_calc.CalcTests.test_mul) ... FAIL

======================================================================
FAIL: test_add (tests.test_calc.CalcTests.test_add)
----------------------------------------------------------------------
AssertionError: 1 != 2

======================================================================
FAIL: test_mul (tests.test_calc.CalcTests.test_mul)
----------------------------------------------------------------------
AssertionError: 3 != 4

----------------------------------------------------------------------
Ran 2 tests in 0.001s

FAILED (failures=2)"""
PYTEST_TAIL = """___________________________________ test_add ___________________________________
E       assert 1 == 2
___________________________________ test_mul ___________________________________
E       assert 3 == 4
=========================== short test summary info ============================
FAILED tests/test_calc.py::test_add - assert 1 == 2
FAILED tests/test_calc.py::test_mul - assert 3 == 4"""
# A test in a class: pytest heads its section `CalcTests.test_mul`.
PYTEST_CLASS_TAIL = PYTEST_TAIL.replace("_ test_", "_ CalcTests.test_").replace(
    "py::test_", "py::CalcTests::test_"
)


@pytest.mark.parametrize(
    ("tail", "old"),
    [(UNITTEST_TAIL, "tests/test_calc.py::CalcTests::test_mul"),
     (PYTEST_TAIL, "tests/test_calc.py::test_mul"),
     (PYTEST_CLASS_TAIL, "tests/test_calc.py::CalcTests::test_mul")],
)  # fmt: skip
def test_the_model_reads_no_output_about_an_old_failure(tail: str, old: str) -> None:
    """Each runner module names the lines of its output about old failures (old_lines)."""
    report = TestReport("x", 1, 0.1, False, output_tail=tail, structured=True)
    report.old = [FailingTest(old, "", "")]
    text = report.for_model()
    assert "3 != 4" not in text and "3 == 4" not in text and "test_mul" not in text
    assert "1 != 2" in text or "1 == 2" in text
    assert "test_add" in text
