"""`tui-engineer bench exercism PATH`: Exercism's layout read into tasks, the oracle (each
exercise's example solution over real HTTP) working every exercise in Python and Rust with the
real pytest and cargo, and aider's columns from a model that needs its second try."""

from __future__ import annotations

import csv
import json
import os
import shutil
from pathlib import Path

import pytest

from tests.bench.exercism_support import (
    TWO_FER_EXAMPLE,
    TWO_FER_STUB,
    TWO_FER_TEST,
    cpp_exercise,
    go_exercise,
    javascript_exercise,
    polyglot_checkout,
    python_exercise,
)
from tests.engine_support import edit
from tests.scripted_server import Reply
from tests.tiers import whole_session
from tui_engineer.base.errors import UserError
from tui_engineer.bench.exercism import exercism_tasks
from tui_engineer.bench.toolchains import runnable
from tui_engineer.cli.launch import reported
from tui_engineer.cli.main import main

HAS_CARGO = shutil.which("cargo") is not None


def rows(out: Path) -> list[dict[str, str]]:
    return list(csv.DictReader((out / "results.csv").open()))


def test_the_layout_becomes_tasks(tmp_path: Path) -> None:
    tasks = {t.name: t for t in exercism_tasks(polyglot_checkout(tmp_path))}
    assert sorted(tasks) == ["python-two-fer", "rust-reverse-string"]
    py, rs = tasks["python-two-fer"], tasks["rust-reverse-string"]
    assert py.request.startswith(
        "Solve the python exercise two-fer as its instructions say\n\n# Instructions\n\nTwo-fer"
    )
    assert "With no name, X is `you`." in py.request  # instructions.append.md
    assert "change these files: two_fer.py." in py.request
    assert "The tests are two_fer_test.py; do not change them." in py.request
    assert set(py.files) == {"two_fer.py", "two_fer_test.py"}  # no .meta, no .docs
    assert py.hidden == {"two_fer_test.py": TWO_FER_TEST}
    assert py.read_only == ("two_fer_test.py",)  # the model's edits to it are refused
    assert py.solution == {"two_fer.py": TWO_FER_EXAMPLE}
    assert py.test_command == py.hidden_command == "python -m pytest -q -p no:cacheprovider"
    assert rs.test_command == "cargo test -- --include-ignored"  # Exercism ignores all but one
    assert "change these files: src/lib.rs." in rs.request  # Cargo.toml is not the model's
    assert set(rs.solution) == {"src/lib.rs", "Cargo.toml"}  # Cargo.toml from Cargo-example
    assert {t.name for t in exercism_tasks(tmp_path, ["rust"])} == {"rust-reverse-string"}
    # One track given directly works too.
    assert [t.name for t in exercism_tasks(tmp_path / "python")] == ["python-two-fer"]


def test_a_folder_not_in_the_layout_is_refused_with_what_was_looked_for(tmp_path: Path) -> None:
    with pytest.raises(UserError, match=r"no practice exercises under .* exercises/practice"):
        exercism_tasks(tmp_path)
    polyglot_checkout(tmp_path)
    with pytest.raises(UserError, match="--languages: unknown cobol"):
        exercism_tasks(tmp_path, ["cobol"])


def test_exercism_needs_a_path(capsys) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["bench", "exercism"])
    assert exit_.value.code == 2
    assert "exercism needs the PATH" in capsys.readouterr().err


