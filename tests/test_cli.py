"""The command line front door: help and version answer fast and without a traceback."""

from __future__ import annotations

import subprocess
import sys

from tui_engineer import __version__


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tui_engineer", *args], capture_output=True, text=True, timeout=60
    )


def test_version_prints_package_version() -> None:
    done = run_cli("--version")
    assert done.returncode == 0
    assert done.stdout.strip() == f"tui-engineer {__version__}"


def test_help_mentions_subcommands() -> None:
    done = run_cli("--help")
    assert done.returncode == 0
    assert "tui-engineer config" in done.stdout
    assert "--test-cmd" in done.stdout


def test_help_does_not_import_heavy_libraries() -> None:
    code = (
        "import sys; from tui_engineer import cli; "
        "import contextlib, io\n"
        "with contextlib.suppress(SystemExit), contextlib.redirect_stdout(io.StringIO()):\n"
        "    cli.main(['--help'])\n"
        "heavy = [m for m in ('textual', 'openai', 'git', 'docker') if m in sys.modules]\n"
        "print(','.join(heavy))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == ""


def test_a_headless_session_loads_the_model_sdk_only_when_it_makes_the_client() -> None:
    """Run records, progress printing and the headless runner do not need the openai SDK (the
    slowest import there is): `tui-engineer runs` never pays for it, a session once."""
    code = (
        "import sys\n"
        "import tui_engineer.headless.runner, tui_engineer.headless.printer\n"
        "import tui_engineer.records, tui_engineer.records.listing\n"
        "from tui_engineer.llm import BudgetExceeded, UsageLedger\n"
        "print('openai' in sys.modules)\n"
        "from tui_engineer.llm import ModelClient\n"
        "print('openai' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", "True"]


def test_after_a_headless_run_the_process_ends_at_once_with_its_code_and_output(
    tmp_path, monkeypatch, capsys
) -> None:
    """No interpreter teardown after `run` (it took up to 2 s here), but its exit code and
    everything it printed still come out."""
    import pytest

    from tui_engineer import cli

    class Ended(Exception):
        pass

    def end(code: int) -> None:
        raise Ended(code)

    monkeypatch.setattr(cli.os, "_exit", end)
    monkeypatch.setattr(sys, "argv", ["tui-engineer", "run", "anything", "-C", str(tmp_path)])
    with pytest.raises(Ended) as ended:
        cli.program()
    assert ended.value.args == (2,)  # not a git repository: a setup error
    assert "tui-engineer:" in capsys.readouterr().err
    # Other commands end the usual way.
    monkeypatch.setattr(sys, "argv", ["tui-engineer", "--version"])
    with pytest.raises(SystemExit):
        cli.program()
