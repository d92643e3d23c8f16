"""`tui-engineer doctor`: checks what a session needs, each with what to do when it is missing.

git and its identity, the repository (and a rebase or merge in progress), the config files
read, the sandbox (which bwrap, namespaces, the network really off; docker reachable and its
image), the model server (key, reachable, the model listed, the context window it reports) and
the test command (detected or configured, found, how it does on the current commit and how
long). A session can start when no check failed (exit 0), else exit 1.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from tui_engineer.base.errors import UserError
from tui_engineer.config import LoadedSettings, Settings, load_settings
from tui_engineer.verify.runners import runner_name

OK, WARN, FAIL = "✓", "!", "✗"


@dataclass
class Finding:
    topic: str
    mark: str  # OK, WARN (a session starts, but read this) or FAIL (it cannot start)
    detail: str
    fix: str = ""  # what to do, for WARN and FAIL


@dataclass
class Report:
    findings: list[Finding] = field(default_factory=list)

    def add(self, topic: str, mark: str, detail: str, fix: str = "") -> None:
        self.findings.append(Finding(topic, mark, detail, fix))

    @property
    def can_start(self) -> bool:
        return all(f.mark != FAIL for f in self.findings)

    def lines(self) -> list[str]:
        out = []
        for f in self.findings:
            out.append(f"{f.mark} {f.topic}: {f.detail}")
            out += [f"    → {line}" for line in f.fix.splitlines() if line.strip()]
        out.append(
            "A session can start here."
            if self.can_start
            else f"A session cannot start here: fix the {FAIL} lines above."
        )
        return out


def run_doctor(start: Path, flags: dict[str, object]) -> Report:
    report = Report()
    check_git(report)
    root = check_repo(report, start)
    if root is not None:  # what makes the shadows quick, and the disk it takes
        from tui_engineer.vcs.spare_prune import summary

        report.add("spares", OK, summary(root))
    loaded = check_config(report, root, flags)
    if loaded is None:
        return report
    settings = loaded.settings
    bwrap_ok = check_sandbox(report, settings, root)
    asyncio.run(check_model(report, settings))
    if root is not None:
        check_tests(report, root, loaded, run=bwrap_ok)
    return report


# ----- git and the repository


def check_git(report: Report) -> None:
    if shutil.which("git") is None:
        report.add(
            "git", FAIL, "not found on PATH", "Install git (Debian/Ubuntu: apt-get install git)."
        )
        return
    version = _output(["git", "--version"]) or "git"
    ident = _output(["git", "var", "GIT_COMMITTER_IDENT"])
    if ident is None:
        report.add(
            "git",
            FAIL,
            f"{version}; no identity to commit with",
            'git config --global user.name "Your Name"\n'
            'git config --global user.email "you@example.com"',
        )
        return
    who = ident.rsplit(">", 1)[0] + ">"
    report.add("git", OK, f"{version}; commits as {who}")


def check_repo(report: Report, start: Path) -> Path | None:
    from tui_engineer.vcs.repo import find_repo_root, repo_state

    try:
        root = find_repo_root(start)
    except UserError:
        report.add(
            "repository",
            FAIL,
            f"{start} is not inside a git repository",
            "cd into your project's repository, or `tui-engineer --init` makes one here.",
        )
        return None
    state = repo_state(root)
    if state.in_progress:
        report.add(
            "repository",
            FAIL,
            f"{root}: a {state.in_progress} is in progress",
            f"Finish it (git {state.in_progress} --continue) or abort it "
            f"(git {state.in_progress} --abort).",
        )
    elif state.dirty:
        files = len(state.changed_files)
        report.add(
            "repository",
            WARN,
            f"{root} (branch {state.branch or 'detached HEAD'}): {files} uncommitted file(s)",
            "The session asks first: commit them as WIP, stash them, or build on top of them.",
        )
    else:
        report.add("repository", OK, f"{root} (branch {state.branch or 'detached HEAD'}), clean")
    return root


def check_config(
    report: Report, root: Path | None, flags: dict[str, object]
) -> LoadedSettings | None:
    try:
        loaded = load_settings(root, flags)
    except UserError as err:
        report.add(
            "config",
            FAIL,
            str(err),
            "Fix the file named above; `tui-engineer config` shows the rest.",
        )
        return None
    read = ", ".join(str(p) for p in loaded.files_read) or "none (defaults)"
    report.add("config", OK, f"files read: {read}; user config: {loaded.user_config}")
    check_agents(report, loaded)
    return loaded


def check_agents(report: Report, loaded: LoadedSettings) -> None:
    """The repository's AGENTS.md (CLAUDE.md, CONVENTIONS.md): what the model is given of it."""
    agents = loaded.agents
    if agents is None:
        return
    command = agents.test_command or "none named"
    detail = (
        f"{agents.path}: {len(agents.conventions):,} characters of conventions for the model; "
        f"test command: {command}"
    )
    if agents.cut:
        fix = f"{agents.cut_notice()}: put what matters most first, or shorten it."
        report.add("agent instructions", WARN, detail, fix)
    else:
        report.add("agent instructions", OK, detail)


