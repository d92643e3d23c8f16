"""The docker sandbox: tests run in a warm, network-less, resource-limited container that sees a
copy of the shadow worktree. See docs/sandbox.md."""

from tui_engineer.sandbox.actions import (
    ActionResult,
    BadAction,
    InstallPackage,
    RunSetupCommand,
    SandboxAction,
    action_from_dict,
    action_to_dict,
)
from tui_engineer.sandbox.docker.containers import ResourceLimits, cleanup_containers
from tui_engineer.sandbox.docker.environment import Environment
from tui_engineer.sandbox.docker.errors import DockerUnavailable, ImageUnavailable, SandboxFailure
from tui_engineer.sandbox.docker.sandbox import CommandNotFoundInSandbox, DockerSandbox

__all__ = [
    "ActionResult",
    "BadAction",
    "CommandNotFoundInSandbox",
    "DockerSandbox",
    "DockerUnavailable",
    "Environment",
    "ImageUnavailable",
    "InstallPackage",
    "ResourceLimits",
    "RunSetupCommand",
    "SandboxAction",
    "SandboxFailure",
    "action_from_dict",
    "action_to_dict",
    "cleanup_containers",
]
