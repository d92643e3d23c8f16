"""Per-run results: what a run's events and hidden tests say, stored one JSON line per run in
`results.jsonl` (appended as runs finish, so an interrupted bench resumes), and the tables."""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

from tui_engineer.edits.elision import is_elision_refusal
from tui_engineer.engine import events as ev

RESULTS_FILE = "results.jsonl"


@dataclass
class RunResult:
    task: str
    config: str
    repeat: int
    ran: bool = False  # the repo's tests could run at least once
    worked: bool = False  # the hidden acceptance tests pass on the final commit
    perfect: bool = False  # worked with no "still wrong" follow-up
    steps: int = 0
    fix_attempts: int = 0
    edits_ok: int = 0  # replies whose edits applied
    edits_refused: int = 0  # replies with no usable edit
    malformed: int = 0  # refused replies that tried to edit (not a reply of prose only)
    lazy_comments: int = 0  # of those, refused for a "# ... rest of code" placeholder line
    show_requests: int = 0  # replies that only asked to see more of the repo (SHOW)
    shapes: dict[str, int] = field(default_factory=dict)  # reply shape -> replies (edits/shapes.py)
    syntax_errors: int = 0  # SyntaxError / IndentationError lines in failing test output
    test_timeouts: int = 0  # test runs killed at test_timeout
    context_exhausted: bool = False  # a model call's prompt or reply overflowed the window
    follow_ups: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    usd: float | None = None
    wall_seconds: float = 0.0
    hidden_seconds: float = 0.0  # of which in the hidden test command
    outcome: str = ""  # the session's: done | stopped | failed | budget | error
    error: str = ""
    hidden_summary: str = ""
    record: str = ""  # the run record, relative to the bench folder

    @property
    def key(self) -> tuple[str, str, int]:
        return (self.task, self.config, self.repeat)

    @property
    def first_try(self) -> bool:
        """Worked on the first reply: no fix attempt, no follow-up (aider's pass_rate_1)."""
        return self.worked and self.fix_attempts == 0 and self.follow_ups == 0

    @property
    def second_try(self) -> bool:
        """Worked by the second reply, the one that saw the test output (aider's pass_rate_2
        with its default two tries)."""
        return self.worked and self.fix_attempts <= 1 and self.follow_ups == 0

    @property
    def edit_rate(self) -> float | None:
        """Well-formed edit rate: replies whose edits applied, of all edit replies."""
        total = self.edits_ok + self.edits_refused
        return self.edits_ok / total if total else None

    def to_dict(self) -> dict[str, object]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, object]) -> RunResult:
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})  # type: ignore[arg-type]


def count_events(result: RunResult, events: Iterable[ev.Event]) -> None:
    """Fill the engine-side numbers of `result` from a run's events."""
    steps: set[int] = set()
    for event in events:
        if isinstance(event, ev.StepStarted):
            steps.add(event.index)
        elif isinstance(event, ev.AttemptStarted) and event.attempt > 0:
            result.fix_attempts += 1
        elif isinstance(event, ev.EditsApplied | ev.ActionApplied):
            result.edits_ok += 1
            _count_shape(result, getattr(event, "shape", "") or "actions")
        elif isinstance(event, ev.EditRefused):
            result.edits_refused += 1
            result.malformed += is_malformed(event)
            result.lazy_comments += is_elision_refusal(event.reason)
            _count_shape(result, event.shape)
        elif isinstance(event, ev.ShowRequested):
            result.show_requests += 1
        elif isinstance(event, ev.TestsFinished):
            result.ran = result.ran or event.passed + event.failed > 0
            result.test_timeouts += event.summary.startswith("timed out")
            result.syntax_errors += syntax_errors(event)
        elif isinstance(event, ev.ModelCallFailed):
            result.context_exhausted |= "context window" in event.error.lower()
        elif isinstance(event, ev.UsageUpdated):
            result.prompt_tokens = event.prompt_tokens
            result.completion_tokens = event.completion_tokens
            result.usd = event.usd
    result.steps = len(steps)


_SYNTAX = re.compile(r"^(?:E\s+)?(?:SyntaxError|IndentationError)\b", re.MULTILINE)


def syntax_errors(event: ev.TestsFinished) -> int:
    """SyntaxError and IndentationError lines in a failing run's output (as aider counts)."""
    if event.ok:
        return 0
    texts = [event.output_tail, *(trace for _, trace in event.failures)]
    return max(len(_SYNTAX.findall(text)) for text in texts) if texts else 0


def is_malformed(event: ev.EditRefused) -> bool:
    """A refused reply that tried to edit: a block that did not parse or apply, a file shown
    without markers. A reply of prose only (or SHOW rounds used up) is not a malformed edit."""
    talked = event.reason.startswith("no edits") and event.shape in ("", "prose")
    return not talked


def _count_shape(result: RunResult, shape: str) -> None:
    key = shape or "unknown"  # records from before shapes were recorded
    result.shapes[key] = result.shapes.get(key, 0) + 1


def append_result(folder: Path, result: RunResult) -> None:
    with (folder / RESULTS_FILE).open("a", encoding="utf-8") as out:
        out.write(json.dumps(result.to_dict()) + "\n")


