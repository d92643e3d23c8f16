"""An error in a session worker that is not a UserError (a bug of ours, like issue 24's
UnicodeDecodeError) reaches the user with the way out, never as a traceback: headless on
stderr with its own exit code, the details saved to a file for a bug report."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.engine_support import KEY
from tests.scripted_server import ScriptedServer
from tui_engineer.cli import main as cli
from tui_engineer.vcs import submodules


def raise_like_issue_24(*args: object) -> list[object]:
    raise UnicodeDecodeError("utf-8", b"caf\xe9", 3, 4, "invalid continuation byte")


def test_headless_says_what_broke_and_where_the_details_are(
    make_repo,
    scripted_server: ScriptedServer,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setattr(submodules, "submodules", raise_like_issue_24)
    repo = make_repo()
    code = cli.main(
        ["run", "add sub", "--yes", "--no-plan", "-C", str(repo)]
        + ["--base-url", scripted_server.base_url, "--model", "test-model"]
    )
    err = capsys.readouterr().err
    assert code == 70
    assert "Traceback" not in err
    assert "UnicodeDecodeError" in err and "a bug in tui-engineer" in err
    assert "Your repository holds only the steps you accepted" in err
    saved = Path(err.split("details are in ")[1].split()[0].rstrip(";."))
    assert "raise_like_issue_24" in saved.read_text()
    assert scripted_server.chat_requests == []
