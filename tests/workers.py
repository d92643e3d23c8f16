"""The suite runs in parallel by default (hooks, used by tests/conftest.py).

Most of a test's time here is waiting: for a subprocess (pytest in a shadow repository, git,
`tui-engineer acp`), a socket, a Textual pilot. So pytest-xdist workers help even on a 2-core
machine, and more workers than cores help more: CONTRIBUTING.md has the measurements behind
WORKERS_PER_CORE.

Not in `addopts`: an `-n` there would be an unknown argument wherever xdist is not loaded
(`-p no:xdist`, or a pytest run by a test with PYTEST_DISABLE_PLUGIN_AUTOLOAD set). Instead,
when the run names no `-n` (or `--dist`), these hooks ask xdist for `-n auto --dist loadgroup`
and say how many workers auto means. `-n 0` (or `-p no:xdist`) runs in one process as before;
`--pdb` does too (xdist itself turns auto into 0 there); PYTEST_XDIST_AUTO_NUM_WORKERS=N sets N.

`loadgroup`: tests marked `xdist_group(name)` run on one worker, one after another (what must
not run beside itself); every other test goes to whichever worker is free.
"""

from __future__ import annotations

import os

import pytest

WORKERS_PER_CORE = 2


# A worker parses the command line again, which names no `--dist`: it learns that the run asked
# for loadgroup from this variable (workers inherit the environment). Without it the workers
# never read the `xdist_group` marks, and grouped tests went to any worker.
LOADGROUP_ENV = "TESTS_XDIST_LOADGROUP"


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config: pytest.Config) -> None:
    """Ask for `-n auto --dist loadgroup` unless the run chose (before xdist reads them)."""
    option = config.option
    if not hasattr(option, "numprocesses"):
        return  # xdist is not loaded
    if hasattr(config, "workerinput"):  # one of xdist's workers
        if os.environ.get(LOADGROUP_ENV) == "1":
            option.loadgroup = True
        return
    if option.numprocesses is None and option.dist == "no" and not option.tx:
        option.numprocesses = "auto"
        option.dist = "loadgroup"
        os.environ[LOADGROUP_ENV] = "1"


@pytest.hookimpl(optionalhook=True)  # a hook of xdist's: unknown where xdist is not loaded
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """WORKERS_PER_CORE workers a core (the tests mostly wait), unless the variable says."""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None  # xdist's own hook reads it
    if hasattr(os, "sched_getaffinity"):  # the cores this process may use (Linux)
        return WORKERS_PER_CORE * len(os.sched_getaffinity(0))
    return WORKERS_PER_CORE * (os.cpu_count() or 1)