def read_results(folder: Path) -> list[RunResult]:
    """Every finished run in a bench folder; a torn last line (a crash mid-write) is ignored."""
    path = folder / RESULTS_FILE
    if not path.is_file():
        return []
    results = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            results.append(RunResult.from_dict(json.loads(line)))
        except (json.JSONDecodeError, TypeError):
            continue
    return results


@dataclass
class ConfigSummary:
    config: str
    runs: int
    ran: int
    worked: int
    perfect: int
    mean_steps: float
    mean_fix_attempts: float
    edit_rate: float | None
    tokens: int
    usd: float | None
    mean_seconds: float


def summarize(results: Sequence[RunResult]) -> list[ConfigSummary]:
    """One row per config, in the order configs first appear."""
    order = list(dict.fromkeys(r.config for r in results))
    rows = []
    for name in order:
        runs = [r for r in results if r.config == name]
        n = len(runs)
        ok = sum(r.edits_ok for r in runs)
        refused = sum(r.edits_refused for r in runs)
        costs = [r.usd for r in runs if r.usd is not None]
        rows.append(
            ConfigSummary(
                config=name,
                runs=n,
                ran=sum(r.ran for r in runs),
                worked=sum(r.worked for r in runs),
                perfect=sum(r.perfect for r in runs),
                mean_steps=sum(r.steps for r in runs) / n,
                mean_fix_attempts=sum(r.fix_attempts for r in runs) / n,
                edit_rate=ok / (ok + refused) if ok + refused else None,
                tokens=sum(r.prompt_tokens + r.completion_tokens for r in runs),
                usd=sum(costs) if costs else None,
                mean_seconds=sum(r.wall_seconds for r in runs) / n,
            )
        )
    return rows


def _pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "-"


def _summary_cells(s: ConfigSummary) -> list[str]:
    return [
        s.config,
        str(s.runs),
        _pct(s.ran, s.runs),
        _pct(s.worked, s.runs),
        _pct(s.perfect, s.runs),
        f"{s.mean_steps:.2f}",
        f"{s.mean_fix_attempts:.2f}",
        "-" if s.edit_rate is None else f"{100 * s.edit_rate:.1f}%",
        str(s.tokens),
        "-" if s.usd is None else f"${s.usd:.4f}",
        f"{s.mean_seconds:.1f}",
    ]


SUMMARY_HEADER = [
    "config", "runs", "ran", "worked", "perfect", "steps", "fix attempts",
    "well-formed edits", "tokens", "cost", "seconds/run",
]  # fmt: skip


def markdown_table(results: Sequence[RunResult]) -> str:
    lines = ["| " + " | ".join(SUMMARY_HEADER) + " |", "|" + "---|" * len(SUMMARY_HEADER)]
    for summary in summarize(results):
        lines.append("| " + " | ".join(_summary_cells(summary)) + " |")
    return "\n".join(lines) + "\n"


RUN_COLUMNS = [
    "task", "config", "repeat", "ran", "worked", "perfect", "steps", "fix_attempts",
    "edit_rate", "follow_ups", "prompt_tokens", "completion_tokens", "usd", "wall_seconds",
    "outcome", "error", "record", "first_try", "second_try", "malformed", "lazy_comments",
    "show_requests", "syntax_errors", "test_timeouts", "context_exhausted",
]  # fmt: skip


def runs_csv(results: Sequence[RunResult]) -> str:
    """One row per run, sorted so two benches of the same runs give the same file."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(RUN_COLUMNS)
    for r in sorted(results, key=lambda r: r.key):
        rate = r.edit_rate
        row = {**r.to_dict(), "edit_rate": "" if rate is None else f"{rate:.3f}"}
        row.update(first_try=r.first_try, second_try=r.second_try)
        row["usd"] = "" if r.usd is None else f"{r.usd:.6f}"
        row["wall_seconds"] = f"{r.wall_seconds:.2f}"
        writer.writerow([row[c] for c in RUN_COLUMNS])
    return out.getvalue()


def write_tables(folder: Path, results: Sequence[RunResult], more: str = "") -> None:
    """results.md (the summary, then `more`: the same runs in aider's columns) and results.csv."""
    text = markdown_table(results) + (f"\n{more}" if more else "")
    (folder / "results.md").write_text(text, encoding="utf-8")
    (folder / "results.csv").write_text(runs_csv(results), encoding="utf-8")


# What a replay must reproduce: the outcome, not the timing.
OUTCOME_FIELDS = ("ran", "worked", "perfect", "steps", "fix_attempts", "edits_ok", "follow_ups")


def outcome_differences(recorded: Sequence[RunResult], replayed: Sequence[RunResult]) -> list[str]:
    """Sentences naming each run whose replay ended differently from its recording."""
    before = {r.key: r for r in recorded}
    lines = []
    for run in sorted(replayed, key=lambda r: r.key):
        old = before.get(run.key)
        if old is None:
            continue
        changed = [
            f"{name} {getattr(old, name)} → {getattr(run, name)}"
            for name in OUTCOME_FIELDS
            if getattr(old, name) != getattr(run, name)
        ]
        if changed:
            task, config, repeat = run.key
            lines.append(f"{task} [{config} #{repeat}]: " + ", ".join(changed))
    return lines
