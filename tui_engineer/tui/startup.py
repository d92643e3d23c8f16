"""Plain helpers for the start-up screens: a title per problem, the server URL a problem is
about, and remembering the chosen theme in the user's config file."""

from __future__ import annotations

import re
from pathlib import Path

from tui_engineer.errors import UserError
from tui_engineer.headless.runner import RunOptions

DEFAULT_URL = "https://api.openai.com/v1"


def problem_title(err: UserError) -> str:
    from tui_engineer.config import ConfigError
    from tui_engineer.llm.errors import (
        AuthRejected,
        MissingApiKey,
        ServerUnreachable,
        UnknownModel,
    )
    from tui_engineer.vcs import GitRefused

    titles: list[tuple[type[UserError], str]] = [
        (ConfigError, "Configuration problem"),
        (MissingApiKey, "No API key"),
        (ServerUnreachable, "Model server unreachable"),
        (AuthRejected, "API key rejected"),
        (UnknownModel, "Unknown model"),
        (GitRefused, "Git is in the middle of something"),
    ]
    for kind, title in titles:
        if isinstance(err, kind):
            return title
    if "test command" in str(err):
        return "No test command"
    return "Cannot start"


def startup_url(options: RunOptions, err: UserError) -> str | None:
    """The model server URL a key or server problem is about (None for other problems)."""
    from tui_engineer.llm.errors import LLMError

    if not isinstance(err, LLMError):
        return None
    try:
        from tui_engineer.config import load_settings
        from tui_engineer.vcs import find_repo_root

        settings = load_settings(find_repo_root(options.repo), options.flags).settings
    except UserError:
        return None
    return (settings.base_url or DEFAULT_URL).rstrip("/")


_THEME_LINE = re.compile(r"^\s*theme\s*=.*$", re.MULTILINE)
_TABLE = re.compile(r"^\s*\[", re.MULTILINE)


def save_theme_choice(name: str, path: Path | None = None) -> None:
    """Set `theme = "name"` in the user config file, keeping everything else as written."""
    from tui_engineer.config.layers import user_config_path

    path = path or user_config_path()
    try:
        text = path.read_text(encoding="utf-8") if path.exists() else ""
        line = f'theme = "{name}"'
        head_end = m.start() if (m := _TABLE.search(text)) else len(text)
        head, tail = text[:head_end], text[head_end:]
        if _THEME_LINE.search(head):
            head = _THEME_LINE.sub(line, head, count=1)
        else:
            head = line + "\n" + head
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(head + tail, encoding="utf-8")
    except OSError:
        pass  # a read-only config folder must not break the app; the theme still changes