# ----- the sandbox


def check_sandbox(report: Report, settings: Settings, root: Path | None) -> bool:
    """Whether the test command can be tried in it."""
    if settings.sandbox == "none":
        report.add(
            "sandbox",
            WARN,
            "none: tests run on this machine without containment",
            "They can read and change any of your files and reach the network; "
            "--sandbox local (bubblewrap) or docker contains them.",
        )
        return True
    if settings.sandbox == "docker":
        return _check_docker(report, root, settings)
    return _check_bwrap(report)


def _check_bwrap(report: Report) -> bool:
    from tui_engineer.sandbox.bwrap_program import check_bwrap, unavailable_message

    check = check_bwrap()
    if not check.ok:
        message = unavailable_message(check)
        head, _, rest = message.partition("\n")
        report.add("sandbox", FAIL, head, rest)
        return False
    bwrap = check.bwrap
    assert bwrap is not None
    report.add("sandbox", OK, f"local, {bwrap.label} ({bwrap.path}); namespaces work")
    interfaces = _interfaces_inside(bwrap.path)
    if interfaces is None or interfaces:
        shown = "could not be read" if interfaces is None else ", ".join(interfaces)
        report.add(
            "network",
            FAIL,
            f"inside the sandbox the network is not off: interfaces {shown}",
            "Report this: tests must not reach the network.",
        )
        return False
    report.add("network", OK, "off inside the sandbox (only its own loopback)")
    return True


def _interfaces_inside(bwrap: str) -> list[str] | None:
    """Network interfaces a sandboxed run sees besides its loopback (None: not readable)."""
    command = [bwrap, "--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev", "--unshare-all"]
    done = _output([*command, "--die-with-parent", "cat", "/proc/net/dev"])
    if done is None:
        return None
    names = [line.split(":")[0].strip() for line in done.splitlines() if ":" in line]
    return [n for n in names if n != "lo"]


def _check_docker(report: Report, root: Path | None, settings: Settings) -> bool:
    from tui_engineer.sandbox.docker.client import connect
    from tui_engineer.sandbox.docker.environment import has_image
    from tui_engineer.sandbox.templates import pick_template

    try:
        client = connect()
    except UserError as err:
        head, _, rest = str(err).partition("\n")
        report.add("sandbox", FAIL, head, rest)
        return False
    if root is None:
        report.add("sandbox", OK, "docker: the engine answers")
        return False
    try:
        template = pick_template(root, settings.sandbox_template)
    except UserError as err:
        report.add("sandbox", FAIL, f"docker: {err}")
        return False
    present = [name for name in template.images if has_image(client, name)]
    if not present:
        report.add(
            "sandbox",
            FAIL,
            f"docker: no image for the {template.name!r} template ({', '.join(template.images)})",
            "Build one with `sudo scripts/build_test_image.sh` (from the tui-engineer source "
            "tree), or `docker load` one; see docs/sandbox.md.",
        )
        return False
    report.add(
        "sandbox", OK, f"docker: the engine answers; template {template.name!r}, image {present[0]}"
    )
    return True


# ----- the model server


