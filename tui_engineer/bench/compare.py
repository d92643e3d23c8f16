"""`tui-engineer bench compare A B`: two result folders side by side, per config, with 95%
confidence intervals over repeats, and B − A."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from tui_engineer.base.errors import UserError
from tui_engineer.bench.results import RunResult, read_results
from tui_engineer.bench.stats import difference, rate

METRICS = ("ran", "worked", "perfect")


def _load(folder: Path) -> list[RunResult]:
    results = read_results(folder)
    if not results:
        raise UserError(f"{folder}: no bench results here (no results.jsonl with runs)")
    return results


def compare_table(a: list[RunResult], b: list[RunResult], metric: str = "worked") -> str:
    """Markdown: one row per config present in both."""
    configs = [c for c in dict.fromkeys(r.config for r in a) if any(r.config == c for r in b)]
    if not configs:
        raise UserError("The two benches share no config: nothing to compare.")
    lines = [
        f"| config | {metric} A | {metric} B | B − A | runs A | runs B |",
        "|---|---|---|---|---|---|",
    ]
    for config in configs:
        ra = rate([r for r in a if r.config == config], metric)
        rb = rate([r for r in b if r.config == config], metric)
        diff = difference(ra, rb)
        mark = " *" if diff.significant else ""
        runs_a = sum(r.config == config for r in a)
        runs_b = sum(r.config == config for r in b)
        lines.append(
            f"| {config} | {ra.text()} | {rb.text()} | {diff.text()}{mark} | {runs_a} | {runs_b} |"
        )
    return "\n".join(lines) + "\n"


def cmd_compare(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="tui-engineer bench compare",
        description="Compare two bench result folders: rates with 95%% confidence intervals "
        "over repeats, and the difference B − A (* when the interval excludes 0).",
    )
    parser.add_argument("a", type=Path, help="the baseline results folder")
    parser.add_argument("b", type=Path, help="the results folder to compare with it")
    parser.add_argument("--metric", choices=METRICS, action="append", help="default: all three")
    parser.add_argument("--png", type=Path, help="also write a bar chart here")
    args = parser.parse_args(argv)
    a, b = _load(args.a), _load(args.b)
    for metric in args.metric or METRICS:
        print(f"## {metric}\n")
        print(compare_table(a, b, metric))
    from tui_engineer.bench.plots import terminal_bars, write_png

    terminal_bars({"A": a, "B": b})
    if args.png:
        write_png({f"A: {args.a.name}": a, f"B: {args.b.name}": b}, args.png)
        print(f"Chart: {args.png}")
    return 0
