"""A request with a byte that is not UTF-8 (issue 10, finding 6): Python hands it to us as a lone
surrogate, which crashed the run recorder with a traceback. The session now runs, the byte shown
as U+FFFD, and the record is written."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.conftest import git
from tests.engine_support import KEY, SUB
from tests.scripted_server import Reply, ScriptedServer
from tests.tiers import whole_session
from tui_engineer.records.recorder import read_record, runs_dir


@whole_session
def test_a_non_utf8_byte_in_the_request_is_no_traceback(
    make_repo, scripted_server: ScriptedServer
) -> None:
    repo = make_repo()
    scripted_server.script(Reply(text=SUB))
    url = scripted_server.base_url
    args = [b"run", b"add sub \xff please", b"--yes", b"--no-plan", b"--base-url", url.encode()]
    done = subprocess.run(
        [sys.executable.encode(), b"-m", b"tui_engineer", *args, b"--model", b"test-model"],
        cwd=repo,
        capture_output=True,
        env={**os.environ, "OPENAI_API_KEY": KEY},
        timeout=120,
    )
    out, err = done.stdout.decode(errors="replace"), done.stderr.decode(errors="replace")
    assert "Traceback" not in out + err, out + err
    assert done.returncode == 0, out + err
    assert git(repo, "log", "-1", "--format=%s") == "add sub \ufffd please"
    sent = scripted_server.chat_requests[0].messages[-1]["content"]
    assert "add sub \ufffd please" in sent
    (record,) = runs_dir(repo).glob("*.jsonl")
    assert "add sub \ufffd please" in read_record(record)[0]["request"]


def test_the_record_keeps_a_file_name_that_is_not_utf8(make_repo) -> None:
    """git hands over such a file name with surrogates too: the recorder writes it escaped."""
    from tui_engineer.engine import events as ev
    from tui_engineer.records.recorder import Recorder

    repo = make_repo()
    recorder = Recorder(repo, "s1")
    recorder(ev.EditsApplied(step=1, attempt=0, changed=("a\udcffb.py",)))
    recorder.close()
    assert read_record(recorder.path)[0]["changed"] == ["a\udcffb.py"]
