"""`[mcp_servers]`: the user's config names the MCP servers a session starts (Codex's shape); a
repository's config may not (they would run outside the sandbox): ignored, and said when the
session starts, and nothing of it runs."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tui_engineer.config import ConfigError, format_settings, load_settings
from tui_engineer.config.mcp_servers import McpServerConfig
from tui_engineer.session.options import RunOptions
from tui_engineer.session.prepare import prepare

CODEX_TABLE = """
model = "test-model"

[mcp_servers.docs]
command = "npx"
args = ["-y", "@upstash/context7-mcp"]
env = { "API_TOKEN" = "t0k" }

[mcp_servers.tracker]
url = "https://mcp.example.invalid/mcp"
"""


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_the_user_config_names_servers_in_codexs_shape(
    make_repo: Callable[..., Path], tmp_path: Path
) -> None:
    user = write(tmp_path / "user.toml", CODEX_TABLE)
    loaded = load_settings(make_repo(), env={}, user_config=user)
    docs, tracker = loaded.mcp_servers
    assert (docs.name, docs.command, docs.args, docs.env) == (
        "docs", "npx", ("-y", "@upstash/context7-mcp"), (("API_TOKEN", "t0k"),)
    )  # fmt: skip
    assert (tracker.name, tracker.url, tracker.command) == (
        "tracker", "https://mcp.example.invalid/mcp", ""
    )  # fmt: skip
    assert loaded.settings.model == "test-model"  # the table is no setting of its own
    assert loaded.mcp_notices == ()
    shown = format_settings(loaded)  # `tui-engineer config`
    assert "MCP server: docs (npx -y @upstash/context7-mcp)" in shown
    assert "MCP server: tracker (https://mcp.example.invalid/mcp)" in shown
    assert "t0k" not in shown


@pytest.mark.parametrize(
    ("table", "said"),
    [
        ('[mcp_servers.docs]\nargs = ["x"]\n', "either command"),
        ('[mcp_servers.docs]\ncommand = "x"\nargs = "x"\n', "args must be a list"),
        ('[mcp_servers.docs]\ncommand = "x"\nenv = { A = 1 }\n', "env must be a table"),
        ('[mcp_servers.docs]\ncommand = "x"\ncwd = "/"\n', "unknown key(s) cwd"),
        ('[mcp_servers."a b"]\ncommand = "x"\n', "a server's name"),
    ],
)
def test_a_bad_server_entry_is_a_config_error_naming_it(
    tmp_path: Path, table: str, said: str
) -> None:
    user = write(tmp_path / "user.toml", table)
    with pytest.raises(ConfigError, match="mcp_servers") as caught:
        load_settings(None, env={}, user_config=user)
    assert said in str(caught.value)


def test_a_repositorys_mcp_servers_are_ignored_said_and_never_run(
    make_repo: Callable[..., Path], tmp_path: Path
) -> None:
    marker = tmp_path / "ran"
    run_me = f'command = "{sys.executable}"\nargs = ["-c", "open({str(marker)!r}, \'w\')"]\n'
    repo = make_repo(
        {
            "calc.py": "def add(a, b):\n    return a + b\n",
            ".tui-engineer.toml": f"[mcp_servers.helper]\n{run_me}",
            "pyproject.toml": f"[tool.tui-engineer.mcp_servers.other]\n{run_me}",
        }
    )
    options = RunOptions(
        request="x",
        repo=repo,
        flags={"model": "test-model", "test_command": "true"},
    )
    prepared = prepare(options, model=False)
    assert prepared.mcp_servers == ()
    ignored = [n for n in prepared.notices if n.startswith("Ignored [mcp_servers]")]
    assert len(ignored) == 2
    assert "(helper)" in ignored[1] and "outside the sandbox" in ignored[1]
    assert "[tool.tui-engineer]" in ignored[0] and "(other)" in ignored[0]
    assert not marker.exists()


def test_the_editors_servers_come_after_the_users_one_name_started_once(
    make_repo: Callable[..., Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    user = write(Path(tmp_path / "xdg" / "tui-engineer" / "config.toml"), CODEX_TABLE)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(user.parents[1]))
    given = McpServerConfig("docs", "docs-from-the-editor", origin="the editor")
    options = RunOptions(
        request="x", repo=make_repo(), flags={"test_command": "true"}, mcp_servers=(given,)
    )
    prepared = prepare(options, model=False)
    assert [(s.name, s.command or s.url) for s in prepared.mcp_servers] == [
        ("docs", "docs-from-the-editor"),
        ("tracker", "https://mcp.example.invalid/mcp"),
    ]
