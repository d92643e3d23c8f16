"""Reading other runners' results from what they print (recorded here: cargo's and node's from
real runs on this machine, go's and jest's as those tools write them: go is not installed here),
and through the report a sandbox makes of a run."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tui_engineer.sandbox.local import LocalSandbox
from tui_engineer.verify.baseline import fixed
from tui_engineer.verify.report import report_from_run
from tui_engineer.verify.runners import go, read_output
from tui_engineer.verify.runners.jest import parse_json as parse_jest_json
from tui_engineer.verify.test_process import RunResult

DATA = Path(__file__).parents[1] / "data" / "runner_output"
ROOT = Path("/work/proj")


def parsed(name: str):
    result = read_output((DATA / name).read_text(encoding="utf-8"), ROOT)
    assert result is not None
    return result


def counts(result) -> tuple[int, int, int, int]:
    return result.passed, result.failed, result.errors, result.skipped


def test_cargo_test_lines() -> None:
    result = parsed("cargo.txt")
    assert result.runner == "cargo" and counts(result) == (1, 2, 0, 1)
    bad, panics = result.failures
    assert (bad.test_id, panics.test_id) == ("tests::bad", "tests::panics")
    assert bad.message == "assertion `left == right` failed left: 5 right: 6"
    assert "panicked at src/lib.rs:6:24" in bad.traceback and "tests::panics" not in bad.traceback
    assert panics.message == "oh no second line"


def test_node_tap_names_file_suite_and_test() -> None:
    result = parsed("node_tap.txt")
    assert result.runner == "node" and counts(result) == (2, 2, 0, 1)
    assert [f.test_id for f in result.failures] == [
        "test/a.test.js > fails here",
        "test/a.test.js > suite one > inner fail",
    ]
    assert result.failures[0].message == "Expected values to be strictly equal: 2 !== 3"
    assert result.failures[1].message == "boom"
    # Passing tests, by the id node prints (no file: node 20 gives a passing test no location);
    # neither the suite that failed through its test nor the skipped one.
    assert result.passing == ["passes", "suite one > inner ok"]


def test_an_old_node_failure_that_passes_now_is_fixed_by_its_unlocated_id() -> None:
    """The baseline names `test/a.test.js > passes`; a later run prints `ok 1 - passes`."""
    old = ("test/a.test.js > passes", "test/a.test.js > fails here", "test/b.test.js > gone")
    run = report_from_run("node --test", RunResult(1, False, 0.1, _tap(), False), root=ROOT)
    assert fixed(old, run) == ["test/a.test.js > passes"]  # `fails here` fails still


def _tap() -> str:
    return (DATA / "node_tap.txt").read_text(encoding="utf-8")


def test_node_spec_reporter() -> None:
    result = parsed("node_spec.txt")
    assert counts(result) == (2, 2, 0, 1)
    assert [f.test_id for f in result.failures] == [
        "test/a.test.js > fails here",
        "test/a.test.js > inner fail",
    ]
    assert result.failures[1].message == "Error: boom"
    assert result.passing == ["passes", "inner ok"]  # by name, as node's spec shows them


def test_go_test_json_counts_leaf_tests_and_build_failures() -> None:
    result = parsed("go_json.txt")
    assert result.runner == "go" and counts(result) == (2, 1, 1, 1)
    big, broken = result.failures
    assert big.test_id == "example.com/calc::TestMul/big"
    assert big.message == "calc_test.go:15: mul(4, 3) = 7, want 12"
    assert broken.test_id == "example.com/calc/broken"
    assert broken.message == "broken/b.go:3:9: undefined: nope"


def test_plain_go_test_output_names_the_failures() -> None:
    result = parsed("go_plain.txt")
    assert counts(result) == (0, 1, 0, 0)
    (big,) = result.failures
    assert big.test_id == "example.com/calc::TestMul/big"
    assert big.message == "calc_test.go:15: mul(4, 3) = 7, want 12"


def test_jest_json_report() -> None:
    result = parse_jest_json((DATA / "jest.json").read_text(encoding="utf-8"), ROOT)
    assert result is not None and counts(result) == (1, 1, 1, 1)
    subtracts, broken = result.failures
    assert subtracts.test_id == "src/sum.test.js > sum > subtracts"
    assert subtracts.message.startswith("Error: expect(received).toBe(expected)")
    assert broken.test_id == "src/broken.test.js"
    assert "Cannot find module './nope'" in broken.traceback
    assert parse_jest_json("not json") is None and parse_jest_json('{"a": 1}') is None


def test_a_report_of_a_cargo_run_has_counts_and_names() -> None:
    output = (DATA / "cargo.txt").read_text(encoding="utf-8")
    report = report_from_run("cargo test", RunResult(101, False, 0.7, output, False), root=ROOT)
    assert report.structured and not report.ok
    assert report.summary() == "1 passed, 2 failed, 1 skipped in 0.7s"
    text = report.for_model()
    assert "- tests::bad: assertion `left == right` failed left: 5 right: 6" in text
    assert "--- tests::bad" in text  # its panic, as a traceback


def test_other_output_is_judged_by_the_exit_code() -> None:
    run = RunResult(2, False, 0.2, "make: *** [Makefile:3: test] Error 2\n", False)
    report = report_from_run("make test", run, root=ROOT)
    assert not report.structured and report.summary() == "exit code 2 in 0.2s"


NPM = shutil.which("npm")


@pytest.mark.skipif(NPM is None, reason="npm is not installed")
async def test_npm_test_running_jest_is_asked_for_its_json_report(make_repo) -> None:
    """jest is not installed here: a stand-in on node_modules/.bin writes the report jest would
    (the recorded one) where `--outputFile` says, and prints what jest prints on stderr."""
    root = make_repo({"package.json": '{"scripts": {"test": "jest"}}\n'})
    stand_in = root / "node_modules" / ".bin" / "jest"
    stand_in.parent.mkdir(parents=True)
    stand_in.write_text(
        "#!/bin/sh\n"
        'for a in "$@"; do case "$a" in --outputFile=*) out="${a#--outputFile=}";; esac; done\n'
        f'[ "$1" = --json ] && sed "s#/work/proj#$PWD#g" {DATA / "jest.json"} > "$out"\n'
        "echo 'Tests: 1 failed, 1 skipped, 1 passed, 3 total' >&2; exit 1\n"
    )
    stand_in.chmod(0o755)
    report = await LocalSandbox().run_tests(root, "npm test", timeout=60)
    assert report.structured and report.command == "npm test"
    assert (report.passed, report.failed, report.errors, report.skipped) == (1, 1, 1, 1)
    assert [f.test_id for f in report.failures] == [
        "src/sum.test.js > sum > subtracts",
        "src/broken.test.js",
    ]


def test_verbose_go_test_output_counts_every_test() -> None:
    """With -v each test's lines stream under its `=== RUN` line, before its result."""
    result = parsed("go_verbose.txt")
    assert counts(result) == (2, 1, 0, 1)
    (big,) = result.failures
    assert big.test_id == "example.com/calc::TestMul/big"
    assert big.message == "calc_test.go:15: mul(4, 3) = 7, want 12"


