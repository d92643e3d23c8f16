"""What an ACP tool call shows of the session: a proposal's text beside its diff (tests, old
failures, what the tests wrote), the lines a test run ends with, where each hunk starts (for an
editor's "jump to change"), and the updates that open and close a test run's call. Pure text and
SDK models; acp/updates.py places them in the session's stream."""

from __future__ import annotations

from pathlib import Path

from acp import start_tool_call, text_block, tool_content, update_tool_call
from acp.schema import ToolCallLocation

from tui_engineer.base.names import readable
from tui_engineer.engine import events as ev
from tui_engineer.engine.reviews.hunks import DiffUnreadable, parse
from tui_engineer.engine.reviews.review import old_failure_lines, written_line

TAIL_LINES = 40  # of a failing run's output, in its tool call
Update = object  # one of the SDK's session update models


def nothing_proposed(call: str, event: ev.ProposalReady) -> Update:
    """A proposal with no change (the model sent no edit): nothing to accept, so not an edit;
    the review offers to ask again or to skip the step."""
    title = f"Step {event.step}: {event.title} (no change to commit)"
    text = f"The model proposed no change for this step.\n{proposal_text(event)}"
    return start_tool_call(
        call, readable(title), kind="other", status="pending",
        content=[tool_content(text_block(readable(text)))], raw_input={"step": event.step},
    )  # fmt: skip


def run_started(call: str, title: str, command: str) -> Update:
    return start_tool_call(
        call, readable(title), kind="execute", status="in_progress", raw_input={"command": command}
    )


def run_finished(call: str, ok: bool, text: str) -> Update:
    return update_tool_call(
        call,
        status="completed" if ok else "failed",
        content=[tool_content(text_block(readable(text)))],
    )


def test_result_text(event: ev.TestsFinished) -> str:
    """A run's result as the editor shows it: counts, failing tests by name, old failures named
    as old, and a failing run's last lines."""
    lines = [event.summary]
    if event.failing:
        lines.append("Failing: " + ", ".join(event.failing))
    if event.old_failing:
        old = ", ".join(event.old_failing)
        lines.append(f"Failing before the session too (not this step's): {old}")
    if not event.ok and event.output_tail:
        tail = event.output_tail.rstrip().splitlines()[-TAIL_LINES:]
        lines += ["", "```", *tail, "```"]
    return "\n".join(lines)


def proposal_text(event: ev.ProposalReady) -> str:
    """What the review says beside the diff: the tests (a test-first step's before and after
    runs), old failures, the files the tests wrote (not in the diff or the commit), sandbox
    actions and notes."""
    lines = [f"Tests: {event.summary}"]
    lines += [f"- {run}" for run in event.test_runs]
    lines += old_failure_lines(event.fixed, event.still_failing, event.old_failures, event.disowned)
    if event.written_by_tests:
        line = written_line(event.written_by_tests)
        lines.append(f"{line[0].upper()}{line[1:]}")
    lines += [f"Sandbox action: {action}" for action in event.actions]
    lines += [f"Note: {note}" for note in event.notes]
    return "\n".join(lines)


def hunk_locations(root: Path, event: ev.ProposalReady) -> list[ToolCallLocation]:
    """Where a proposal changes each file: the first changed line (1-based, in the new text)
    of each hunk, so an editor's "jump to change" lands on it; a file without hunks (binary,
    deleted, renamed only) by its path alone."""
    try:
        files = parse(event.diff)
    except DiffUnreadable:
        return [ToolCallLocation(path=str(root / p)) for _, p in event.changes]
    found = []
    for file in files:
        path = str(root / file.path)
        lines = [] if file.is_removed_file else [_first_changed(hunk) for hunk in file]
        found += [ToolCallLocation(path=path, line=n) for n in lines] or [
            ToolCallLocation(path=path)
        ]
    return found


def _first_changed(hunk: object) -> int:
    """The new text's line where `hunk` first changes something (a removal: the line that now
    stands where the removed one was)."""
    line = hunk.target_start  # type: ignore[attr-defined]
    for row in hunk:  # type: ignore[attr-defined]
        if row.is_added:
            return row.target_line_no
        if row.is_removed:
            return max(line, 1)
        line += 1
    return max(hunk.target_start, 1)  # type: ignore[attr-defined]


def read_file(path: Path) -> str | None:
    try:
        return path.read_bytes().decode("utf-8", "replace")
    except OSError:
        return None
