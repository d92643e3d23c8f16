"""The line that shows a suite got as far as a test's result, as each runner module knows it
(verify/started.py asks them all): what the first model call waits for."""

from __future__ import annotations

import pytest

from tui_engineer.verify.started import shows_a_test_ran


@pytest.mark.parametrize(
    "line",
    [
        "..F.s  [ 40%]",  # pytest -q
        "tests/test_calc.py .F                                        [ 50%]",  # pytest's default
        "tests/test_calc.py::test_add PASSED",  # pytest -v
        "Ran 3 tests in 0.002s",  # unittest
        "running 2 tests",  # cargo
        "test tests::adds ... ok",
        "ok 1 - add",  # node's TAP
        "✔ add (0.5ms)",  # node's spec, jest
        "PASS test/sum.test.js",  # jest
        "--- FAIL: TestAdd (0.00s)",  # go test -v
        "ok  \texample.com/calc\t0.002s",
        '{"Time":"2024-01-01T00:00:00Z","Action":"run","Test":"TestAdd"}',
    ],
)
def test_a_result_line_of_each_runner(line: str) -> None:
    assert shows_a_test_ran(line)


@pytest.mark.parametrize(
    "line",
    [
        "",
        "   ",
        "ImportError while loading conftest",
        "error[E0425]: cannot find value",
        "npm ERR!",
        "collected 2 items",  # pytest collected, no result yet
        "rootdir: /tmp/calc",
    ],
)
def test_lines_before_any_test(line: str) -> None:
    assert not shows_a_test_ran(line)
