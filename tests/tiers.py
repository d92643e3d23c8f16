"""The suite's two tiers, and what one run leaves for the next (hooks, used by tests/conftest.py).

`slow` tests (a real Docker container, llama.cpp server, Chromium, tmux terminal, Ray cluster,
the crash harness, a fresh venv from the built wheel) run when asked for: `--slow`, or any `-m`
expression (`-m slow`). Without, they skip and say how to run them, so the README's
`python -m pytest -q` stays within minutes on a small machine.

With SKIPPED_TESTS_TO=FILE a run appends to FILE the node ids of what it did not run: each
skipped test, each module skipped whole at collection (an extra's `importorskip`), each
deselected test; one a line, possibly repeated (every pytest-xdist worker writes what it saw).
.ci/run's full pass runs exactly those, once each: `python -m pytest -q --slow @FILE`.
"""

from __future__ import annotations

import os

import pytest

SKIPPED_TO = "SKIPPED_TESTS_TO"
SLOW_REASON = "slow: starts a real process (run with --slow, or -m slow)"

# A whole session over the real engine: a scripted model over HTTP, git, and the target repo's
# pytest run again and again in shadow repositories, driven headless, through the Textual app or
# through `tui-engineer` subprocesses. Each costs seconds of CPU (10-90 s of a worker on a loaded
# 2-core machine), so the quick tier keeps one of each kind, those guarding the promises (a wrong
# first answer fixed before review, an old failure told apart, only the model's edit committed, a
# decision kept, the app, the demo, resume, the editor), and these run in the slow tier, which
# .ci/run's full pass runs on parallel workers. The other slow tests (Docker, llama.cpp,
# Chromium, tmux, Ray, the crash harness, a wheel in a fresh venv) run there one at a time.
whole_session = pytest.mark.slow(kind="session")
ONE_AT_A_TIME = "heavy"


def runs_one_at_a_time(item: pytest.Item) -> bool:
    """A slow test that starts a heavy real process (not a whole session): on one worker."""
    mark = item.get_closest_marker("slow")
    return mark is not None and mark.kwargs.get("kind") != "session"


_not_run: list[str] = []


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--slow",
        action="store_true",
        help="also run the tests marked slow (real Docker, llama.cpp, Chromium, tmux, Ray, ...)",
    )


def skip_slow_unless_asked(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Skip the `slow` items unless the run asked for them (`--slow`, or a `-m` expression)."""
    if config.getoption("slow") or config.getoption("markexpr"):
        return
    skip = pytest.mark.skip(reason=SLOW_REASON)
    for item in items:
        if item.get_closest_marker("slow") is not None:
            item.add_marker(skip)


def test_id(nodeid: str) -> str:
    """The id a later run can be given: without the `@group` that `--dist loadgroup` appends to
    the ids of tests marked `xdist_group` (after the name, or after its `[params]`)."""
    head, at, tail = nodeid.rpartition("@")
    if at and tail and not any(c in tail for c in "]:/["):
        return head
    return nodeid


def pytest_collectreport(report: pytest.CollectReport) -> None:
    if report.skipped and report.nodeid:
        _not_run.append(test_id(report.nodeid))


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.skipped and not hasattr(report, "wasxfail"):
        _not_run.append(test_id(report.nodeid))


def pytest_deselected(items: list[pytest.Item]) -> None:
    _not_run.extend(test_id(item.nodeid) for item in items)


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Append the ids to $SKIPPED_TESTS_TO in one write (O_APPEND: xdist's workers and
    their controller may finish at once; the reader drops repeats)."""
    path = os.environ.get(SKIPPED_TO)
    if not path or not _not_run:
        return
    data = "".join(f"{nodeid}\n" for nodeid in dict.fromkeys(_not_run)).encode()
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        while data:
            data = data[os.write(fd, data) :]
    finally:
        os.close(fd)
