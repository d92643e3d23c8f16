"""The command line front door: help and version answer fast and without a traceback."""

from __future__ import annotations

import io
import os
import subprocess
import sys

import pytest

from tests.conftest import fresh_python
from tui_engineer import __version__
from tui_engineer.base.errors import UserError
from tui_engineer.cli.terminal import require_terminal


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
        "import sys; from tui_engineer.cli import main as cli; "
        "import contextlib, io\n"
        "with contextlib.suppress(SystemExit), contextlib.redirect_stdout(io.StringIO()):\n"
        "    cli.main(['--help'])\n"
        "heavy = [m for m in ('textual', 'openai', 'git', 'docker') if m in sys.modules]\n"
        "print(','.join(heavy))"
    )
    assert fresh_python(code).strip() == ""


def test_a_headless_session_loads_the_model_sdk_only_when_it_makes_the_client() -> None:
    """Run records, progress printing and the headless runner do not need the openai SDK (the
    slowest import there is): `tui-engineer runs` never pays for it, a session once."""
    code = (
        "import sys\n"
        "import tui_engineer.session.run, tui_engineer.headless.printer\n"
        "import tui_engineer.records, tui_engineer.records.listing\n"
        "from tui_engineer.llm import BudgetExceeded, UsageLedger\n"
        "print('openai' in sys.modules)\n"
        "from tui_engineer.llm import ModelClient\n"
        "print('openai' in sys.modules)"
    )
    assert fresh_python(code).split() == ["False", "True"]


def test_after_a_headless_run_the_process_ends_at_once_with_its_code_and_output(
    tmp_path, monkeypatch, capsys
) -> None:
    """No interpreter teardown after `run` (it took up to 2 s here), but its exit code and
    everything it printed still come out."""
    import pytest

    from tui_engineer.cli import main as cli

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


@pytest.mark.parametrize("args", [["add sub"], ["demo"]], ids=["app", "demo"])
def test_without_a_terminal_the_app_does_not_start_and_names_the_headless_command(
    args: list[str], make_repo
) -> None:
    """`tui-engineer "hello" > out.txt < /dev/null` drew escape codes into the file and then
    spun at 100% CPU for ever; it now says in one line what to use instead, exit 2."""
    done = subprocess.run(
        [sys.executable, "-m", "tui_engineer", *args],
        cwd=make_repo(),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=30,
        env={k: v for k, v in os.environ.items() if k != "TEXTUAL_DRIVER"},
    )
    assert done.returncode == 2
    assert done.stdout == ""  # no escape codes in the file or pipe
    (line,) = done.stderr.splitlines()
    assert "needs a terminal" in line and "stdin and stdout are not one" in line
    assert "tui-engineer run" in line


def test_an_app_given_a_driver_needs_no_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    """textual-serve (`tui-engineer serve`) names its own driver for each tab's app, over pipes."""
    monkeypatch.setattr(sys, "stdin", io.StringIO())  # not a terminal, whatever runs pytest
    monkeypatch.setenv("TEXTUAL_DRIVER", "textual.drivers.web_driver:WebDriver")
    require_terminal()  # no error: stdin and stdout here are not terminals either
    monkeypatch.delenv("TEXTUAL_DRIVER")
    with pytest.raises(UserError):
        require_terminal()
