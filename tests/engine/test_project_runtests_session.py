"""A project whose tox.ini runs its own runner as Django's does (`changedir = tests`,
`{envpython} runtests.py {posargs}`), a runner that takes test labels and prints unittest's
report from two worker processes (tests/data/project_runtests/runtests.py), in its own venv
with no pytest (issue 48, part 3). One test is red before the session and unrelated; the
model's first fix is wrong. Affected tests run first by the runner's own labels, the whole
suite before review with its time said, and the old failure is told apart test by test."""

from __future__ import annotations

import re

import pytest

from tests.conftest import git
from tests.engine.test_unittest_sessions import _session, unittest_project
from tests.engine_support import AFFECTED_AT_ONCE, edit
from tests.scripted_server import Reply, ScriptedServer
from tests.tiers import whole_session
from tests.verify.test_runner_project_runtests import DATA
from tui_engineer.engine import events as ev

RUNTESTS = (DATA / "project_runtests" / "runtests.py").read_text()
CAPFIRST = "def capfirst(word):\n"
FILES = {
    ".gitignore": ".venv/\n",
    "tox.ini": (
        "[tox]\nenvlist = py3, flake8\n\n[testenv]\nchangedir = tests\n"
        "commands =\n    {envpython} runtests.py {posargs}\n\n"
        "[testenv:flake8]\ncommands = flake8 .\n"
    ),
    "text.py": f"{CAPFIRST}    return word\n\n\ndef listed(words):\n"
    "    return ' or '.join(words)\n",
    "tests/runtests.py": RUNTESTS,
    "tests/test_text.py": (
        "import unittest\n\nfrom text import capfirst\n\n\n"
        "class CapfirstTests(unittest.TestCase):\n"
        "    def test_capfirst(self):\n        self.assertEqual(capfirst('hello'), 'Hello')\n\n"
        "    def test_empty(self):\n        self.assertEqual(capfirst(''), '')\n"
    ),
    "tests/test_lists.py": (
        "import unittest\n\nimport text\n\n\nclass ListedTests(unittest.TestCase):\n"
        "    def test_listed(self):\n        self.assertEqual(text.listed(['a', 'b']), 'a and b')\n"
    ),
    "tests/test_numbers.py": (
        "import unittest\n\n\nclass NumberTests(unittest.TestCase):\n"
        "    def test_sum(self):\n        self.assertEqual(sum([1, 2]), 3)\n"
    ),
}
WRONG = edit("text.py", f"{CAPFIRST}    return word\n", f"{CAPFIRST}    return word.upper()\n")
RIGHT = edit(
    "text.py",
    f"{CAPFIRST}    return word.upper()\n",
    f"{CAPFIRST}    return word[:1].upper() + word[1:]\n",
)
OLD = "tests/test_lists.py::ListedTests::test_listed"
TARGET = "tests/test_text.py::CapfirstTests::test_capfirst"

pytestmark = pytest.mark.usefixtures("api_key")


@whole_session
async def test_affected_labels_first_then_the_whole_suite_and_the_old_failure_apart(
    make_repo, monkeypatch: pytest.MonkeyPatch, scripted_server: ScriptedServer
) -> None:
    repo = unittest_project(make_repo, monkeypatch, FILES)
    scripted_server.script(Reply(text=WRONG), Reply(text="upper() capitalises every letter"),
                           Reply(text=RIGHT))  # fmt: skip
    result, seen, out = await _session(
        repo, scripted_server, "capfirst does not capitalise; fix it", **AFFECTED_AT_ONCE
    )
    assert result.exit_code == 0, out
    (baseline,) = seen.of(ev.BaselineReady)
    assert baseline.command == "cd tests && python runtests.py"
    assert set(baseline.failing) == {OLD, TARGET}
    # The affected runs ran the modules importing text.py by their labels (test_text and
    # test_lists: 3 tests), not test_numbers; the last run was the whole suite (4).
    runs = [(e.scope, e.passed + e.failed) for e in seen.of(ev.TestsFinished) if e.step]
    assert runs == [("affected", 3), ("affected", 3), ("full", 4)], (runs, out)
    (proposal,) = seen.of(ev.ProposalReady)
    assert proposal.tests_ok and proposal.old_failures == (OLD,)
    assert f"now passes: {TARGET}" in proposal.summary  # named: the runner ran with -v 2
    assert re.search(r"full suite: 3 passed, 1 failed in [\d.]+s", out), out
    assert "word[:1].upper()" in git(repo, "show", "HEAD", "--", "text.py")
