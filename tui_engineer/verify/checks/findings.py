"""A check's output read as findings, and judged against the starting commit's like test failures.

Most linters and type checkers write one finding a line as `path:line[:col]: message` (ruff's
concise output, mypy, flake8, clippy's short format, eslint's unix format). A finding is known
by its file and message, not its line number: a step that adds lines above an old finding moves
it, and it is still old. A finding counts as new when the step's run has more of it than the
starting commit's. Output without such lines is judged by the exit code alone: failing now and
not at the start is new; failing at the start too is the repository's."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

_FINDING = re.compile(r"^(?P<path>[^\s:][^:\n]*?):(?P<line>\d+)(?::\d+)?:\s*(?P<message>\S.*)$")
_MAX_FOR_MODEL = 40


@dataclass(frozen=True)
class Finding:
    path: str
    line: int
    message: str
    text: str  # the tool's own line

    @property
    def key(self) -> tuple[str, str]:
        return self.path, self.message


def parse(output: str) -> list[Finding]:
    found = []
    for raw in output.splitlines():
        m = _FINDING.match(raw.strip())
        if m is not None:
            found.append(Finding(m["path"], int(m["line"]), m["message"].strip(), raw.strip()))
    return found


@dataclass
class CheckResult:
    """One check's run on a step: what it found that is new, and what was there before."""

    name: str
    command: str
    ok: bool  # no new finding (a formatter's rewrite is folded in, not a finding)
    duration: float
    output: str = ""
    new: list[Finding] = field(default_factory=list)
    old: list[Finding] = field(default_factory=list)
    failing_before: bool = False  # failed on the starting commit too (output without findings)
    timed_out: bool = False
    rewrote: tuple[str, ...] = ()  # a formatter: the files it rewrote

    def summary(self) -> str:
        if self.timed_out:
            return f"timed out after {self.duration:.0f}s (not judged)"
        if self.rewrote:
            return f"rewrote {', '.join(self.rewrote)}"
        parts = []
        if self.new:
            parts.append(f"{len(self.new)} new finding{'s' if len(self.new) != 1 else ''}")
        elif not self.ok:
            parts.append("failed")
        if self.old:
            parts.append(f"{len(self.old)} from before this session")
        if self.failing_before and self.ok:
            parts.append("failing before this session too")
        return ", ".join(parts) or "passed"

    def for_model(self) -> str:
        """What the model reads: the tool's command and its own words for what is new."""
        head = f"Check: {self.name} (`{self.command}`) found problems in your change."
        if self.new:
            shown = [f.text for f in self.new[:_MAX_FOR_MODEL]]
            more = len(self.new) - len(shown)
            lines = shown + ([f"... and {more} more"] if more > 0 else [])
            return head + "\nNew findings:\n" + "\n".join(lines)
        return head + "\nIts output (last lines):\n" + "\n".join(self.output.splitlines()[-40:])


def judge(
    name: str,
    command: str,
    step: tuple[int | None, str, float],
    start: tuple[int | None, str] | None,
) -> CheckResult:
    """`step` and `start`: (exit code, output[, duration]) of the runs on the step and on the
    starting commit (None: not run, the step's run passed)."""
    code, output, duration = step
    result = CheckResult(name, command, code == 0, duration, output)
    if code == 0 or start is None:
        return result
    now, before = parse(output), parse(start[1])
    if now:
        left = Counter(f.key for f in before)
        for f in now:
            if left[f.key] > 0:
                left[f.key] -= 1
                result.old.append(f)
            else:
                result.new.append(f)
        result.ok = not result.new
        return result
    result.failing_before = start[0] != 0
    result.ok = result.failing_before
    return result
