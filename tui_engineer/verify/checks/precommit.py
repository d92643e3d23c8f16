"""The pre-commit framework's `.pre-commit-config.yaml`, read as checks we run ourselves.

The pre-commit program is never run: it may be absent, it installs each hook's environment from
the network, and its stash of unstaged changes must never touch the user's edits. Instead each
hook becomes the command it stands for: a `repo: local` hook's `entry` (language system, script
or python, with the tool from the user's environment), and the common published hooks mapped to
their tool (ruff, ruff-format, black, mypy, flake8, isort from the user's environment;
trailing-whitespace and end-of-file-fixer done by our own fixers, verify/checks/fixers.py)."""

from __future__ import annotations

import shlex
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from tui_engineer.verify.checks.found import PY, Check, Found, python_check, tool

CONFIG = ".pre-commit-config.yaml"
_MAPPED = {"ruff": "ruff", "ruff-check": "ruff", "ruff-format": "ruff-format", "black": "black"}
_MAPPED |= {"mypy": "mypy", "flake8": "flake8", "isort": "isort"}
_FIXERS = ("trailing-whitespace", "end-of-file-fixer")
_DROPPED_ARGS = {"--fix", "--exit-non-zero-on-fix", "--show-fixes"}  # we report; the model fixes
_TYPES = {"python": PY, "pyi": (".pyi",), "rust": (".rs",), "javascript": (".js", ".mjs")}
_TYPES |= {"ts": (".ts",), "tsx": (".tsx",), "yaml": (".yaml", ".yml"), "toml": (".toml",)}


def _hooks(root: Path) -> list[tuple[str, dict[str, Any]]]:
    """(repo, hook) for each hook the config lists, in its order."""
    if not (root / CONFIG).is_file():
        return []
    import yaml  # only for a project that has the file (its import is a start-up's time)

    try:
        config = yaml.safe_load((root / CONFIG).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return []
    repos = config.get("repos") if isinstance(config, dict) else None
    found = []
    for repo in repos if isinstance(repos, list) else []:
        if not isinstance(repo, dict):
            continue
        for hook in repo.get("hooks") or []:
            if isinstance(hook, dict) and isinstance(hook.get("id"), str):
                found.append((str(repo.get("repo", "")), hook))
    return found


def _suffixes(hook: dict[str, Any]) -> tuple[str, ...]:
    kinds = [*(hook.get("types") or []), *(hook.get("types_or") or [])]
    return tuple(s for kind in kinds for s in _TYPES.get(str(kind), ()))


def _args(hook: dict[str, Any]) -> str:
    args = [str(a) for a in hook.get("args") or [] if str(a) not in _DROPPED_ARGS]
    return shlex.join(args)


def _local(root: Path, hook: dict[str, Any]) -> Found:
    found = Found()
    hook_id, entry = hook["id"], str(hook.get("entry", "")).strip()
    language = str(hook.get("language", "system"))
    words = shlex.split(entry) if entry else []
    if not words or language not in ("system", "script", "python", "unsupported"):
        found.missing.append(
            f"{CONFIG} hook {hook_id!r} (language {language}) needs pre-commit's own "
            "environment: not run"
        )
        return found
    if language == "script":
        program: tuple[str, str] | None = (words[0], "the repository")
    else:
        program = tool(root, words[0])
    if program is None:
        found.missing.append(
            f"{CONFIG} hook {hook_id!r}: {words[0]} is not installed in the repository's "
            "environment (its .venv, the active virtualenv or PATH): not run"
        )
        return found
    command = shlex.join([program[0], *words[1:]])
    command = " ".join(p for p in (command, _args(hook)) if p)
    check = Check(
        hook_id,
        str(hook.get("name") or hook_id),
        command,
        f"{CONFIG}, local hook {hook_id!r}; {words[0]} from {program[1]}",
        files=hook.get("pass_filenames", True) is not False,
        suffixes=_suffixes(hook),
        pattern=str(hook.get("files", "")),
        exclude=str(hook.get("exclude", "")),
    )
    found.add(check)
    return found


def _fixer(hook_id: str, hook: dict[str, Any]) -> Check:
    # Our own interpreter runs them: nothing of the user's to install for two text fixes.
    command = f"{shlex.quote(sys.executable)} -m tui_engineer.verify.checks.fixers {hook_id}"
    reason = f"{CONFIG}, hook {hook_id!r} (done by tui-engineer's own fixer)"
    files = str(hook.get("files", ""))
    return Check(hook_id, hook_id, command, reason, formatter=True, pattern=files)


def _scoped(found: Found, hook: dict[str, Any]) -> Found:
    """The hook's own `files` and `exclude` kept on the tool it maps to."""
    files, exclude = str(hook.get("files", "")), str(hook.get("exclude", ""))
    found.checks = [replace(c, pattern=files, exclude=exclude) for c in found.checks]
    return found


def checks(root: Path) -> Found:
    found = Found()
    for repo, hook in _hooks(root):
        hook_id = hook["id"]
        if repo == "local":
            found.merge(_local(root, hook))
        elif hook_id in _MAPPED:
            declared = f"{CONFIG}, hook {hook_id!r}"
            mapped = python_check(root, _MAPPED[hook_id], declared, _args(hook))
            found.merge(_scoped(mapped, hook))
        elif hook_id in _FIXERS:
            found.add(_fixer(hook_id, hook))
        else:
            found.missing.append(
                f"{CONFIG} hook {hook_id!r} ({repo}) is not one tui-engineer runs itself: not "
                "run on each step (the accept's commit hook still runs it)"
            )
    return found