@pytest.mark.slow  # cargo builds the Rust exercise: a real toolchain, tens of seconds of CPU
@pytest.mark.skipif(not HAS_CARGO, reason="cargo is not installed: the Rust exercise cannot run")
def test_the_oracle_works_every_python_and_rust_exercise(tmp_path: Path, capsys) -> None:
    checkout = polyglot_checkout(tmp_path / "polyglot")
    out = tmp_path / "out"
    code = main(
        ["bench", "exercism", str(checkout), "--oracle", "--out", str(out), "--no-progress",
         "--config", "polyglot", "--workers", "2"]
    )  # fmt: skip
    printed = capsys.readouterr().out
    assert code == 0, printed
    by_task = {r["task"]: r for r in rows(out)}
    assert set(by_task) == {"python-two-fer", "rust-reverse-string"}
    for row in by_task.values():
        assert (row["ran"], row["worked"], row["first_try"], row["malformed"]) == (
            "True",
            "True",
            "True",
            "0",
        ), row
    # aider's columns, printed and in results.md
    assert "| polyglot | 2 | 100.0 | 100.0 | 100.0 | 0 | 0 | 0 | 0 |" in printed
    assert "pass_rate_1" in (out / "results.md").read_text()


@pytest.fixture
def python_only(tmp_path: Path, monkeypatch) -> Path:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-exercism-0123456789")
    python_exercise(tmp_path / "python")
    return tmp_path


def bench_against(server, checkout: Path, out: Path) -> int:
    return main(
        ["bench", "exercism", str(checkout), "--out", str(out), "--no-progress",
         "--config", "polyglot", "--model", "test-model", "--base-url", server.base_url]
    )  # fmt: skip


@whole_session
def test_a_second_try_that_sees_the_test_output(python_only, scripted_server, tmp_path) -> None:
    broken = 'def two_fer(name="you"):\n    return f"One for {name}, one for me."\n  x = (\n'
    scripted_server.script(
        # A whole file with a syntax error, then a SEARCH/REPLACE that repairs it.
        Reply(text="two_fer.py\n```python\n<<<<<<< FILE\n" + broken + ">>>>>>> FILE\n```\n"),
        Reply(text=edit("two_fer.py", broken, TWO_FER_EXAMPLE)),
    )
    out = tmp_path / "out"
    assert bench_against(scripted_server, python_only, out) == 0
    (row,) = rows(out)
    assert (row["worked"], row["first_try"], row["second_try"]) == ("True", "False", "True")
    assert int(row["syntax_errors"]) >= 1
    fix_prompt = scripted_server.chat_requests[1].messages[-1]["content"]
    assert "SyntaxError" in fix_prompt or "IndentationError" in fix_prompt
    table = (out / "results.md").read_text()
    assert "| polyglot | 1 | 0.0 | 100.0 | 100.0 | 0 |" in table
    # Replies by shape: one whole file, one SEARCH/REPLACE, none refused.
    assert "| config | search-replace | whole-file | malformed |" in table
    assert "| polyglot | 1 | 1 | 0 |" in table


def test_a_prompt_over_the_window_counts_as_an_exhausted_context(
    python_only, scripted_server, tmp_path
) -> None:
    docs = python_only / "python/exercises/practice/two-fer/.docs/instructions.md"
    docs.write_text("# Instructions\n\n" + "Say who gets one and who gets the other. " * 150)
    configs = tmp_path / "configs.toml"
    configs.write_text("[small]\nplan = false\ncontext_window = 1024\n")
    out = tmp_path / "out"
    main(
        ["bench", "exercism", str(python_only), "--out", str(out), "--no-progress",
         "--configs", str(configs), "--config", "small", "--model", "test-model",
         "--base-url", scripted_server.base_url]
    )  # fmt: skip
    (row,) = rows(out)
    assert (row["worked"], row["context_exhausted"]) == ("False", "True")
    table = (out / "results.md").read_text()
    assert "| small | 1 | 0.0 | 0.0 | 100.0 | 0 | 0 | 0 | 0 | 1 | 0 |" in table


def test_the_model_may_not_edit_the_tests(python_only, scripted_server, tmp_path):
    gutted = TWO_FER_TEST.replace('"One for Alice, one for me."', 'two_fer("Alice")').replace(
        '"One for you, one for me."', "two_fer()"
    )
    scripted_server.script(
        Reply(text=edit("two_fer_test.py", TWO_FER_TEST, gutted)),
        Reply(text="I cannot do better."),
    )
    out = tmp_path / "out"
    bench_against(scripted_server, python_only, out)
    (row,) = rows(out)
    refusal = scripted_server.chat_requests[1].messages[-1]["content"]
    assert "two_fer_test.py may not be changed in this session" in refusal
    assert (row["worked"], row["malformed"]) == ("False", "1")