async def check_model(report: Report, settings: Settings) -> None:
    from tui_engineer.llm import ModelClient

    url = settings.base_url or "https://api.openai.com/v1"
    if not settings.api_key:
        report.add(
            "model server",
            FAIL,
            f"no API key in {settings.api_key_env} (for {url})",
            f"export {settings.api_key_env}=sk-...  (any value for a local server without auth)",
        )
        return
    client = ModelClient(
        model=settings.model,
        base_url=settings.base_url,
        api_key=settings.api_key,
        api_key_env=settings.api_key_env,
        max_retries=0,
        timeout=10,
    )
    try:
        await client.check_connection()
        window = await client.reported_window()
    except UserError as err:
        head, _, rest = str(err).partition(". ")
        report.add("model server", FAIL, f"{client.base_url}: {head}", rest)
        return
    finally:
        await client.aclose()
    report.add("model server", OK, f"{client.base_url} answers and serves {settings.model}")
    if settings.context_window:
        report.add("context window", OK, f"{settings.context_window:,} tokens (configured)")
    elif window and window.warning:
        report.add("context window", WARN, window.describe(), window.warning)
    elif window:
        report.add("context window", OK, window.describe())
    else:
        report.add(
            "context window",
            WARN,
            "the server does not report it: 16,384 tokens assumed",
            "Set context_window in .tui-engineer.toml if the model has more (or less).",
        )


# ----- the test command


def check_tests(report: Report, root: Path, loaded: LoadedSettings, *, run: bool) -> None:
    from tui_engineer.sandbox.local import missing_program

    settings = loaded.settings
    command = settings.test_command
    if not command:
        report.add(
            "tests",
            WARN,
            "no test command found",
            "Pass --test-cmd 'your command' or set test_command in .tui-engineer.toml; or let "
            "the first step write tests (--write-tests), or work unverified (--unverified).",
        )
        return
    # The runner named as the user knows it: (unittest), (cargo test), (tests/runtests.py).
    source = f"({runner_name(command)}), {loaded.sources.get('test_command', '')}"
    if settings.sandbox != "docker":
        program = missing_program(command, os.environ, root)
        if program is not None:
            report.add(
                "tests",
                FAIL,
                f"`{command}` {source}: `{program}` was not found",
                "Install it, or pass --test-cmd / set test_command in .tui-engineer.toml.",
            )
            return
    if not run:
        report.add("tests", WARN, f"`{command}` {source}: not tried (no sandbox)")
        return
    _try_tests(report, root, settings, command, source)


def _try_tests(report: Report, root: Path, settings: Settings, command: str, source: str) -> None:
    """Run the test command on the current commit, as a session's first run does."""
    from tui_engineer.sandbox.factory import make_sandbox
    from tui_engineer.vcs.shadow import Shadow

    session_id = "doctor-" + secrets.token_hex(2)
    started = time.monotonic()
    try:
        shadow = Shadow.create(root, session_id=session_id)
    except UserError as err:
        report.add("tests", WARN, f"`{command}` {source}: not tried ({err})")
        return
    try:
        sandbox = make_sandbox(settings, root, session_id)
        outcome = asyncio.run(_run(sandbox, shadow.path, command, settings.test_timeout))
    except UserError as err:
        report.add("tests", FAIL, f"`{command}` {source}: {err}")
        return
    finally:
        shadow.remove()
    seconds = time.monotonic() - started
    ok, summary = outcome
    detail = f"`{command}` {source}, on the current commit: {summary} ({seconds:.1f} s in all)"
    if ok:
        report.add("tests", OK, detail)
    else:
        report.add(
            "tests",
            WARN,
            detail,
            "Tests already failing are the repo's, not a step's: the session measures each "
            "step against them.",
        )


async def _run(sandbox: object, workdir: Path, command: str, timeout: float) -> tuple[bool, str]:
    try:
        report = await sandbox.run_tests(workdir, command, timeout=timeout)  # type: ignore[attr-defined]
    finally:
        await sandbox.close()  # type: ignore[attr-defined]
    return report.ok, report.summary()


def _output(command: list[str]) -> str | None:
    """A command's stdout, or None when it failed or is missing."""
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() if done.returncode == 0 else None
