"""`tui-engineer bench exercism PATH`: Exercism's layout read into tasks, the oracle (each
exercise's example solution over real HTTP) working every exercise in Python and Rust with the
real pytest and cargo, and aider's columns from a model that needs its second try."""

from __future__ import annotations

import csv
import shutil
from pathlib import Path

import pytest

from tests.bench.exercism_support import (
    TWO_FER_EXAMPLE,
    TWO_FER_TEST,
    polyglot_checkout,
    python_exercise,
)
from tests.engine_support import edit
from tests.scripted_server import Reply
from tui_engineer.bench.exercism import exercism_tasks
from tui_engineer.cli import main
from tui_engineer.errors import UserError

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
            "True", "True", "True", "0"
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
    assert "| small | 1 | 0.0 | 0.0 | 100.0 | 0 | 0 | 1 | 0 |" in (out / "results.md").read_text()


def test_the_model_may_not_edit_the_tests(python_only, scripted_server, tmp_path):
    gutted = TWO_FER_TEST.replace('"One for Alice, one for me."', "two_fer(\"Alice\")").replace(
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