HAS_GO = shutil.which("go") is not None
HAS_CMAKE = all(shutil.which(tool) for tool in ("cmake", "make", "c++"))


def test_go_and_cpp_exercises_become_tasks(tmp_path: Path) -> None:
    go_exercise(tmp_path / "go")
    cpp_exercise(tmp_path / "cpp")
    tasks = {t.name: t for t in exercism_tasks(tmp_path)}
    go, cpp = tasks["go-reverse-string"], tasks["cpp-reverse-string"]
    # Exercism's "editor" files are shown to the student read-only: the tests' cases here.
    assert go.read_only == ("reverse_string_test.go", "cases_test.go")
    assert set(go.hidden) == {"reverse_string_test.go", "cases_test.go"}
    assert "The tests are reverse_string_test.go, cases_test.go; do not change them." in go.request
    assert go.test_command == "go test ./..."
    assert "change these files: reverse_string.cpp, reverse_string.h." in cpp.request
    assert not any(path.startswith(".approaches/") for path in cpp.files)  # Exercism's docs
    # The track's CMakeLists.txt names the program after its folder: a task's repo (and the
    # hidden tests' copy) lives in folders of other names, so the name is written in.
    cmake = cpp.files["CMakeLists.txt"]
    assert "get_filename_component(exercise" not in cmake
    assert "set(exercise reverse-string)" in cmake
    assert set(cpp.solution) == {"reverse_string.cpp", "reverse_string.h"}


def oracle_rows(checkout: Path, out: Path, capsys) -> dict[str, dict]:
    """The oracle's runs of the exercises under `checkout`, as results.jsonl holds them."""
    code = main(
        ["bench", "exercism", str(checkout), "--oracle", "--out", str(out), "--no-progress",
         "--config", "polyglot", "--workers", "1"]
    )  # fmt: skip
    assert code == 0, capsys.readouterr().out
    lines = (out / "results.jsonl").read_text().splitlines()
    return {r["task"]: r for r in map(json.loads, lines)}


@pytest.mark.skipif(not HAS_GO, reason="go is not installed: the Go exercise cannot run")
def test_the_oracle_works_a_go_exercise(tmp_path: Path, capsys) -> None:
    go_exercise(tmp_path / "polyglot" / "go")
    (row,) = oracle_rows(tmp_path / "polyglot", tmp_path / "out", capsys).values()
    assert (row["ran"], row["worked"], row["perfect"]) == (True, True, True), row
    assert row["hidden_summary"].startswith("2 passed"), row  # both cases, from cases_test.go
    # Each run's go build cache (tens of MB with Go 1.20+, which compiles the standard library
    # into it) goes with the run's temp repo: a 225-exercise bench left gigabytes behind.
    caches = Path(os.environ["XDG_CACHE_HOME"]) / "tui-engineer" / "build"
    assert not caches.exists() or not list(caches.iterdir())


@pytest.mark.skipif(not HAS_CMAKE, reason="cmake, make or c++ is not installed: no C++ exercise")
def test_the_oracle_works_a_cpp_exercise(tmp_path: Path, capsys) -> None:
    cpp_exercise(tmp_path / "polyglot" / "cpp")
    out = tmp_path / "out"
    (row,) = oracle_rows(tmp_path / "polyglot", out, capsys).values()
    # Both test cases ran: EXERCISM_RUN_ALL_TESTS is on, and Catch2's summary was read.
    assert row["hidden_summary"].startswith("2 passed"), row
    assert (row["ran"], row["worked"], row["perfect"]) == (True, True, True), row
    record = (out / row["record"]).read_text()
    assert "CMakeCache.txt" not in record  # the build folder is never part of a step


