"""Self-repair of the session's container: sandbox actions and the template's setup commands run
as root in the workspace, and what succeeds is layered into the cached environment image (with a
record of it) so the next session starts warm."""

from __future__ import annotations

import asyncio
import shlex
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tui_engineer.sandbox.actions import ActionResult, InstallPackage, SandboxAction
from tui_engineer.sandbox.docker import environment as envs
from tui_engineer.sandbox.docker.containers import KILL_AS_ROOT
from tui_engineer.sandbox.docker.errors import SandboxFailure
from tui_engineer.sandbox.docker.execs import ExecResult, exec_quiet, exec_stream
from tui_engineer.sandbox.docker.workspace import WORKSPACE, changed_files_script, clear_script
from tui_engineer.sandbox.templates import EnvTemplate

OutputCallback = Callable[[str], None]
SETUP_TIMEOUT = 900.0
ACTION_MARKER = "/.tui-engineer-action-marker"


@dataclass
class Repair:
    """Root work in one live container; the caller has already refreshed its workspace copy."""

    client: Any
    container: Any
    environment: envs.Environment
    template: EnvTemplate
    allow_network: bool
    use_cache: bool

    async def run_action(
        self, action: SandboxAction, timeout: float, on_output: OutputCallback | None
    ) -> ActionResult:
        """Run `action`; on success it is layered into the cached environment image."""
        command = self._action_command(action)
        await exec_quiet(self.client.api, self.container.id, f"touch {ACTION_MARKER}")
        result = await self._exec_as_root(command, timeout, on_output)
        outcome = ActionResult(
            action=action,
            command=command,
            ok=result.exit_code == 0,
            exit_code=result.exit_code,
            timed_out=result.timed_out,
            duration=result.duration,
            output=result.output,
            changed_files=await self._changed_files(),
        )
        await self._finish_action(outcome)
        return outcome

    async def run_template_setup(self, on_output: OutputCallback | None) -> None:
        """Run the template's setup commands (a cold start); all of them succeed or it raises."""

        def tagged(line: str) -> None:
            if on_output is not None:
                on_output(f"[sandbox setup] {line}")

        entries = []
        for command in self.template.setup:
            result = await self._exec_as_root(command, SETUP_TIMEOUT, tagged)
            if result.exit_code != 0:
                raise SandboxFailure(self._setup_failed(command, result))
            entries.append(envs.layer_entry("template-setup", command))
        await self._save_layer(entries)

    def _action_command(self, action: SandboxAction) -> str:
        if isinstance(action, InstallPackage):
            return self.template.install_command(action.package)
        return action.command

    async def _exec_as_root(
        self, command: str, timeout: float, on_output: OutputCallback | None
    ) -> ExecResult:
        result = await exec_stream(
            self.client.api,
            self.container.id,
            ["sh", "-c", command],
            user="root",
            workdir=WORKSPACE,
            timeout=timeout,
            on_output=on_output,
        )
        await exec_quiet(self.client.api, self.container.id, KILL_AS_ROOT, timeout=30, wrap=False)
        return result

    async def _changed_files(self) -> list[str]:
        script = changed_files_script(ACTION_MARKER, self.template.keep_paths)
        _, output = await exec_quiet(self.client.api, self.container.id, script)
        return sorted(line.removeprefix("./") for line in output.splitlines() if line.strip())

    async def _finish_action(self, outcome: ActionResult) -> None:
        if outcome.timed_out:
            outcome.note = f"stopped by the {outcome.duration:.0f}s action timeout"
            return
        if not outcome.ok:
            outcome.note = self._network_hint()
            return
        entry = envs.layer_entry(outcome.action.kind, outcome.command, reason=outcome.action.reason)
        outcome.cached_image = await self._save_layer([entry])

    def _network_hint(self) -> str:
        if self.allow_network:
            return ""
        return (
            "The sandbox has no network (allow_network = false), so downloads fail; set "
            "allow_network = true to let installs reach package indexes."
        )

    def _setup_failed(self, command: str, result: ExecResult) -> str:
        tail = "\n".join(result.output.rstrip().splitlines()[-15:])
        state = "timed out" if result.timed_out else f"failed (exit code {result.exit_code})"
        return (
            f"The docker sandbox's setup command `{command}` (template "
            f"{self.template.name!r}) {state}:\n{tail}\n{self._network_hint()}".rstrip()
        )

    async def _save_layer(self, entries: list[dict[str, Any]]) -> str | None:
        """Record `entries` in the image's layer list and commit the container as the cached
        environment (the workspace copy is cleared first: project code stays out of images)."""
        env = self.environment
        env.layers = [*env.layers, *entries]
        if not self.use_cache:
            return None
        container = self.container
        await asyncio.to_thread(envs.write_layers, container, env.layers)
        owner, keep = self.template.user, self.template.keep_paths
        if keep:
            kept = " ".join(shlex.quote(f"{WORKSPACE}/{name}") for name in keep)
            await exec_quiet(self.client.api, container.id, f"chown -R {owner} {kept} 2>/dev/null")
        await exec_quiet(self.client.api, container.id, clear_script(keep, owner))
        return await asyncio.to_thread(envs.commit_environment, container, env)
