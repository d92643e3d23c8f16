"""The registry of runner modules (verify/runners/) is the list the documents are checked
against: a runner added there and not named in the README's list of runners read test by test
fails here, and so does a runner the README names that the registry lacks."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tui_engineer.verify.runners import RUNNERS

ROOT = Path(__file__).resolve().parents[2]
# The protocol (verify/runners/base.py): what every module must provide.
PROTOCOL = (
    "claims",
    "report_command",
    "read",
    "read_report",
    "narrows",
    "narrowed",
    "started",
    "old_lines",
)


def _paragraph(text: str, start: str) -> str:
    return text[text.index(start) :].split("\n\n", 1)[0]


def _readme_runners() -> list[str]:
    """The names after "Read test by test:" in the README's **Runners.** paragraph."""
    paragraph = " ".join(
        _paragraph((ROOT / "README.md").read_text("utf-8"), "**Runners.**").split()
    )
    found = re.search(r"Read test by test: (.*?)\. ", paragraph)
    assert found, "the README's **Runners.** paragraph lists the runners read test by test"
    return [name.strip().strip("`") for name in found.group(1).split(",")]


def test_the_readme_names_exactly_the_registered_runners() -> None:
    assert sorted(_readme_runners()) == sorted(r.name for r in RUNNERS)


@pytest.mark.parametrize("runner", RUNNERS, ids=lambda r: r.name)
def test_each_registered_runner_keeps_the_protocol_and_is_documented(runner) -> None:
    assert all(
        callable(getattr(runner, member, None))
        for member in (*PROTOCOL, "files_command", "start_problem")
    )
    docs = (ROOT / "docs" / "configuration.md").read_text("utf-8")
    assert runner.name in docs[docs.index("## Test command detection") :]