def test_go_test_runs_verbose_so_passing_tests_are_counted() -> None:
    assert go.report_command("go test ./...") == "go test -v ./..."
    assert go.report_command("CGO_ENABLED=0 go test -race ./...") == (
        "CGO_ENABLED=0 go test -v -race ./..."
    )
    assert go.report_command("go test -json ./...") == "go test -json ./..."
    assert go.report_command("cargo test") == "cargo test"


def test_catch2_output_through_a_cmake_build() -> None:
    # Recorded from Exercism's C++ `allergies` built with `cmake --build` (Catch v2.13.6), as
    # the track's CMakeLists.txt runs the tests: one with 40 of 50 failing (cut), one passing.
    failed = parsed("catch2_failed.txt")
    assert failed.runner == "catch2" and counts(failed) == (10, 40, 0, 0)
    first = failed.failures[0]
    assert (
        first.test_id == "allergies_test.cpp::testing for eggs allergy -> not allergic to anything"
    )
    assert first.message == 'REQUIRE( false == allergies::allergy_test(0).is_allergic_to("eggs") )'
    assert "with expansion:\n  false == true" in first.traceback
    assert len(failed.failures) == 3  # the blocks the output holds
    passed = parsed("catch2_passed.txt")
    assert passed.runner == "catch2" and counts(passed) == (50, 0, 0, 0)
