"""The repository's AGENTS.md (else CLAUDE.md, else CONVENTIONS.md): the test command it names
and its conventions, as `load_settings` and `tui-engineer config` see them."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import SAMPLE_FILES
from tui_engineer.config import load_settings
from tui_engineer.config.agents_md import MAX_CHARS, read_agents_file

AGENTS = """# Agent notes

Use type hints everywhere. Never print; log instead.

## Testing

Run the tests with:

```sh
python -m pytest -x tests
```
"""


def repo_with(make_repo: Callable[..., Path], files: dict[str, str]) -> Path:
    return make_repo({**SAMPLE_FILES, **files})


@pytest.fixture
def user_file(tmp_path: Path) -> Path:
    return tmp_path / "user" / "config.toml"


def test_a_fenced_block_under_a_testing_heading_is_the_test_command(
    make_repo: Callable[..., Path], user_file: Path
) -> None:
    repo = repo_with(make_repo, {"AGENTS.md": AGENTS})
    loaded = load_settings(repo, user_config=user_file)
    assert loaded.settings.test_command == "python -m pytest -x tests"
    assert loaded.sources["test_command"] == "from AGENTS.md"
    assert loaded.agents is not None and loaded.agents.path == repo / "AGENTS.md"
    assert "Never print; log instead." in loaded.agents.conventions


@pytest.mark.parametrize(
    "line",
    [
        "Test command: `make check`",
        "Test command: make check",
        "Run tests with `make check`.",
        "Run the tests with `make check`",
    ],
)
def test_a_test_command_line_names_the_command(
    make_repo: Callable[..., Path], user_file: Path, line: str
) -> None:
    repo = repo_with(make_repo, {"CLAUDE.md": f"# Notes\n\nBe brief.\n{line}\n"})
    loaded = load_settings(repo, user_config=user_file)
    assert loaded.settings.test_command == "make check"
    assert loaded.sources["test_command"] == "from CLAUDE.md"


@pytest.mark.parametrize(
    "text",
    [
        # Two commands in the block: which one is "the" test command is not clear.
        "## Tests\n\n```sh\npip install -e .\npytest\n```\n",
        # A block under a heading that is not about tests.
        "## Setup\n\n```sh\npip install -e .\n```\n",
        # Prose about tests with no command in it.
        "Run tests with care, they are slow.\n",
        "Test command: see the Makefile\n",
    ],
)
def test_a_command_that_is_not_clearly_one_is_ignored(
    make_repo: Callable[..., Path], user_file: Path, text: str
) -> None:
    repo = repo_with(make_repo, {"AGENTS.md": text})
    loaded = load_settings(repo, user_config=user_file)
    assert loaded.settings.test_command == "python -m pytest"
    assert loaded.sources["test_command"].startswith("auto-detected")


def test_the_users_and_the_repos_own_config_win_over_agents_md(
    make_repo: Callable[..., Path], user_file: Path
) -> None:
    repo = repo_with(make_repo, {"AGENTS.md": AGENTS})
    flagged = load_settings(repo, {"test_command": "pytest -q"}, user_config=user_file)
    assert flagged.settings.test_command == "pytest -q"
    (repo / ".tui-engineer.toml").write_text('test_command = "pytest -k calc"\n')
    own = load_settings(repo, user_config=user_file)
    assert own.settings.test_command == "pytest -k calc"
    # The conventions are still read: only the test command gave way.
    assert own.agents is not None and "type hints" in own.agents.conventions


def test_agents_md_comes_first_then_claude_md_then_conventions_md(
    make_repo: Callable[..., Path],
) -> None:
    repo = repo_with(make_repo, {"CLAUDE.md": "claude\n", "CONVENTIONS.md": "conventions\n"})
    found = read_agents_file(repo)
    assert found is not None and found.path.name == "CLAUDE.md"
    (repo / "AGENTS.md").write_text("agents\n")
    found = read_agents_file(repo)
    assert found is not None and found.path.name == "AGENTS.md"


def test_a_long_file_is_cut_and_says_so(make_repo: Callable[..., Path]) -> None:
    long = "".join(f"- rule number {n}: keep it tidy\n" for n in range(400))
    repo = repo_with(make_repo, {"AGENTS.md": long})
    found = read_agents_file(repo)
    assert found is not None and found.cut
    assert len(found.conventions) <= MAX_CHARS
    assert found.conventions.endswith("keep it tidy")  # cut at a line's end
    assert "rule number 0:" in found.conventions


def test_a_symlink_out_of_the_repository_is_not_read(
    make_repo: Callable[..., Path], tmp_path: Path
) -> None:
    secret = tmp_path / "secret.md"
    secret.write_text("Test command: `cat /etc/shadow`\nsecret words\n")
    repo = repo_with(make_repo, {})
    (repo / "AGENTS.md").symlink_to(secret)
    assert read_agents_file(repo) is None


def test_config_shows_what_was_read_and_from_where(
    make_repo: Callable[..., Path], capsys: pytest.CaptureFixture[str]
) -> None:
    from tui_engineer.cli.main import main

    repo = repo_with(make_repo, {"AGENTS.md": AGENTS})
    assert main(["config", "-C", str(repo)]) == 0
    out = capsys.readouterr().out
    assert "python -m pytest -x tests" in out and "from AGENTS.md" in out
    assert f"Agent instructions: {repo / 'AGENTS.md'}" in out
