"""Run the tests on this machine, in the shadow worktree, as a contained subprocess (under
bubblewrap when given a `Jail`, see sandbox/bubblewrap.py)."""

from __future__ import annotations

import asyncio
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from tui_engineer.base.errors import UserError
from tui_engineer.base.shell_command import program as first_program
from tui_engineer.sandbox.bubblewrap import Jail, JailFailed
from tui_engineer.sandbox.bwrap_program import Bwrap
from tui_engineer.sandbox.ignored import exclude_in_shadow, run_artifacts
from tui_engineer.sandbox.warm_pytest import NOT_USED, warm_command
from tui_engineer.verify import runners
from tui_engineer.verify.report import TestReport, apply_runner_result, report_from_run
from tui_engineer.verify.runners.pytest import is_pytest_command, with_pytest_report_args
from tui_engineer.verify.test_process import (
    CommandNotFound,
    RunResult,
    StartedCommand,
    discard_command,
    finish_command,
    run_command,
    scrubbed_env,
    start_command,
)

# Made inside the jail before the command runs (Jail.wrap): not there after, bwrap failed.
STARTED_MARK = "started"
JAIL_RETRY_PAUSE = 0.5  # seconds before a run bubblewrap could not start is tried again

# Words the shell runs itself: a 127 exit after one of these came from something else.
_SHELL_BUILTINS = {
    "cd", "exec", "eval", "export", "set", "test", "[", "command", "env", "time", "nice",
    "timeout", "xvfb-run", "sh", "bash", "true", "false", ":", ".", "source", "if", "for",
}  # fmt: skip


def worktree_env(workdir: Path, base: Mapping[str, str]) -> dict[str, str]:
    """`base` plus what makes the worktree's code win: its folder (and `src/`) first on
    PYTHONPATH, ahead of an editable install of the user's checkout (whose .pth entries and
    import hooks come after PYTHONPATH), and no __pycache__ written into the worktree."""
    env = dict(base)
    paths = [str(workdir)]
    if (workdir / "src").is_dir():
        paths.append(str(workdir / "src"))
    if env.get("PYTHONPATH"):
        paths.append(env["PYTHONPATH"])
    env["PYTHONPATH"] = os.pathsep.join(paths)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def missing_program(command: str, env: Mapping[str, str], workdir: Path) -> str | None:
    """The command's own program if it cannot be found, else None."""
    program = first_program(command)
    if program is None or program in _SHELL_BUILTINS:
        return None
    if "/" in program:
        return None if (workdir / program).exists() else program
    return None if shutil.which(program, path=env.get("PATH", "")) else program


@dataclass
class _Warm:
    """A pytest run started early, paused before it reads the project (sandbox/warm_pytest.py)."""

    workdir: Path
    command: str
    env: dict[str, str]
    writable: tuple[Path, ...]  # the folders outside the shadow it may write
    report_dir: Path  # holds the JUnit file: its path is one of the run's arguments
    started: StartedCommand


