"""Choosing the sandbox a session's tests run in, from its settings."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from tui_engineer.sandbox.base import Sandbox

if TYPE_CHECKING:
    from tui_engineer.config.settings import Settings


def make_sandbox(settings: Settings, repo_root: Path, session_id: str | None = None) -> Sandbox:
    """`local` or `docker` per `settings.sandbox`. The docker one picks its environment template
    from the repo (or `settings.sandbox_template`); it connects to the engine lazily, at
    `start()` or the first run."""
    if settings.sandbox == "docker":
        # Imported here: sessions with the local sandbox never load the docker SDK.
        from tui_engineer.sandbox.docker import DockerSandbox

        return DockerSandbox(
            repo_root,
            template_name=settings.sandbox_template,
            allow_network=settings.allow_network,
            session_id=session_id,  # its container is labelled with the run's id
        )
    from tui_engineer.sandbox.local import LocalSandbox

    return LocalSandbox(secret_names=[settings.api_key_env])
