"""Merge the layers into Settings: flags > env > repo files > user config > defaults."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import fields
from pathlib import Path

from tui_engineer.config.agents_md import AgentsFile, read_agents_file
from tui_engineer.config.detect import detect_test_command
from tui_engineer.config.layers import (
    PYPROJECT_TABLE,
    REPO_FILE,
    Layer,
    env_layer,
    flag_layer,
    read_toml,
    repo_layers,
    user_config_path,
    user_layer,
)
from tui_engineer.config.mcp_servers import TABLE, McpServerConfig, ignored_notice
from tui_engineer.config.mcp_table import servers_from_table
from tui_engineer.config.settings import LoadedSettings, Settings


def load_settings(
    repo_root: Path | None,
    flags: Mapping[str, object] | None = None,
    env: Mapping[str, str] | None = None,
    user_config: Path | None = None,
) -> LoadedSettings:
    """The effective settings and where each came from. Raises ConfigError on bad input.

    `env` defaults to os.environ, `user_config` to `user_config_path()`; with `repo_root`
    None no repo file is read and no test command is detected.
    """
    env = os.environ if env is None else env
    user_path = user_config_path() if user_config is None else user_config
    user, files_read = user_layer(user_path)
    layers: list[Layer] = [user]
    if repo_root is not None:
        repo, repo_files = repo_layers(repo_root, user_path)
        layers += repo
        files_read = repo_files + files_read
    flagged = flag_layer(flags or {})
    layers += [env_layer(env), flagged]
    merged = _merge(layers)
    merged["api_key"] = _api_key(flagged, str(merged["api_key_env"][0]), env, user)
    agents = read_agents_file(repo_root) if repo_root is not None else None
    _detect_tests(merged, repo_root, agents)
    values = {key: value for key, (value, _) in merged.items()}
    servers, ignored = _mcp_servers(user_path, repo_root)
    return LoadedSettings(
        settings=Settings(**values),  # type: ignore[arg-type]
        sources={key: source for key, (_, source) in merged.items()},
        files_read=files_read,
        user_config=user_path,
        agents=agents,
        mcp_servers=servers,
        mcp_notices=ignored,
    )


def _mcp_servers(
    user_path: Path, repo_root: Path | None
) -> tuple[tuple[McpServerConfig, ...], tuple[str, ...]]:
    """[mcp_servers] from the user's config; a repository's is ignored, and said."""
    user = read_toml(user_path) or {}
    servers = servers_from_table(user[TABLE], str(user_path)) if TABLE in user else ()
    ignored: list[str] = []
    if repo_root is not None:
        own = repo_root / REPO_FILE
        pyproject = repo_root / "pyproject.toml"
        tool = (read_toml(pyproject) or {}).get("tool", {})
        section = tool.get(PYPROJECT_TABLE, {}) if isinstance(tool, dict) else {}
        for table, origin in (
            (section if isinstance(section, dict) else {}, f"{pyproject} [tool.{PYPROJECT_TABLE}]"),
            (read_toml(own) or {}, str(own)),
        ):
            if TABLE in table:
                ignored.append(ignored_notice(origin, table[TABLE]))
    return servers, tuple(ignored)


def _merge(layers: list[Layer]) -> Layer:
    merged: Layer = {f.name: (f.default, "default") for f in fields(Settings)}
    for layer in layers:  # lowest precedence first
        merged.update(layer)
    return merged


def _api_key(
    flags: Layer, env_name: str, env: Mapping[str, str], user: Layer
) -> tuple[object, str]:
    """A flag, else the variable named by api_key_env, else the user config's api_key."""
    if "api_key" in flags:
        return flags["api_key"]
    secret = env.get(env_name, "").strip()
    if secret:
        return secret, f"env {env_name}"
    return user.get("api_key", (None, "not set"))


def _detect_tests(merged: Layer, repo_root: Path | None, agents: AgentsFile | None) -> None:
    """Below every config layer: the command AGENTS.md names, then a guess from the files."""
    if merged["test_command"][0] is not None:
        return
    if agents is not None and agents.test_command:
        merged["test_command"] = (agents.test_command, f"from {agents.name}")
        return
    in_container = merged["sandbox"][0] == "docker"
    found = detect_test_command(repo_root, repo_venv=not in_container) if repo_root else None
    if found:
        merged["test_command"] = (found[0], f"auto-detected ({found[1]})")
    else:
        merged["test_command"] = (None, "not detected")