class LocalSandbox:
    """Runs tests in a subprocess of this machine; see `run_command` for the containment."""

    name = "local"

    def __init__(
        self,
        *,
        secret_names: Iterable[str] = (),
        secret_values: Iterable[str] = (),
        allow: Iterable[str] = (),
        jail: Jail | None = None,
        extra_env: Mapping[str, str] | None = None,
        links: tuple[Path, Sequence[str]] | None = None,
        reports: Path | None = None,
    ) -> None:
        # Names never passed (the variable the API key is configured in), values never passed
        # under any name (the key itself), and the user's additions to the allow list.
        self._secret_names = tuple(secret_names)
        self._secret_values = tuple(secret_values)
        self._allow = tuple(allow)
        # None: tests run uncontained (`--sandbox none`, or a caller that contains them itself).
        self._jail = jail
        # Set for every run (the build cache's variables, sandbox/ignored.py).
        self._extra_env = dict(extra_env or {})
        # Without a jail: (the repository, its ignored paths the tests need) linked into the
        # worktree a run works in (with a jail they are mounted read-only instead).
        self._links = links
        self._writable: list[Path] = []  # folders outside the shadow the runs may write
        self._warm: _Warm | None = None  # the next pytest run, started early (prewarm)
        self._warming = asyncio.Lock()  # held while a run is started early, and by close
        self._closed = False
        # Where each run's report folder is made: the session's own, which the next start
        # cleans once the session is gone (vcs/cleanup.py), so a kill mid-run leaves nothing
        # in the system's temp folder. None: the system's temp folder.
        self._reports = reports

    @property
    def kind(self) -> str:
        """What the session says tests run in: "local" (under bubblewrap) or "none"."""
        return "local" if self._jail is not None else "none"

    @property
    def ends_every_process(self) -> bool:
        """Under bubblewrap a run has its own PID namespace, which ends with it."""
        return self._jail is not None

    @property
    def bwrap(self) -> Bwrap | None:
        """The bubblewrap tests run under; None when they run uncontained."""
        return self._jail.bwrap if self._jail is not None else None

    def allow_writes(self, folder: Path) -> None:
        """Let test runs write `folder` too (affected-tests-first keeps testmon's data there)."""
        folder.mkdir(parents=True, exist_ok=True)
        self._writable.append(folder)

    async def run_tests(
        self,
        workdir: Path,
        command: str,
        *,
        timeout: float,
        on_output: Callable[[str], None] | None = None,
        early: bool = True,
    ) -> TestReport:
        """Run `command` in `workdir`. Raises CommandNotFound (a UserError) when the command's
        program does not exist, because no edit can fix that: the user must set test_command.
        `early=False`: a run beside the steps' (the baseline, a probe), which leaves the run
        started early (prewarm) to the step it was started for."""
        if not workdir.is_dir():
            raise UserError(f"Cannot run tests: the folder {workdir} does not exist.")
        self._prepare_worktree(workdir)
        env = self._env(workdir)
        if not is_pytest_command(command):
            if early:
                await self._drop_warm()
            return await self._run_other(workdir, command, env, timeout, on_output)
        warm, self._warm = (self._warm, None) if early else (None, self._warm)
        now = (workdir, command, env, tuple(self._writable))
        if warm is not None and (warm.workdir, warm.command, warm.env, warm.writable) == now:
            try:
                run = await self._go(warm, timeout, on_output)
                if run is not None:
                    self._check_started(command, run, env, workdir)
                    junit = warm.report_dir / "report.xml"
                    return await asyncio.to_thread(report_from_run, command, run, junit, workdir)
            finally:
                shutil.rmtree(warm.report_dir, ignore_errors=True)
        elif warm is not None:
            await self._discard(warm)
        # The JUnit file lives outside the worktree so it never shows up in the step's diff.
        with tempfile.TemporaryDirectory(prefix="tui-engineer-junit-", dir=self._folder()) as tmp:
            folder = Path(tmp)
            junit = folder / "report.xml"
            with_report = with_pytest_report_args(command, junit)
            run = await self._run_contained(with_report, workdir, folder, env, timeout, on_output)
            self._check_started(command, run, env, workdir)
            return await asyncio.to_thread(report_from_run, command, run, junit, workdir)

    async def _run_other(
        self,
        workdir: Path,
        command: str,
        env: dict[str, str],
        timeout: float,
        on_output: Callable[[str], None] | None,
    ) -> TestReport:
        """Another runner: its output is read, or the report file it writes (jest's JSON), by
        its module (verify/runners/)."""
        with tempfile.TemporaryDirectory(prefix="tui-engineer-report-", dir=self._folder()) as tmp:
            report_file = Path(tmp) / "report"
            run_as = runners.report_command(command, report_file, workdir)
            run = await self._run_contained(run_as, workdir, Path(tmp), env, timeout, on_output)
            self._check_started(command, run, env, workdir)
            report = report_from_run(command, run, root=workdir)
            parsed = runners.read_report(command, report_file, workdir)
            if parsed is not None and not run.timed_out:
                apply_runner_result(report, parsed)
            return report

    async def prewarm(self, workdir: Path, command: str) -> None:
        """Start the next run of `command` in `workdir` now, paused before it reads the project:
        Python's, pytest's and the plugins' start-up then overlap the model's call. Only a plain
        `python -m pytest` command; the next `run_tests` with the same command uses it (or ends
        it and runs as usual), and `close` ends one never used."""
        async with self._warming:  # one at a time: the steps' runtimes share this sandbox
            if self._closed or self._warm is not None:
                return
            if workdir.is_dir() and is_pytest_command(command):
                self._warm = await self._start_warm(workdir, command)

    async def _start_warm(self, workdir: Path, command: str) -> _Warm | None:
        """The paused run of `command` (sandbox/warm_pytest.py); None for a command it cannot
        start so."""
        report_dir = Path(tempfile.mkdtemp(prefix="tui-engineer-junit-", dir=self._folder()))
        paused = warm_command(with_pytest_report_args(command, report_dir / "report.xml"))
        if paused is None:
            shutil.rmtree(report_dir, ignore_errors=True)
            return None
        self._prepare_worktree(workdir)
        env = self._env(workdir)
        try:
            started = await start_command(
                self._contained(paused, workdir, report_dir), workdir, env=env, stdin_pipe=True
            )
        except BaseException:
            shutil.rmtree(report_dir, ignore_errors=True)
            raise
        return _Warm(workdir, command, env, tuple(self._writable), report_dir, started)

    async def _go(
        self, warm: _Warm, timeout: float, on_output: Callable[[str], None] | None
    ) -> RunResult | None:
        """Let the paused run go on; None when it could not be used (then nothing ran)."""
        proc = warm.started.proc
        if proc.returncode is not None or proc.stdin is None:
            await self._discard(warm)
            return None
        warm.started.started = time.monotonic()  # the run's time (and timeout) start now
        try:
            proc.stdin.write(b"go\n")
            await proc.stdin.drain()
            proc.stdin.close()
        except (BrokenPipeError, ConnectionResetError):
            await self._discard(warm)
            return None
        # Streamed as it comes: a run that was not used exits before printing anything.
        run = await finish_command(warm.started, timeout=timeout, on_output=on_output)
        if run.exit_code == NOT_USED and not run.output.strip():
            return None
        return run if self._jail_started(warm.report_dir, run) else None

    async def _run_contained(
        self,
        command: str,
        workdir: Path,
        folder: Path,
        env: dict[str, str],
        timeout: float,
        on_output: Callable[[str], None] | None,
    ) -> RunResult:
        """Run `command` contained, `folder` (the run's own, writable) holding its files. When
        bubblewrap could not start it, the run never reached the code: the folders it may write
        are made again (a user may clear the cache they live in) and it runs once more;
        JailFailed if it cannot start then either."""
        for attempt in range(2):
            if attempt:
                await asyncio.sleep(JAIL_RETRY_PAUSE)
                for writable in self._writable:
                    writable.mkdir(parents=True, exist_ok=True)
            full = self._contained(command, workdir, folder)
            run = await run_command(full, workdir, timeout=timeout, on_output=on_output, env=env)
            if self._jail_started(folder, run):
                return run
        raise JailFailed(run.output)

    def _jail_started(self, folder: Path, run: RunResult) -> bool:
        """Whether the command got past bubblewrap: the shell inside made its mark first."""
        return self._jail is None or run.timed_out or (folder / STARTED_MARK).exists()

    async def _discard(self, warm: _Warm) -> None:
        try:
            await discard_command(warm.started)
        finally:
            shutil.rmtree(warm.report_dir, ignore_errors=True)

    async def _drop_warm(self) -> None:
        warm, self._warm = self._warm, None
        if warm is not None:
            await self._discard(warm)

    def _prepare_worktree(self, workdir: Path) -> None:
        """Before a run in a shadow (never the user's own tree): what the run writes that is not
        the step's is kept out of the shadow's git, and without a jail the ignored folders the
        tests need are linked in."""
        root = self._links[0] if self._links else self._jail.repo_root if self._jail else None
        if root is None or workdir.resolve() == root.resolve():
            return
        exclude_in_shadow(workdir, run_artifacts(workdir))
        if self._links is None:
            return
        paths = self._links[1]
        exclude_in_shadow(workdir, paths)
        for path in paths:
            target = workdir / path
            if not target.exists() and not target.is_symlink():
                target.parent.mkdir(parents=True, exist_ok=True)
                _show(root.resolve() / path, target)

    def _env(self, workdir: Path) -> dict[str, str]:
        base = scrubbed_env(
            extra_secret_names=self._secret_names,
            allow=self._allow,
            secret_values=self._secret_values,
        )
        env = worktree_env(workdir, base)
        env.update(self._extra_env)
        if self._jail is not None:
            env.update(self._jail.environment())  # its private /tmp and empty home
        return env

    def _folder(self) -> Path | None:
        """The folder report folders are made in (made first), or None for the system's."""
        if self._reports is not None:
            self._reports.mkdir(parents=True, exist_ok=True)
        return self._reports

    def _contained(self, command: str, workdir: Path, folder: Path) -> str:
        """`command` under the jail, if any; `folder` is the run's own (writable)."""
        if self._jail is None:
            return command
        writable = (folder, *self._writable)
        return self._jail.wrap(command, workdir, writable, started=folder / STARTED_MARK)

    @staticmethod
    def _check_started(command: str, run: RunResult, env: Mapping[str, str], workdir: Path) -> None:
        if run.exit_code != 127:
            return
        program = missing_program(command, env, workdir)
        if program is not None:
            raise CommandNotFound(command, program)

    async def close(self) -> None:
        """End a run started early and never used (every other run cleans up after itself),
        and remove the session's report folder. One being started now is ended too, and a
        closed sandbox starts no more."""
        self._closed = True
        async with self._warming:
            await self._drop_warm()
        if self._reports is not None:
            shutil.rmtree(self._reports, ignore_errors=True)


def _show(source: Path, target: Path) -> None:
    """An ignored path shown uncontained: a folder linked; a file (a crate's Cargo.lock, yarn's
    module map) copied read-only, so that cargo updating the lock can never write through a
    link to yours."""
    if source.is_file():
        shutil.copyfile(source, target)
        target.chmod(0o444)
    else:
        target.symlink_to(source)
