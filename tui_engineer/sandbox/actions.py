"""Self-repair of the test environment: actions a fix may ask for (install a package, run a setup
command). The docker sandbox runs them as root in the session's container and, when they succeed,
saves them into the cached environment image so the next session starts with them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from tui_engineer.base.errors import UserError


class BadAction(UserError):
    """An action that cannot be run as given (e.g. a package name that is really an option)."""


@dataclass(frozen=True)
class InstallPackage:
    """Install `package` with the template's installer (pip / npm / cargo add). `package` may
    carry a version spec (`requests>=2.31`) or be a path inside the workspace (a wheel file)."""

    package: str
    reason: str = ""
    kind: Literal["install"] = "install"

    def __post_init__(self) -> None:
        name = self.package.strip()
        if not name or name.startswith("-") or "\n" in name:
            raise BadAction(f"Cannot install {self.package!r}: expected a package name.")

    def describe(self) -> str:
        return f"install {self.package}"


@dataclass(frozen=True)
class RunSetupCommand:
    """Run a shell command in the workspace as root (e.g. `apt-get install -y libpq-dev`)."""

    command: str
    reason: str = ""
    kind: Literal["setup"] = "setup"

    def __post_init__(self) -> None:
        if not self.command.strip():
            raise BadAction("Cannot run an empty setup command.")

    def describe(self) -> str:
        return f"run `{self.command}`"


SandboxAction = InstallPackage | RunSetupCommand


def action_to_dict(action: SandboxAction) -> dict[str, str]:
    if isinstance(action, InstallPackage):
        return {"kind": "install", "package": action.package, "reason": action.reason}
    return {"kind": "setup", "command": action.command, "reason": action.reason}


def action_from_dict(data: dict[str, Any]) -> SandboxAction:
    """The inverse of action_to_dict (run records, replays)."""
    kind = data.get("kind")
    if kind == "install":
        return InstallPackage(str(data.get("package", "")), str(data.get("reason", "")))
    if kind == "setup":
        return RunSetupCommand(str(data.get("command", "")), str(data.get("reason", "")))
    raise BadAction(f"Unknown sandbox action kind {kind!r} (expected 'install' or 'setup').")


@dataclass
class ActionResult:
    action: SandboxAction
    command: str  # the shell command that ran in the container
    ok: bool
    exit_code: int | None  # None when stopped by the timeout
    timed_out: bool
    duration: float
    output: str  # combined stdout+stderr, capped
    # Workspace files the action created or changed (e.g. Cargo.toml after `cargo add`): they live
    # only in the container's copy, so the engine must carry them as edits if they should stay.
    changed_files: list[str] = field(default_factory=list)
    cached_image: str | None = None  # the environment image the action was saved into
    note: str = ""  # why it failed or was not cached, in words

    def summary(self) -> str:
        if self.timed_out:
            state = f"timed out after {self.duration:.0f}s"
        elif self.ok:
            state = f"done in {self.duration:.1f}s"
        else:
            state = f"failed with exit code {self.exit_code}"
        return f"{self.action.describe()}: {state}"

    def for_model(self, max_chars: int = 3000) -> str:
        head = f"Sandbox action: {self.summary()}\n"
        if self.note:
            head += f"Note: {self.note}\n"
        tail = self.output[-(max_chars - len(head)) :] if max_chars > len(head) else ""
        return head + tail

    def to_dict(self) -> dict[str, Any]:
        return {
            "action": action_to_dict(self.action),
            "command": self.command,
            "ok": self.ok,
            "exit_code": self.exit_code,
            "timed_out": self.timed_out,
            "duration": self.duration,
            "output": self.output,
            "changed_files": list(self.changed_files),
            "cached_image": self.cached_image,
            "note": self.note,
            "summary": self.summary(),
        }
