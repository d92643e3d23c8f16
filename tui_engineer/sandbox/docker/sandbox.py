"""The docker sandbox: one warm container per session; each test run refreshes its copy of the
shadow worktree and exec's the test command in it as a non-root user, with no network."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import shlex
import tempfile
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from docker.errors import APIError, NotFound

from tui_engineer.base.errors import UserError
from tui_engineer.base.shell_command import program as first_program
from tui_engineer.sandbox.actions import ActionResult, SandboxAction
from tui_engineer.sandbox.docker import environment as envs
from tui_engineer.sandbox.docker.client import connect
from tui_engineer.sandbox.docker.containers import (
    KILL_AS_ROOT,
    KILL_AS_USER,
    ResourceLimits,
    cleanup_containers,
    create_container,
)
from tui_engineer.sandbox.docker.errors import SandboxFailure
from tui_engineer.sandbox.docker.execs import ExecResult, exec_quiet, exec_stream
from tui_engineer.sandbox.docker.repair import SETUP_TIMEOUT, Repair
from tui_engineer.sandbox.docker.workspace import (
    HOME,
    JEST_REPORT_PATH,
    REPORT_DIR,
    REPORT_PATH,
    WORKSPACE,
    clear_script,
    read_single_file,
    workspace_tar,
)
from tui_engineer.sandbox.ignored import ignored_paths, offline_env
from tui_engineer.sandbox.templates import EnvTemplate, pick_template
from tui_engineer.verify import runners
from tui_engineer.verify.report import (
    TestReport,
    apply_runner_result,
    report_from_run,
)
from tui_engineer.verify.runners.pytest import is_pytest_command, with_pytest_report_args
from tui_engineer.verify.test_process import CommandNotFound, RunResult

OutputCallback = Callable[[str], None]
_OOM_COUNTERS = "cat /sys/fs/cgroup/memory.events /sys/fs/cgroup/memory/memory.oom_control"


class CommandNotFoundInSandbox(CommandNotFound):
    def __init__(self, command: str, program: str, image: str) -> None:
        super().__init__(command, program)
        self.args = (
            f"{self.args[0]}\nIt was looked for inside the docker sandbox (image {image}): a "
            "fix can install it with a sandbox action, or pick another template.",
        )


class DockerSandbox:
    """See docs/sandbox.md. Create one per session; `close()` removes its container."""

    name = "docker"
    # Runs are execs in one container, which outlives them: a daemon a run started lives on.
    ends_every_process = False

    def __init__(
        self,
        repo_root: Path,
        *,
        template: EnvTemplate | None = None,
        template_name: str | None = None,
        image: str | None = None,
        allow_network: bool = False,
        limits: ResourceLimits | None = None,
        session_id: str | None = None,
        use_cache: bool = True,
        show_ignored: Sequence[str] = (),
    ) -> None:
        self.repo_root = repo_root
        self.show_ignored = tuple(show_ignored)  # more ignored paths to copy (the setting)
        self._ignored: list[str] | None = None  # found once per session
        picked = template or pick_template(repo_root, template_name)
        # An image override is part of the recipe: it gets its own cached environments.
        self.template = dataclasses.replace(picked, images=(image,)) if image else picked
        self.allow_network = allow_network
        self.limits = limits or ResourceLimits()
        self.session_id = session_id or uuid.uuid4().hex[:12]
        self.use_cache = use_cache
        self.environment: envs.Environment | None = None
        self.cleanup_notes: list[str] = []  # sentences about crashed sessions' containers removed
        self.actions: list[ActionResult] = []  # every action applied this session
        self._client: Any = None
        self._container: Any = None
        self._oom_kills = 0
        self._last_workdir: Path | None = None
        self._lock = asyncio.Lock()

    # --- lifecycle -------------------------------------------------------------------------

    async def start(
        self, workdir: Path | None = None, on_output: OutputCallback | None = None
    ) -> envs.Environment:
        """Connect, clean up crashed sessions' containers and start the warm container (cold
        start: the template's setup runs and is cached). Optional: the first run does it too."""
        async with self._lock:
            return await self._ensure(workdir or self.repo_root, on_output)

    async def close(self) -> None:
        container, self._container = self._container, None
        if container is not None:
            with contextlib.suppress(NotFound, APIError):
                await asyncio.to_thread(container.remove, force=True)

    @property
    def container_name(self) -> str | None:
        return None if self._container is None else self._container.name

    async def _ensure(self, workdir: Path, on_output: OutputCallback | None) -> envs.Environment:
        if self._container is not None and await self._revive():
            assert self.environment is not None
            return self.environment
        if self._client is None:
            self._client = await asyncio.to_thread(connect)
            self.cleanup_notes += await asyncio.to_thread(cleanup_containers, self._client)
        env = await asyncio.to_thread(self._choose_environment)
        self._container = await asyncio.to_thread(
            create_container,
            self._client,
            env.image,
            session_id=self.session_id,
            limits=self.limits,
            allow_network=self.allow_network,
            # No network: cargo builds from the image's cache, as under bubblewrap.
            env={**offline_env(not self.allow_network), **self.template.env},
        )
        await self._prepare()
        env.layers = await asyncio.to_thread(envs.read_layers, self._container)
        self.environment = env
        if not env.warm and self.template.setup:
            await self._refresh(workdir)
            await self._repair().run_template_setup(on_output)
        return env

    def _choose_environment(self) -> envs.Environment:
        key = self.template.environment_key(self.repo_root)
        cached = envs.env_image_name(self.template.name, key)
        if self.use_cache and envs.has_image(self._client, cached):
            labels = self._client.images.get(cached).labels or {}
            base = labels.get("tui-engineer.base-image", "")
            return envs.Environment(self.template.name, key, cached, True, base)
        base = envs.base_image(self._client, self.template)
        return envs.Environment(self.template.name, key, base, False, base)

    async def _prepare(self) -> None:
        folders = f"{WORKSPACE} {REPORT_DIR} {HOME}"
        code, output = await exec_quiet(
            self._client.api,
            self._container.id,
            f"mkdir -p {folders} && chown {self.template.user} {folders}",
        )
        if code != 0:
            raise SandboxFailure(f"The sandbox container could not be prepared: {output.strip()}")
        self._oom_kills = await self._read_oom_kills()

    async def _revive(self) -> bool:
        """True when the container is (again) running; False when it is gone."""
        try:
            await asyncio.to_thread(self._container.reload)
        except NotFound:
            self._container = None
            return False
        if self._container.status != "running":
            await asyncio.to_thread(self._container.start)
            await self._prepare()
        return True

    # --- test runs -------------------------------------------------------------------------

    async def run_tests(
        self,
        workdir: Path,
        command: str,
        *,
        timeout: float,
        on_output: OutputCallback | None = None,
    ) -> TestReport:
        """Run `command` on a fresh copy of `workdir` in the container. Raises
        CommandNotFound when the command's program is not in the image."""
        if not workdir.is_dir():
            raise UserError(f"Cannot run tests: the folder {workdir} does not exist.")
        async with self._lock:
            await self._ensure(workdir, on_output)
            await self._refresh(workdir)
            pytest = is_pytest_command(command)
            other = runners.report_command(command, Path(JEST_REPORT_PATH), workdir)
            # Asked for a report file (jest's JSON): the command differs from the one without.
            writes_report = other != runners.report_command(command, None, workdir)
            full = with_pytest_report_args(command, Path(REPORT_PATH)) if pytest else other
            result = await self._exec_as_user(full, timeout, on_output)
            await self._kill_leftovers()
            run = RunResult(
                result.exit_code, result.timed_out, result.duration, result.output, result.truncated
            )
            await self._check_started(command, run)
            report = await self._report(command, run, workdir, pytest)
            if not pytest and writes_report and not run.timed_out:
                await self._read_report_file(report, command, workdir)
            await self._explain(report, run, timeout)
            return report

    async def _exec_as_user(
        self, command: str, timeout: float, on_output: OutputCallback | None
    ) -> ExecResult:
        return await exec_stream(
            self._client.api,
            self._container.id,
            ["sh", "-c", command],
            user=self.template.user,
            env={"HOME": HOME},
            workdir=WORKSPACE,
            timeout=timeout,
            on_output=on_output,
            on_overdue=self._kill_leftovers,
        )

    async def _refresh(self, workdir: Path) -> None:
        """Replace the container's copy with `workdir`'s files (kept folders stay)."""
        keep = self.template.keep_paths
        code, output = await exec_quiet(
            self._client.api, self._container.id, clear_script(keep, self.template.user)
        )
        if code != 0:
            raise SandboxFailure(f"The sandbox workspace could not be cleared: {output.strip()}")
        uid, gid = self.template.uid_gid
        extra = self._ignored_copies(workdir, keep)
        archive = await asyncio.to_thread(
            workspace_tar, workdir, uid=uid, gid=gid, skip=keep, extra=extra
        )
        with archive:
            await asyncio.to_thread(self._container.put_archive, WORKSPACE, archive)
        self._last_workdir = workdir

    def _ignored_copies(self, workdir: Path, keep: Sequence[str]) -> list[tuple[Path, str]]:
        """The user's ignored folders the tests need (sandbox/ignored.py), copied with the shadow:
        not a virtualenv (made for the host, not the image), not a folder the template keeps."""
        root = self.repo_root.resolve()
        if workdir.resolve() == root:
            return []
        if self._ignored is None:
            self._ignored = ignored_paths(root, self.show_ignored)
        paths = self._ignored
        return [
            (root / p, p)
            for p in paths
            if p.split("/")[0] not in keep and not (root / p / "pyvenv.cfg").is_file()
        ]

    async def _kill_leftovers(self) -> None:
        """End every process a run left (daemons, fork bombs). If even that cannot start (the
        pid limit is full), restart the container: its files survive a restart."""
        user = self.template.user
        script = KILL_AS_ROOT if user == "root" else KILL_AS_USER
        try:
            code, _ = await exec_quiet(
                self._client.api, self._container.id, script, user=user, timeout=30, wrap=False
            )
        except APIError:
            code = None
        if code != 0:
            await asyncio.to_thread(self._container.restart, timeout=0)
            await self._prepare()

    async def _check_started(self, command: str, run: RunResult) -> None:
        if run.exit_code != 127:
            return
        program = first_program(command)
        if program is None:
            return
        code, _ = await exec_quiet(
            self._client.api,
            self._container.id,
            f"cd {WORKSPACE} && command -v {shlex.quote(program)}",
            user=self.template.user,
        )
        if code != 0:
            image = self.environment.image if self.environment else "?"
            raise CommandNotFoundInSandbox(command, program, image)

    async def _report(
        self, command: str, run: RunResult, workdir: Path, pytest: bool
    ) -> TestReport:
        if not pytest:
            return report_from_run(command, run, root=workdir)
        with tempfile.TemporaryDirectory(prefix="tui-engineer-junit-") as tmp:
            junit = Path(tmp) / "report.xml"
            data = await asyncio.to_thread(self._fetch, REPORT_PATH)
            if data is not None:
                junit.write_bytes(data)
            return await asyncio.to_thread(report_from_run, command, run, junit, workdir)

    async def _read_report_file(self, report: TestReport, command: str, workdir: Path) -> None:
        """The report file the runner wrote in the container (jest's JSON), if any."""
        runner = runners.runner_for(command, workdir)
        if runner is None:
            return
        data = await asyncio.to_thread(self._fetch, JEST_REPORT_PATH)
        if data is None:
            return
        with tempfile.TemporaryDirectory(prefix="tui-engineer-report-") as tmp:
            (Path(tmp) / "report").write_bytes(data)
            parsed = runner.read_report(Path(tmp) / "report", Path(WORKSPACE))
        if parsed is not None:
            apply_runner_result(report, parsed)

    def _fetch(self, path: str) -> bytes | None:
        try:
            chunks, _ = self._container.get_archive(path)
        except NotFound:
            return None
        return read_single_file(chunks)

    async def _explain(self, report: TestReport, run: RunResult, timeout: float) -> None:
        """Say in the report's note why the container stopped the run, if it did."""
        notes = [report.note] if report.note else []
        if run.timed_out:
            notes.append(
                f"The run hit the {timeout:g}s test timeout (test_timeout); every process it "
                "started in the docker sandbox was killed."
            )
        elif run.exit_code not in (0, None) and await self._oom_killed():
            notes.append(
                "The kernel killed a test process for using too much memory: the docker "
                f"sandbox's limit is {self.limits.memory} (exit code {run.exit_code}). Make the "
                "tests use less memory, or raise the sandbox's memory limit."
            )
        report.note = " ".join(notes)

    async def _oom_killed(self) -> bool:
        count = await self._read_oom_kills()
        killed, self._oom_kills = count > self._oom_kills, count
        return killed

    async def _read_oom_kills(self) -> int:
        _, output = await exec_quiet(self._client.api, self._container.id, _OOM_COUNTERS)
        for line in output.splitlines():
            name, _, value = line.partition(" ")
            if name == "oom_kill" and value.strip().isdigit():
                return int(value)
        return 0

    # --- self-repair (repair.py) -----------------------------------------------------------

    async def apply_action(
        self,
        action: SandboxAction,
        workdir: Path | None = None,
        *,
        timeout: float = SETUP_TIMEOUT,
        on_output: OutputCallback | None = None,
    ) -> ActionResult:
        """Run `action` as root in the workspace (a fresh copy of `workdir`, by default the last
        one tested). On success it is layered into the cached environment image."""
        async with self._lock:
            folder = workdir or self._last_workdir or self.repo_root
            await self._ensure(folder, on_output)
            await self._refresh(folder)
            outcome = await self._repair().run_action(action, timeout, on_output)
            self.actions.append(outcome)
            return outcome

    def _repair(self) -> Repair:
        assert self.environment is not None
        return Repair(
            self._client,
            self._container,
            self.environment,
            self.template,
            self.allow_network,
            self.use_cache,
        )