def test_a_language_that_cannot_run_here_is_left_out_saying_why(
    python_only, tmp_path: Path, capsys
) -> None:
    javascript_exercise(python_only / "javascript")
    out = tmp_path / "out"
    code = main(
        ["bench", "exercism", str(python_only), "--oracle", "--out", str(out), "--no-progress",
         "--config", "polyglot"]
    )  # fmt: skip
    err = capsys.readouterr().err
    assert code == 0, err
    assert [r["task"] for r in rows(out)] == ["python-two-fer"]  # no run, no failure counted
    assert "left out the 1 javascript exercise: jest and babel" in err
    assert "npm registry" in err and "--languages" in err


def test_only_languages_that_cannot_run_is_one_clear_error(tmp_path: Path, capsys) -> None:
    javascript_exercise(tmp_path / "javascript")
    code = reported(
        main, ["bench", "exercism", str(tmp_path), "--oracle", "--out", str(tmp_path / "out")]
    )
    err = capsys.readouterr().err
    assert code == 2  # a problem the user can fix, as every UserError
    assert err.startswith("tui-engineer: exercism: none of the exercises can run here")
    assert "javascript (1 exercise): jest and babel" in err
    assert "Traceback" not in err


def test_a_missing_toolchain_is_named_with_how_to_get_it(tmp_path: Path, monkeypatch) -> None:
    go_exercise(tmp_path / "go")
    cpp_exercise(tmp_path / "cpp")
    python_exercise(tmp_path / "python")
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))  # no go, no cmake: python needs none
    tasks, left_out = runnable(exercism_tasks(tmp_path))
    assert [t.name for t in tasks] == ["python-two-fer"]
    assert left_out["go"] == "`go` was not found on PATH (install Go: apt-get install golang-go)"
    assert left_out["cpp"].startswith("`cmake` was not found on PATH (install CMake, make")


@whole_session
def test_lazy_comments_and_show_requests_in_aiders_columns(
    python_only, scripted_server, tmp_path
) -> None:
    lazy = 'def two_fer(name="you"):\n    # ... rest of the code ...\n'
    scripted_server.script(
        # Asks to see the tests first (answered without the user), then a whole file with a
        # placeholder comment (refused: it would delete the code it stands for), then the fix.
        Reply(text="<<<<<<< SHOW two_fer_test.py\n"),
        Reply(text="two_fer.py\n```python\n<<<<<<< FILE\n" + lazy + ">>>>>>> FILE\n```\n"),
        Reply(text=edit("two_fer.py", TWO_FER_STUB, TWO_FER_EXAMPLE)),
    )
    out = tmp_path / "out"
    assert bench_against(scripted_server, python_only, out) == 0
    (row,) = rows(out)
    assert (row["worked"], row["lazy_comments"], row["show_requests"]) == ("True", "1", "1")
    table = (out / "results.md").read_text()
    assert "| num_malformed_responses | user_asks | lazy_comments | syntax_errors |" in table
    assert "| polyglot | 1 | 0.0 | 100.0 | 0.0 | 1 | 1 | 1 | 0 |" in table


@whole_session
def test_tasks_are_chosen_before_languages_are_left_out(python_only, tmp_path, capsys) -> None:
    javascript_exercise(python_only / "javascript")
    argv = ["bench", "exercism", str(python_only), "--oracle", "--no-progress"]
    # The JavaScript task asked for by name: the reason it cannot run, not "no task named".
    code = reported(
        main, [*argv, "--out", str(tmp_path / "a"), "--task", "javascript-reverse-string"]
    )
    err = capsys.readouterr().err
    assert code == 2 and "javascript (1 exercise): jest and babel" in err, err
    # Only the Python task asked for: nothing about JavaScript.
    code = main([*argv, "--out", str(tmp_path / "b"), "--task", "python-two-fer"])
    assert code == 0 and "left out" not in capsys.readouterr().err
