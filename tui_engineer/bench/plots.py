"""Pictures of bench results: a PNG bar chart (matplotlib, from the bench extra) and bars in
the terminal drawn with Rich in the TUI's colours."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from tui_engineer.base.errors import UserError
from tui_engineer.bench.results import RunResult
from tui_engineer.bench.stats import rate

# The TUI's dark theme accents (themes/tui-engineer-dark.toml): worked green, perfect blue.
COLOURS = {"worked": "#a6e3a1", "perfect": "#89b4fa"}
BAR_WIDTH = 30


def _configs(groups: Mapping[str, Sequence[RunResult]]) -> list[str]:
    return list(dict.fromkeys(r.config for runs in groups.values() for r in runs))


def bar_lines(groups: Mapping[str, Sequence[RunResult]], metric: str = "worked") -> list[str]:
    """Rich markup, one bar per (config, group): the rate, its 95% interval as ├─┤ marks."""
    lines = []
    colour = COLOURS.get(metric, "#a6e3a1")
    for config in _configs(groups):
        for label, runs in groups.items():
            mine = [r for r in runs if r.config == config]
            if not mine:
                continue
            r = rate(mine, metric)
            filled = round(r.value * BAR_WIDTH)
            bar = "█" * filled + "░" * (BAR_WIDTH - filled)
            name = f"{config} {label}".strip()
            lines.append(f"{name:<24} [{colour}]{bar}[/] {r.text()}")
    return lines


def terminal_bars(groups: Mapping[str, Sequence[RunResult]], metric: str = "worked") -> None:
    from rich.console import Console

    console = Console()
    console.print(f"[bold]{metric}[/] (95% interval)")
    for line in bar_lines(groups, metric):
        console.print(line, highlight=False)


def write_png(groups: Mapping[str, Sequence[RunResult]], path: Path) -> None:
    """Grouped bars of worked and perfect per config, with 95% interval whiskers."""
    try:
        import matplotlib

        matplotlib.use("Agg")  # no display: files only
        import matplotlib.pyplot as plt
    except ImportError:
        raise UserError(
            'The PNG chart needs matplotlib: pip install "tui-engineer[bench]"'
        ) from None
    configs = _configs(groups)
    series = [(label, metric) for label in groups for metric in ("worked", "perfect")]
    width = 0.8 / len(series)
    fig, ax = plt.subplots(figsize=(max(5, 1.6 * len(configs) + 2), 4))
    for i, (label, metric) in enumerate(series):
        rates = [rate([r for r in groups[label] if r.config == c], metric) for c in configs]
        xs = [c + (i - (len(series) - 1) / 2) * width for c in range(len(configs))]
        values = [100 * r.value for r in rates]
        errors = [
            [100 * (r.value - r.low) for r in rates],
            [100 * (r.high - r.value) for r in rates],
        ]
        name = f"{label} {metric}".strip()
        ax.bar(
            xs,
            values,
            width,
            yerr=errors,
            capsize=3,
            label=name,
            alpha=0.9 if metric == "worked" else 0.6,
        )
    ax.set_xticks(range(len(configs)), configs)
    ax.set_ylim(0, 105)
    ax.set_ylabel("% of runs")
    ax.set_title("tui-engineer bench (95% intervals)")
    ax.legend(fontsize="small")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)
    plt.close(fig)
