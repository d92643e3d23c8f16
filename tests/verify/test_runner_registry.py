"""The registry of runner modules (verify/runners/) is the list the documents are checked
against: a runner added there and not named in the README's and docs' runner lists fails here."""

from __future__ import annotations

from pathlib import Path

import pytest

from tui_engineer.verify.runners import RUNNERS

ROOT = Path(__file__).resolve().parents[2]


def _paragraph(text: str, start: str) -> str:
    return text[text.index(start) :].split("\n\n", 1)[0]


@pytest.mark.parametrize("runner", RUNNERS, ids=lambda r: r.name)
def test_each_registered_runner_is_in_the_runner_lists(runner) -> None:
    readme = _paragraph((ROOT / "README.md").read_text("utf-8"), "**Runners.**")
    docs = (ROOT / "docs" / "configuration.md").read_text("utf-8")
    detection = docs[docs.index("## Test command detection") :]
    assert runner.name in readme and runner.name in detection
    assert callable(runner.claims) and callable(runner.report_command) and callable(runner.read)
