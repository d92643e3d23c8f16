"""`tui-engineer bench compare A B` and the bench pictures, on result folders written the way a
bench writes them."""

from __future__ import annotations

from pathlib import Path

import pytest

from tui_engineer.bench.results import RunResult, append_result
from tui_engineer.bench.stats import rate
from tui_engineer.cli.main import main


def write_bench(folder: Path, worked_per_repeat: dict[str, list[int]], tasks: int = 10) -> None:
    """A bench folder where, per config and repeat, the first N of `tasks` tasks worked."""
    folder.mkdir(parents=True)
    for config, per_repeat in worked_per_repeat.items():
        for repeat, worked in enumerate(per_repeat):
            for i in range(tasks):
                ok = i < worked
                append_result(folder, RunResult(f"t{i}", config, repeat, True, ok, ok))


def test_rate_interval_over_repeats_uses_the_spread_of_the_repeats(tmp_path):
    write_bench(tmp_path / "a", {"default": [5, 6, 7]})
    from tui_engineer.bench.results import read_results

    r = rate(read_results(tmp_path / "a"))
    # mean 0.6, sd 0.1 over 3 repeats: ± t(2)=4.303 × 0.1/√3 = ± 0.248
    assert r.value == pytest.approx(0.6)
    assert (r.low, r.high) == (pytest.approx(0.352, abs=1e-3), pytest.approx(0.848, abs=1e-3))


def test_compare_shows_both_rates_the_difference_and_marks_a_clear_change(tmp_path, capsys):
    write_bench(tmp_path / "a", {"default": [5, 5, 6], "fix0": [3, 3, 3]})
    write_bench(tmp_path / "b", {"default": [9, 10, 9], "fix0": [3, 4, 3]})
    assert main(["bench", "compare", str(tmp_path / "a"), str(tmp_path / "b")]) == 0
    out = capsys.readouterr().out
    default = next(line for line in out.splitlines() if line.startswith("| default | 53.3%"))
    assert (
        "| 93.3% [" in default and "+40.0 pts" in default and default.split("|")[4].endswith("* ")
    )
    fix0 = next(line for line in out.splitlines() if line.startswith("| fix0 | 30.0%"))
    assert "*" not in fix0  # 30% vs 33% over 3 repeats is within the noise
    assert "█" in out  # the terminal bars


def test_compare_draws_the_png_chart(tmp_path):
    pytest.importorskip("matplotlib", reason="the bench extra (matplotlib) is not installed")
    write_bench(tmp_path / "a", {"default": [5, 5, 6]})
    write_bench(tmp_path / "b", {"default": [9, 10, 9]})
    png = tmp_path / "cmp.png"
    args = ["bench", "compare", str(tmp_path / "a"), str(tmp_path / "b"), "--png", str(png)]
    assert main(args) == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_compare_refuses_a_folder_without_results(tmp_path, capsys):
    write_bench(tmp_path / "a", {"default": [5]})
    (tmp_path / "empty").mkdir()
    assert main(["bench", "compare", str(tmp_path / "a"), str(tmp_path / "empty")]) == 2
    assert "no bench results here" in capsys.readouterr().err
