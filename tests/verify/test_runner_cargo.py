"""cargo test runs every test binary, failing or not (`--no-fail-fast`, placed before libtest's
own arguments); the session's test command is shown as the user wrote it."""

from __future__ import annotations

import pytest

from tui_engineer.verify.runners import report_command


@pytest.mark.parametrize(
    ("command", "run"),
    [
        ("cargo test", "cargo test --no-fail-fast"),
        ("cargo test --workspace", "cargo test --workspace --no-fail-fast"),
        ("cargo test -- --test-threads 1", "cargo test --no-fail-fast -- --test-threads 1"),
        ("cargo test --no-fail-fast", "cargo test --no-fail-fast"),
        ("RUST_BACKTRACE=1 cargo test", "RUST_BACKTRACE=1 cargo test --no-fail-fast"),
        ("cargo build && cargo test", "cargo build && cargo test"),  # compound: left alone
        ("cargo nextest run", "cargo nextest run"),
    ],
)
def test_cargo_test_runs_every_binary(command: str, run: str) -> None:
    assert report_command(command) == run
