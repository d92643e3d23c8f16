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
