"""Choosing the sandbox a session's tests run in, from its settings."""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import git

from tui_engineer.sandbox.base import Sandbox
from tui_engineer.sandbox.bubblewrap import Jail, jail_for
from tui_engineer.sandbox.ignored import build_cache, build_env, ignored_paths, parse_paths
from tui_engineer.vcs.cleanup import session_reports
from tui_engineer.vcs.repo import open_repo
from tui_engineer.vcs.submodules import local_submodule_objects
from tui_engineer.verify.environment import parse_allow
from tui_engineer.verify.selection import selection_home

if TYPE_CHECKING:
    from tui_engineer.config.settings import Settings


def make_sandbox(
    settings: Settings,
    repo_root: Path,
    session_id: str | None = None,
    *,
    cache_of: Path | None = None,
) -> Sandbox:
    """`local` (under bubblewrap; SandboxUnavailable if it cannot run here), `none` (local,
    uncontained: the user's explicit choice) or `docker` per `settings.sandbox`. The docker one
    picks its environment template from the repo (or `settings.sandbox_template`); it connects
    to the engine lazily, at `start()` or the first run. `cache_of`: the repository whose build
    cache the runs use (a copy of a repository builds with the repository's own)."""
    if settings.sandbox == "docker":
        # Imported here: sessions with the local sandbox never load the docker SDK.
        from tui_engineer.sandbox.docker import DockerSandbox

        return DockerSandbox(
            repo_root,
            template_name=settings.sandbox_template,
            allow_network=settings.allow_network,
            session_id=session_id,  # its container is labelled with the run's id
            show_ignored=parse_paths(settings.show_ignored),
        )
    from tui_engineer.sandbox.local import LocalSandbox

    jail = None
    cache = build_cache(cache_of or repo_root)
    ignored = ignored_paths(repo_root, parse_paths(settings.show_ignored))
    if settings.sandbox == "local":  # "none": the user chose to run tests uncontained
        jail = _jail(repo_root, allow_network=settings.allow_network, ignored=ignored, cache=cache)
    return LocalSandbox(
        secret_names=[settings.api_key_env],
        secret_values=[settings.api_key] if settings.api_key else [],
        allow=parse_allow(settings.test_env),
        jail=jail,
        extra_env=build_env(cache, offline=jail is not None and not settings.allow_network),
        # Uncontained, the ignored folders are linked into the shadow instead of mounted.
        links=(repo_root, ignored) if jail is None else None,
        reports=session_reports(repo_root, session_id) if session_id else None,
    )


def _jail(repo_root: Path, *, allow_network: bool, ignored: list[str], cache: Path) -> Jail:
    objects = repo_root / ".git" / "objects"  # a plain folder (bench's hidden tests) has none
    submodules: list[Path] = []
    with contextlib.suppress(git.InvalidGitRepositoryError, git.NoSuchPathError):
        with open_repo(repo_root) as repo:
            objects = Path(repo.common_dir) / "objects"  # the shadow reads them (alternates)
            submodules = local_submodule_objects(repo_root, objects.parent)
    # The interpreter's environment may live inside the repository (.venv): tests need it.
    venvs = [Path(sys.prefix)] + [Path(v) for v in [os.environ.get("VIRTUAL_ENV")] if v]
    # Written by the runs: affected-tests data (testmon), build output (cargo's target).
    data = [selection_home(repo_root), cache]
    return jail_for(
        repo_root,
        objects,
        venvs,
        network=allow_network,
        writable=data,
        more_objects=submodules,
        ignored=ignored,
    )
