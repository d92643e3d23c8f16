"""The bench's numbers in the columns of aider's leaderboard (its benchmark report's fields), so a
run of the polyglot benchmark can sit beside the published ones. docs/bench.md says how each
maps and where the engine differs."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from tui_engineer.bench.results import RunResult


@dataclass(frozen=True)
class AiderRow:
    config: str
    test_cases: int
    pass_rate_1: float
    pass_rate_2: float
    percent_cases_well_formed: float
    num_malformed_responses: int
    user_asks: int  # ours: replies that only asked to see more (SHOW), docs/bench.md
    lazy_comments: int
    syntax_errors: int
    exhausted_context_windows: int
    test_timeouts: int
    seconds_per_case: float
    total_cost: float | None

    def cells(self) -> list[str]:
        cost = "-" if self.total_cost is None else f"${self.total_cost:.4f}"
        per_case = "-" if self.total_cost is None else f"${self.total_cost / self.test_cases:.4f}"
        return [
            self.config, str(self.test_cases), f"{self.pass_rate_1:.1f}",
            f"{self.pass_rate_2:.1f}", f"{self.percent_cases_well_formed:.1f}",
            str(self.num_malformed_responses), str(self.user_asks), str(self.lazy_comments),
            str(self.syntax_errors),
            str(self.exhausted_context_windows), str(self.test_timeouts),
            f"{self.seconds_per_case:.1f}", cost, per_case,
        ]  # fmt: skip


HEADER = [
    "config", "test_cases", "pass_rate_1", "pass_rate_2", "percent_cases_well_formed",
    "num_malformed_responses", "user_asks", "lazy_comments", "syntax_errors",
    "exhausted_context_windows", "test_timeouts",
    "seconds_per_case", "total_cost", "cost per case",
]  # fmt: skip


def _pct(part: int, whole: int) -> float:
    return 100 * part / whole if whole else 0.0


def aider_rows(results: Sequence[RunResult]) -> list[AiderRow]:
    """One row per config, in the order configs first appear."""
    rows = []
    for name in dict.fromkeys(r.config for r in results):
        runs = [r for r in results if r.config == name]
        n = len(runs)
        costs = [r.usd for r in runs if r.usd is not None]
        rows.append(
            AiderRow(
                config=name,
                test_cases=n,
                pass_rate_1=_pct(sum(r.first_try for r in runs), n),
                pass_rate_2=_pct(sum(r.second_try for r in runs), n),
                percent_cases_well_formed=_pct(sum(r.malformed == 0 for r in runs), n),
                num_malformed_responses=sum(r.malformed for r in runs),
                user_asks=sum(r.show_requests for r in runs),
                lazy_comments=sum(r.lazy_comments for r in runs),
                syntax_errors=sum(r.syntax_errors for r in runs),
                exhausted_context_windows=sum(r.context_exhausted for r in runs),
                test_timeouts=sum(r.test_timeouts for r in runs),
                seconds_per_case=sum(r.wall_seconds for r in runs) / n,
                total_cost=sum(costs) if costs else None,
            )
        )
    return rows


def aider_table(results: Sequence[RunResult]) -> str:
    lines = ["| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
    lines += ["| " + " | ".join(row.cells()) + " |" for row in aider_rows(results)]
    return "\n".join(lines) + "\n"


def shapes_table(results: Sequence[RunResult]) -> str:
    """Replies per shape (edits/shapes.py) and config: which shapes a model writes, and how
    many of them were refused (malformed), beside the well-formed rate."""
    configs = list(dict.fromkeys(r.config for r in results))
    shapes = sorted({shape for r in results for shape in r.shapes})
    if not shapes:
        return ""
    header = ["config", *shapes, "malformed"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for name in configs:
        runs = [r for r in results if r.config == name]
        counts = [str(sum(r.shapes.get(shape, 0) for r in runs)) for shape in shapes]
        lines.append("| " + " | ".join([name, *counts, str(sum(r.malformed for r in runs))]) + " |")
    return "\n".join(lines) + "\n"
