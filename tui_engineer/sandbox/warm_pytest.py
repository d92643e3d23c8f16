"""A pytest run started early and paused: its start-up (Python, pytest, the installed plugins'
entry points with their assertion rewriting: ~0.8 s here) runs while the model writes the edit.

The test command `[VAR=value …] <python> -m pytest ARGS` is started, contained like any run, as
`<python> -c BOOTSTRAP ARGS`: pytest itself, with one more plugin object that waits in a
`tryfirst` `pytest_load_initial_conftests` hook, i.e. after the arguments, the ini file and the
plugins are loaded and before any conftest or test module is read. It goes on when "go" arrives
on its stdin, if nothing it already read changed: the ini files that decide the rootdir and the
options (pytest.ini, .pytest.ini, pyproject.toml, tox.ini, setup.cfg where pytest looks), and no
module was imported from the worktree. Otherwise (or on anything unexpected before "go") it
exits with NOT_USED and the run is made from scratch. What pytest then does is what the plain
command does from that point on; the differences: `sys.argv[0]` is "-c", and `__main__` is the
bootstrap, not pytest's `__main__`.
"""

from __future__ import annotations

import shlex
from pathlib import Path

from tui_engineer.base.shell_command import tokens as shell_tokens

NOT_USED = 75  # the paused run exited without running anything

# Runs as `python -c BOOTSTRAP ARGS` in the worktree. Kept small: it is the first thing read.
BOOTSTRAP = r"""
import os, sys
def _out(code=75):
    os._exit(code)
try:
    _go = os.dup(0)  # pytest's capture puts /dev/null on fd 0 before the hook runs
    _here = os.getcwd()
    sys.path[0] = _here  # as `python -m pytest` has it
    _NAMES = ("pytest.ini", ".pytest.ini", "pyproject.toml", "tox.ini", "setup.cfg")
    def _state():
        folders = {_here}
        for arg in sys.argv[1:]:
            if arg.startswith("-"):
                continue
            path = os.path.abspath(arg.split("::")[0])
            while path.startswith(_here + os.sep):
                folders.add(path)
                path = os.path.dirname(path)
        seen = {}
        for folder in sorted(folders):
            for name in _NAMES:
                try:
                    with open(os.path.join(folder, name), "rb") as f:
                        seen[(folder, name)] = f.read()
                except OSError:
                    seen[(folder, name)] = None
        return seen
    def _from_here():
        for module in list(sys.modules.values()):
            path = getattr(module, "__file__", None) or ""
            if os.path.abspath(path).startswith(_here + os.sep):
                return True
        return False
    _before = _state()  # before pytest reads them
    import pytest
    class _Pause:
        went = False
        @pytest.hookimpl(tryfirst=True)
        def pytest_load_initial_conftests(self, early_config):
            try:
                with os.fdopen(_go, "rb") as channel:
                    word = channel.readline()
                if word.strip() != b"go" or _state() != _before or _from_here():
                    _out()
            except BaseException:
                _out()
            self.went = True
    _pause = _Pause()
except BaseException:
    _out()
_code = pytest.main(plugins=[_pause])
if not _pause.went:  # pytest stopped before the pause (a usage error, --version…): not a run
    _out()
sys.stdout.flush()
sys.exit(_code)
"""


def warm_command(full_command: str) -> str | None:
    """The shell command that starts `full_command` (the pytest command with its report
    arguments) paused, or None when it is not plainly `[VAR=value …] <python> -m pytest ARGS`
    with words the shell would pass unchanged (no expansion, globs or operators)."""
    tokens = shell_tokens(full_command)
    if tokens is None or any(not _plain(t) for t in tokens):
        return None
    assignments = []
    while tokens and "=" in tokens[0] and not tokens[0].startswith(("-", "/", ".")):
        assignments.append(tokens.pop(0))
    if len(tokens) < 3 or tokens[1:3] != ["-m", "pytest"]:
        return None
    if not Path(tokens[0]).name.startswith("python"):
        return None
    return shlex.join([*assignments, tokens[0], "-c", BOOTSTRAP, *tokens[3:]])


def _plain(word: str) -> bool:
    """A word the shell passes as it is (after shlex's unquoting): no expansion of any kind."""
    return bool(word) and not any(c in word for c in "$`*?[]{}~!<>|&;()\\\"'\n")
