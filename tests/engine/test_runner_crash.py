"""A project's own runner that crashes on the starting commit is a start problem named in its
own words, not "tests already failing" (issue 48, part 3): Django's parallel runner dies with
`cannot pickle 'traceback' object` when a worker sends a failure back without tblib. A real
runner script doing the same (a multiprocessing pool returning a unittest failure's traceback),
run by real Python in the local sandbox, with the scripted model never asked."""

from __future__ import annotations

import io
import sys

import pytest

from tests.engine_support import run_headless
from tests.scripted_server import ScriptedServer
from tests.tiers import whole_session
from tui_engineer.engine import events as ev
from tui_engineer.headless.printer import ProgressPrinter
from tui_engineer.verify.crashes import runner_crash
from tui_engineer.verify.report import TestReport

RUNTESTS = """import multiprocessing
import sys
import unittest


class Kept(unittest.TestResult):
    def addFailure(self, test, err):
        super().addFailure(test, err)
        self.raw = getattr(self, "raw", []) + [err]  # the traceback itself, as Django keeps it


def run(name):
    result = Kept()
    unittest.defaultTestLoader.loadTestsFromName(name).run(result)
    return getattr(result, "raw", [])


if __name__ == "__main__":
    sys.path.insert(0, ".")
    with multiprocessing.Pool(2) as pool:
        failed = pool.map(run, ["tests.test_text"])
    sys.exit(1 if any(failed) else 0)
"""
FILES = {
    "runtests.py": RUNTESTS,
    "text.py": "def capfirst(word):\n    return word\n",
    "tests/__init__.py": "",
    "tests/test_text.py": (
        "import unittest\n\nfrom text import capfirst\n\n\n"
        "class CapfirstTests(unittest.TestCase):\n"
        "    def test_capfirst(self):\n        self.assertEqual(capfirst('hello'), 'Hello')\n"
    ),
}

pytestmark = pytest.mark.usefixtures("api_key")


@whole_session
async def test_a_runner_crashing_at_the_start_is_named_before_any_model_call(
    make_repo, scripted_server: ScriptedServer
) -> None:
    repo = make_repo(FILES)
    out = io.StringIO()
    result, seen = await run_headless(
        repo, "capfirst does not capitalise; fix it", scripted_server.base_url,
        test_command=f"{sys.executable} runtests.py", sandbox="local", plan=False,
        sink=ProgressPrinter(out),
    )  # fmt: skip
    printed = out.getvalue() + result.message
    assert result.exit_code == 2, printed
    assert scripted_server.chat_requests == [], printed
    (failed,) = seen.of(ev.BaselineFailed)
    assert "its runner crashed" in failed.problem
    assert "cannot pickle 'traceback' object" in failed.problem and "tblib" in failed.problem
    assert not seen.of(ev.BaselineReady)  # never taken for tests already failing


def _run(tail: str) -> TestReport:
    return TestReport("python check.py", 1, 0.3, False, output_tail=tail)


def test_a_test_scripts_own_error_stays_a_failing_test() -> None:
    in_test = (
        'Traceback (most recent call last):\n  File "/w/test_parse.py", line 3, in <module>\n'
        '  File "/usr/lib/python3.11/json/decoder.py", line 355, in raw_decode\n'
        "json.decoder.JSONDecodeError: Expecting value: line 1 column 1 (char 0)\n"
    )
    in_code = (
        'Traceback (most recent call last):\n  File "/w/check.py", line 3, in <module>\n'
        '  File "/w/text.py", line 2, in capfirst\nTypeError: bad operand\n'
    )
    assert runner_crash(_run(in_test)) is None and runner_crash(_run(in_code)) is None
    assertion = in_code.replace("TypeError: bad operand", "AssertionError")
    assert runner_crash(_run(assertion)) is None
