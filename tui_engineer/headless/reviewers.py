"""Headless Reviewers: plain terminal prompts (`--yes` is engine/reviews/approval.py's AutoReviewer,
which the bench uses too)."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable
from pathlib import Path

from tui_engineer.base.user_shell import UserShell
from tui_engineer.engine.reviews.review import Decision, Proposal, Verdict, written_line
from tui_engineer.headless.hunk_prompts import per_hunk

# What a typed verdict means; anything else is asked again (a stray "3" is no verdict).
VERDICT_ANSWERS = {
    **dict.fromkeys(("n", "no", "none", "did not run"), "n"),
    **dict.fromkeys(("r", "ran", "run"), "r"),
    **dict.fromkeys(("w", "works", "work", "worked"), "w"),
    **dict.fromkeys(("p", "perfect"), "p"),
}


class TerminalReviewer:
    """Asks on the terminal. End of input (a closed stdin) means stop."""

    def __init__(
        self,
        ask: Callable[[str], str] = input,
        show: Callable[[str], None] = print,
        *,
        repo: Path | None = None,
        write: Callable[[str], object] | None = None,
    ) -> None:
        self._ask = ask
        self._show = show
        # `!command` at "What is still wrong?": the user's own shell, in the working tree.
        self._shell = UserShell(repo) if repo is not None else None
        self._write = write or _write_out

    async def _prompt(self, text: str) -> str | None:
        try:
            return (await asyncio.to_thread(self._ask, text)).strip()
        except EOFError:
            return None

    async def review(self, proposal: Proposal) -> Decision:
        self._show(proposal.diff or "(no changes)")
        step = proposal.step
        self._show(f"Step {step.index}: {step.title} — tests: {proposal.summary()}")
        if proposal.partial and not proposal.tests_ok:
            self._show("  the kept hunks fail their tests: not committed; decide again")
        if proposal.before is not None:  # a test-first step: both runs
            for run in proposal.test_runs:
                self._show(f"  {run}")
        for action in proposal.actions:
            self._show(f"  sandbox action: {action}")
        if proposal.written:  # kept, file by file, through p
            self._show(f"  {written_line(proposal.written)} (p to keep one)")
        for note in proposal.notes:
            self._show(f"  note: {note}")
        while True:
            answer = await self._prompt("[a]ccept, [p]er hunk, [r]eject, [s]kip, s[t]op? ")
            if answer is None or answer.lower() in {"t", "stop"}:
                return Decision("stop", "stopped by the human")
            if answer.lower() in {"a", "accept", "y", "yes"}:
                return Decision.accept()
            if answer.lower() in {"p", "per hunk"}:
                decision = await per_hunk(proposal, self._prompt, self._show)
                if decision is not None:
                    return decision
                continue
            if answer.lower() in {"s", "skip"}:
                return Decision("skip", "skipped by the human")
            if answer.lower() in {"r", "reject"}:
                reason = await self._prompt("Why? (the model sees this) ")
                return Decision.reject(reason or "rejected without a reason")
            print("Please answer a, p, r, s or t.", file=sys.stderr)

    async def still_wrong(self) -> str | None:
        """The answer; `!command` runs the command and its output goes with the answer."""
        attached = ""
        question = "What is still wrong? (empty = done"
        question += ", !command runs a command) " if self._shell is not None else ") "
        while True:
            answer = await self._prompt(question)
            if answer is not None and answer.startswith("!") and self._shell is not None:
                attached = await self._run(answer[1:].strip()) or attached
                question = (
                    "What is still wrong? (its output goes with your answer; "
                    "empty = the output alone, 'done' = done without it) "
                )
                continue
            if answer is None or not attached:
                return answer
            if answer.lower() == "done":
                return ""
            return f"{answer}\n\n{attached}" if answer else attached

    async def _run(self, command: str) -> str:
        """Run the human's command with its output on the terminal; the model's attachment."""
        if not command or self._shell is None:  # (no shell: never asked)
            print("Type a command after !, e.g. !python -m pytest -x", file=sys.stderr)
            return ""
        run = await self._shell.run(command, self._write)
        if run.output and not run.output.endswith("\n"):
            self._write("\n")
        self._show(f"[{run.outcome}]")
        return run.attachment()

    async def verdict(self) -> Verdict | None:
        while True:
            answer = await self._prompt(
                "Verdict — it did [n]ot run, it [r]an, it [w]orks, or it is [p]erfect? "
                "(empty skips) "
            )
            if not answer:
                return None
            level = VERDICT_ANSWERS.get(answer.lower())
            if level is not None:
                break
            print("Please answer n, r, w or p (or nothing to skip).", file=sys.stderr)
        comment = await self._prompt("Any comment? ") or ""
        return Verdict(
            ran=level in "rwp", worked=level in "wp", perfect=level == "p", comment=comment
        )


def _write_out(text: str) -> None:
    sys.stdout.write(text)
    sys.stdout.flush()


NO_TESTS_ANSWERS = {
    **dict.fromkeys(("w", "write", "write tests"), "write"),
    **dict.fromkeys(("u", "unverified"), "unverified"),
}


def ask_without_tests(ask: Callable[[str], str] = input) -> str | None:
    """No test command was found: ask how to go on, as the TUI's "No tests found" dialog does.
    "write", "unverified", or None to stop (an empty answer, "q", or a closed stdin)."""
    while True:
        try:
            answer = ask(
                "No tests found. [w]rite tests first (the first step writes them, test-first), "
                "work [u]nverified (no tests run), or [q]uit? "
            ).strip()
        except EOFError:
            return None
        if answer.lower() in {"", "q", "quit"}:
            return None
        if answer.lower() in NO_TESTS_ANSWERS:
            return NO_TESTS_ANSWERS[answer.lower()]
        print("Please answer w, u or q.", file=sys.stderr)


def ask_take_over(message: str, ask: Callable[[str], str] = input) -> str | None:
    """Another process's session works on the repository: say which, and ask whether to take it
    over, as the TUI's "Another session works on this repository" dialog does. "take_over", or
    None to leave it alone (an empty answer, "q", or a closed stdin)."""
    print(message, file=sys.stderr)
    while True:
        try:
            answer = ask(
                "[t]ake it over (it stops there, its accepted steps committed, and goes on "
                "here), or [q]uit and leave it alone? "
            ).strip()
        except EOFError:
            return None
        if answer.lower() in {"", "q", "quit", "n", "no"}:
            return None
        if answer.lower() in {"t", "take", "take over", "y", "yes"}:
            return "take_over"
        print("Please answer t or q.", file=sys.stderr)
