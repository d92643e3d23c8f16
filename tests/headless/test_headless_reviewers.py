"""The terminal reviewer's questions: an answer it cannot read is asked again, never guessed."""

from __future__ import annotations

from tui_engineer.headless.reviewers import TerminalReviewer


def scripted(*answers: str) -> tuple[TerminalReviewer, list[str]]:
    asked: list[str] = []
    replies = iter(answers)

    def ask(prompt: str) -> str:
        asked.append(prompt)
        return next(replies)

    return TerminalReviewer(ask=ask, show=lambda _: None), asked


async def test_an_unreadable_verdict_is_asked_again() -> None:
    reviewer, asked = scripted("3", "maybe", "w", "fine")
    verdict = await reviewer.verdict()
    assert verdict is not None
    assert (verdict.ran, verdict.worked, verdict.perfect) == (True, True, False)
    assert verdict.comment == "fine"
    assert sum("Verdict" in prompt for prompt in asked) == 3  # "3" and "maybe" asked again


async def test_an_empty_verdict_skips() -> None:
    reviewer, _ = scripted("")
    assert await reviewer.verdict() is None


async def test_did_not_run_is_an_answer() -> None:
    reviewer, _ = scripted("n", "")
    verdict = await reviewer.verdict()
    assert verdict is not None and not verdict.ran


async def test_a_test_first_review_shows_the_run_on_the_old_code_and_the_run_after() -> None:
    from tui_engineer.engine.plans.plan import Step
    from tui_engineer.engine.reviews.review import Proposal
    from tui_engineer.engine.steps.test_first import PASSES_ON_OLD_CODE, BeforeRun
    from tui_engineer.verify import TestReport

    shown: list[str] = []
    reviewer = TerminalReviewer(ask=lambda _: "s", show=shown.append)
    passing = TestReport("python -m pytest", 0, 0.1, False, passed=2, structured=True)
    before = BeforeRun(passing, PASSES_ON_OLD_CODE)
    proposal = Proposal(
        step=Step(1, "Add mul", test_first=True),
        plan=[],
        diff="+def mul",
        report=passing,
        attempts=0,
        before=before,
        test_runs=(before.line(), "after the change (full): 2 passed in 0.1s"),
    )
    await reviewer.review(proposal)
    assert not proposal.tests_ok
    assert shown[1] == (
        "Step 1: Add mul — tests: the new test passes on the old code: it does not test the "
        "change; after the change: 2 passed in 0.1s"
    )
    assert shown[2].startswith("  before the change: 2 passed in 0.1s (the new test passes")
    assert shown[3] == "  after the change (full): 2 passed in 0.1s"


async def test_a_stop_or_skip_by_yes_is_recorded_as_auto_not_by_you() -> None:
    from tui_engineer.engine import events as ev
    from tui_engineer.engine.plans.plan import Step
    from tui_engineer.engine.reviews.approval import AutoReviewer
    from tui_engineer.engine.reviews.review import Proposal
    from tui_engineer.verify import TestReport

    failing = TestReport("python -m pytest", 1, 0.1, False, failed=1, structured=True)
    passing = TestReport("python -m pytest", 0, 0.1, False, passed=1, structured=True)
    stuck = Proposal(step=Step(1, "Add mul"), plan=[], diff="+x", report=failing, attempts=3)
    empty = Proposal(step=Step(2, "Tidy"), plan=[], diff="", report=passing, attempts=0)
    for proposal, kind in ((stuck, "stop"), (empty, "skip")):
        decision = await AutoReviewer().review(proposal)
        said = ev.DecisionMade(step=1, decision=decision.kind, reason="", by=decision.by)
        assert (said.decision, said.to_dict()["by"]) == (kind, "auto")


async def test_a_command_at_what_is_still_wrong_runs_and_goes_with_the_answer(tmp_path) -> None:
    """`!command` at the question runs in the repository as the user, prints its output, and
    the answer carries its command line, exit status and output (secrets masked)."""
    (tmp_path / "sub").mkdir()
    replies = iter(
        [
            "!cd sub && export API_TOKEN=tok-0123456789abc",
            "!pwd; echo $API_TOKEN; exit 2",
            "the folder is wrong",
        ]
    )
    asked: list[str] = []
    printed: list[str] = []

    def ask(prompt: str) -> str:
        asked.append(prompt)
        return next(replies)

    reviewer = TerminalReviewer(ask=ask, show=printed.append, repo=tmp_path, write=printed.append)
    answer = await reviewer.still_wrong()
    assert answer is not None and answer.startswith("the folder is wrong\n\n")
    assert "$ pwd; echo $API_TOKEN; exit 2" in answer and "(exit status 2)" in answer
    assert f"{tmp_path / 'sub'}\n[masked]" in answer and "tok-0123456789abc" not in answer
    assert "tok-0123456789abc" in "".join(printed)  # the user's own terminal shows it all
    assert "[exit status 2]" in printed
    assert "!command runs a command" in asked[0] and "'done' = done without it" in asked[-1]


async def test_done_after_a_command_sends_nothing(tmp_path) -> None:
    replies = iter(["!echo fine", "done"])
    reviewer = TerminalReviewer(
        ask=lambda _: next(replies), show=lambda _: None, repo=tmp_path, write=lambda _: None
    )
    assert await reviewer.still_wrong() == ""
