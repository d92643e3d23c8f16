"""Which command runs the tests a change can affect, for runners other than pytest (the cargo
case runs for real in test_engine_runners.py; go and jest are not installed here)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tui_engineer.verify.runners import cargo, files_command, go, jest, narrowing_runner, node
from tui_engineer.verify.selection import TestSelection

MODULES = {"cargo": cargo, "jest": jest, "go": go, "node": node}


def narrowed_command(kind: str, command: str, changed: list[str], files: list[str]) -> str | None:
    return MODULES[kind].narrowed(command, changed, Path("."), lambda: files)


def runner_kind(command: str, root: Path) -> str | None:
    runner = narrowing_runner(command, root)
    return next((k for k, m in MODULES.items() if m is runner), None)


def with_jest_report_args(command: str, root: Path, report: Path) -> str | None:
    made = jest.report_command(command, report, root)
    return made if made != command else None


@pytest.mark.parametrize(
    ("kind", "command", "changed", "narrowed"),
    [
        ("cargo", "cargo test", ["src/parse/lexer.rs"], "cargo test -- parse::lexer::"),
        ("cargo", "cargo test", ["src/parse/mod.rs", "src/a.rs"], "cargo test -- a:: parse::"),
        ("cargo", "cargo test", ["src/lib.rs"], None),  # the crate root: any test
        ("cargo", "cargo test", ["Cargo.toml"], None),
        ("cargo", "cargo test -- --nocapture", ["src/a.rs"], None),  # the user's own arguments
        ("jest", "npm test", ["src/sum.js"], "npm test -- --findRelatedTests src/sum.js"),
        ("jest", "npx jest --ci", ["a b.js"], "npx jest --ci --findRelatedTests 'a b.js'"),
        ("jest", "pnpm test", ["a.js"], "pnpm test --findRelatedTests a.js"),
        ("go", "go test ./...", ["calc/calc.go", "main.go"], "go test . ./calc"),
        ("go", "go test -race ./...", ["go.mod"], None),
        ("node", "npm test", ["src/greet.js"], "npm test -- test/greet.test.js"),
        ("node", "node --test", ["test/a.test.js"], "node --test test/a.test.js"),
        ("node", "node --test", ["package.json"], None),
        ("node", "node --test", ["src/none.js"], None),  # no test named for it
    ],
)
def test_narrowed_commands(
    kind: str, command: str, changed: list[str], narrowed: str | None
) -> None:
    files = ["src/greet.js", "src/none.js", "test/greet.test.js", "test/a.test.js"]
    assert narrowed_command(kind, command, changed, files) == narrowed


def test_which_runners_are_narrowed(tmp_path: Path) -> None:
    (tmp_path / "package.json").write_text('{"scripts": {"test": "jest --ci"}}')
    assert runner_kind("npm test", tmp_path) == "jest"
    assert runner_kind("cargo test --all", tmp_path) == "cargo"
    assert runner_kind("go test ./...", tmp_path) == "go"
    (tmp_path / "package.json").write_text('{"scripts": {"test": "node --test"}}')
    assert runner_kind("npm test", tmp_path) == "node"
    assert runner_kind("node --test test/unit", tmp_path) is None  # its own file arguments
    assert runner_kind("make test", tmp_path) is None
    # A selection for them never asks for pytest's plugin, nor reruns failures by pytest ids.
    selection = TestSelection.for_repo(tmp_path, "cargo test")
    assert selection is not None and selection.testmon is False
    assert selection.failing_run(["tests::adds"]) is None
    assert TestSelection.for_repo(tmp_path, "make test") is None


def test_the_new_test_files_alone(tmp_path: Path) -> None:
    """A test-first step's "before" run: only its new test files, where the runner takes files."""
    (tmp_path / "package.json").write_text('{"scripts": {"test": "node --test"}}')
    assert files_command("npm test", tmp_path, ["test/a b.test.js"]) == (
        "npm test -- 'test/a b.test.js'"
    )
    assert files_command("node --test", tmp_path, ["t.test.js"]) == "node --test t.test.js"
    assert files_command("yarn test", tmp_path, ["t.test.js"]) == "yarn test t.test.js"
    assert files_command("cargo test", tmp_path, ["tests/it.rs"]) is None
    (tmp_path / "package.json").write_text('{"scripts": {"test": "mocha"}}')
    assert files_command("npm test", tmp_path, ["t.test.js"]) is None


def test_jest_is_asked_for_its_report_however_it_is_started(tmp_path: Path) -> None:
    report = Path("/r/j.json")
    (tmp_path / "package.json").write_text('{"scripts": {"test": "jest --ci"}}')
    extra = "--json --outputFile=/r/j.json"
    assert with_jest_report_args("npm test", tmp_path, report) == f"npm test -- {extra}"
    assert with_jest_report_args("yarn test", tmp_path, report) == f"yarn test {extra}"
    assert with_jest_report_args("npx jest", tmp_path, report) == f"npx jest {extra}"
    assert with_jest_report_args("npm test && echo", tmp_path, report) is None
    (tmp_path / "package.json").write_text('{"scripts": {"test": "vitest"}}')
    assert with_jest_report_args("npm test", tmp_path, report) is None
