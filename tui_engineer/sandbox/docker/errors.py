"""What can go wrong with the docker sandbox, each said so the user knows what to do next."""

from __future__ import annotations

from tui_engineer.base.errors import UserError


class DockerUnavailable(UserError):
    """The Docker Engine cannot be reached (not running, no permission, wrong DOCKER_HOST)."""


class ImageUnavailable(UserError):
    """None of a template's images is present, and none could be pulled."""


class SandboxFailure(UserError):
    """The container broke in a way no code edit can fix (it vanished, a setup command failed)."""
