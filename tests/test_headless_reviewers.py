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
