"""A test run stopped by the test timeout is not a code failure (issue 48, part 3): the step's
change is kept, no model call diagnoses or fixes it, and the human is told how long the run
took and which setting to change. The repository's tests run in its own venv (pytest from the
index) in the local sandbox; the scripted model's first answer is the right fix."""

from __future__ import annotations

import io

import pytest

from tests.engine_support import edit, run_headless
from tests.env_support import activate, project_venv
from tests.env_support import pytest_wheels as pytest_wheels  # a fixture
from tests.scripted_server import Reply, ScriptedServer
from tests.tiers import whole_session
from tui_engineer.engine import events as ev
from tui_engineer.headless.printer import ProgressPrinter
from tui_engineer.verify.baseline import start_failure_message, start_problem
from tui_engineer.verify.report import TestReport

TIMEOUT = 8  # seconds: the starting commit's suite fails at once, the fixed one waits 20 s
GIVE_UP = "            if attempt == times - 1:\n                raise\n"
FILES = {
    ".gitignore": ".venv/\n",
    "retry.py": (
        "import time\n\n\ndef retry(action, times, delay):\n"
        "    for attempt in range(times):\n        try:\n            return action()\n"
        f"        except OSError:\n{GIVE_UP}"
    ),
    "tests/test_retry.py": (
        "import time\n\nfrom retry import retry\n\n\ndef test_waits_between_attempts():\n"
        "    calls = []\n\n    def flaky():\n        calls.append(time.monotonic())\n"
        "        if len(calls) < 3:\n            raise OSError('busy')\n        return 'ok'\n\n"
        "    assert retry(flaky, times=3, delay=10) == 'ok'\n"
        "    assert calls[2] - calls[0] >= 20\n"
    ),
}
WAIT = edit("retry.py", GIVE_UP, f"{GIVE_UP}            time.sleep(delay)\n")

pytestmark = pytest.mark.usefixtures("api_key")


@whole_session
async def test_a_run_cut_by_the_timeout_keeps_the_fix_and_asks_no_model(
    make_repo, scripted_server: ScriptedServer, monkeypatch: pytest.MonkeyPatch, pytest_wheels
) -> None:
    repo = make_repo(FILES)
    command = activate(monkeypatch, project_venv(repo, pytest_wheels))
    scripted_server.script(Reply(text=WAIT))
    out = io.StringIO()
    result, seen = await run_headless(
        repo, "retry does not wait between attempts; fix it", scripted_server.base_url,
        test_command=command, sandbox="local", plan=False, sink=ProgressPrinter(out),
        test_timeout=TIMEOUT,
    )  # fmt: skip
    printed = out.getvalue()
    assert result.exit_code == 1 and not result.commits, printed
    assert len(scripted_server.chat_requests) == 1, printed  # no diagnosis, no fix call
    (proposal,) = seen.of(ev.ProposalReady)
    assert "time.sleep(delay)" in proposal.diff  # the right fix is kept for the human
    assert f"timed out after {TIMEOUT}" in printed
    assert "test_timeout" in printed and "--test-timeout" in printed
    assert not seen.of(ev.Diagnosis)


def test_a_starting_commit_cut_by_the_timeout_names_the_setting_not_an_install() -> None:
    report = TestReport("python runtests.py", None, 300.2, True, output_tail="....")
    problem = start_problem(report, pytest=False)
    assert problem is not None
    message = start_failure_message("python runtests.py", problem, report)
    assert "timed out after 300s" in message and "ran out of time" in message
    assert "--test-timeout" in message and "installed" not in message
