"""The engine mid-plan with a real model's timing: undo while the next step is reviewed, a model
server that drops and comes back, steps planned from the human's words."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import git
from tests.engine_support import DIV, KEY, SUB, run_headless
from tests.scripted_server import Reply
from tui_engineer.engine import events as ev
from tui_engineer.engine.review import Decision


@pytest.fixture(autouse=True)
def api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)


def titles(repo: Path) -> list[str]:
    return git(repo, "log", "--format=%s").splitlines()


class Reviewer:
    """Answers reviews from a list, and "what is still wrong?" from another."""

    def __init__(self, decisions: list[Decision], answers: list[str] = ()) -> None:
        self.decisions = list(decisions)
        self.answers = list(answers)

    async def review(self, proposal):
        return self.decisions.pop(0)

    async def still_wrong(self):
        return self.answers.pop(0) if self.answers else None

    async def verdict(self):
        return None


async def test_a_step_planned_from_the_humans_words_is_titled_from_them(
    make_repo, scripted_server
) -> None:
    repo = make_repo()
    scripted_server.script(
        Reply(text=SUB),
        Reply(text="I am not sure what to plan."),  # no usable plan, twice: one step
        Reply(text="Still no plan."),
        Reply(text=DIV),
    )
    reviewer = Reviewer([Decision.accept(), Decision.accept()], ["no way to divide"])
    result, seen = await run_headless(
        repo, "add sub", scripted_server.base_url, reviewer=reviewer, plan=False
    )
    assert titles(repo) == ["no way to divide", "add sub", "initial"]
    steps = seen.of(ev.PlanReady)[-1].steps
    assert steps[-1].title == "no way to divide"
    assert steps[-1].asked == "no way to divide"
    assert result.exit_code == 0
