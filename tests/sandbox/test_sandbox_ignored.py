"""What the tests need that the shadow (tracked files only) lacks, under the local sandbox's
bubblewrap: the user's ignored folders (node_modules, a repo's own .venv, generated code named in
`show_ignored`) shown read-only at their place, the interpreter's venv wherever it lives (under
/tmp too), and a writable build cache outside the shadow. Real git, real bwrap, real venvs."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import write_files
from tui_engineer.config import Settings, load_settings
from tui_engineer.config.detect import detect_test_command
from tui_engineer.sandbox.factory import make_sandbox
from tui_engineer.vcs.shadow import Shadow

JS = {"package.json": '{"name": "x", "scripts": {"test": "node --test"}}\n', "a.js": "1\n"}


@pytest.fixture
def shadow_of() -> Iterator:
    made: list[Shadow] = []

    def _make(root: Path) -> Shadow:
        made.append(Shadow.create(root, session_id=f"ignored-{len(made)}"))
        return made[-1]

    yield _make
    for shadow in made:
        shadow.remove()


@pytest.fixture
def cleanup() -> Iterator[list[Path]]:
    """Folders outside the test's temp folder to remove afterwards."""
    folders: list[Path] = []
    yield folders
    for folder in folders:
        shutil.rmtree(folder, ignore_errors=True)


async def _sh(root: Path, workdir: Path, script: str, **settings: object) -> str:
    sandbox = make_sandbox(Settings(sandbox="local", **settings), root)  # type: ignore[arg-type]
    report = await sandbox.run_tests(workdir, script, timeout=60)
    await sandbox.close()
    return report.output_tail


async def test_ignored_node_modules_are_shown_read_only(make_repo, shadow_of) -> None:
    root = make_repo({**JS, ".gitignore": "node_modules/\n"})
    write_files(root, {"node_modules/dep/index.js": "module.exports = 42;\n"})
    shadow = shadow_of(root)
    assert not (shadow.path / "node_modules").exists()  # the shadow holds tracked files only
    out = await _sh(
        root,
        shadow.path,
        "cat node_modules/dep/index.js; echo gone > node_modules/dep/index.js || echo refused",
    )
    assert "module.exports = 42;" in out and "refused" in out
    assert (root / "node_modules/dep/index.js").read_text() == "module.exports = 42;\n"
    # The mount point left in the shadow is never part of a step.
    assert shadow.changes() == []


async def test_a_folder_ignored_only_by_info_exclude_stays_out_of_the_step(
    make_repo, shadow_of
) -> None:
    root = make_repo(JS)
    (root / ".git" / "info").mkdir(exist_ok=True)
    (root / ".git" / "info" / "exclude").write_text("node_modules\n")
    write_files(root, {"node_modules/dep/index.js": "42\n"})
    shadow = shadow_of(root)
    assert "42" in await _sh(root, shadow.path, "cat node_modules/dep/index.js")
    assert shadow.changes() == []


async def test_tracked_or_unlisted_folders_are_not_taken_from_the_users_tree(
    make_repo, shadow_of
) -> None:
    root = make_repo({**JS, ".gitignore": "generated/\nsecret/\n", "vendor/v.txt": "tracked\n"})
    write_files(root, {"generated/api.js": "GENERATED-CODE\n", "secret/s.txt": "SECRET-FILE\n"})
    (root / "vendor" / "v.txt").write_text("changed in the tree\n")  # the shadow has the commit's
    shadow = shadow_of(root)
    script = "cat generated/api.js secret/s.txt vendor/v.txt 2>&1"
    out = await _sh(root, shadow.path, script)
    assert "GENERATED-CODE" not in out and "tracked" in out and "changed" not in out
    # `show_ignored` names more: generated code the build needs.
    out = await _sh(root, shadow.path, script, show_ignored="generated")
    assert "GENERATED-CODE" in out and "SECRET-FILE" not in out


async def test_an_ignored_path_leading_out_of_the_repository_is_not_shown(
    make_repo, shadow_of, tmp_path: Path
) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "x.txt").write_text("outside\n")
    root = make_repo({**JS, ".gitignore": "node_modules\n"})
    (root / "node_modules").symlink_to(outside)
    shadow = shadow_of(root)
    assert "outside" not in await _sh(root, shadow.path, "cat node_modules/x.txt 2>&1")


def _venv(path: Path) -> Path:
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", "--system-site-packages", str(path)],
        check=True,
    )
    return path


async def test_the_repos_own_venv_is_used_when_none_is_active(
    make_repo, shadow_of, monkeypatch
) -> None:
    monkeypatch.delenv("VIRTUAL_ENV", raising=False)
    root = make_repo({"pyproject.toml": "[tool.pytest.ini_options]\n", ".gitignore": ".venv/\n"})
    venv = _venv(root / ".venv")
    command, reason = detect_test_command(root)  # type: ignore[misc]
    assert command == ".venv/bin/python -m pytest" and ".venv" in reason
    # Not in a container: a venv made on this machine does not run in the image.
    user = root.parent / "user.toml"
    docker = load_settings(root, {"sandbox": "docker"}, {}, user_config=user).settings
    assert docker.test_command == "python -m pytest"
    shadow = shadow_of(root)
    out = await _sh(root, shadow.path, '.venv/bin/python -c "import sys; print(sys.prefix)"')
    assert out.strip() == str(shadow.path / ".venv")
    assert venv.is_dir()


async def test_an_active_venv_under_tmp_is_visible(
    make_repo, shadow_of, monkeypatch, tmp_path: Path
) -> None:
    assert str(tmp_path).startswith("/tmp/")  # what a script making a throwaway venv does
    venv = _venv(tmp_path / "env")
    monkeypatch.setenv("VIRTUAL_ENV", str(venv))
    monkeypatch.setenv("PATH", f"{venv}/bin:" + os.environ["PATH"])
    root = make_repo()
    shadow = shadow_of(root)
    out = await _sh(
        root, shadow.path, 'python -c "import sys; print(sys.prefix)"; echo $VIRTUAL_ENV'
    )
    assert out.split() == [str(venv), str(venv)]


@pytest.mark.parametrize("where", ["tmp", "home"])
async def test_a_venv_on_path_not_activated_keeps_its_packages(
    make_repo, shadow_of, monkeypatch, tmp_path: Path, cleanup: list[Path], where: str
) -> None:
    """A virtualenv's bin on PATH without VIRTUAL_ENV (`export PATH=~/envs/work/bin:$PATH`,
    a script's throwaway venv under /tmp): only bin/ was shown, so its python ran as the base
    interpreter without the venv's packages ("No module named pytest")."""
    monkeypatch.delenv("VIRTUAL_ENV", raising=False)
    if where == "home":  # a home the sandbox hides, outside /tmp (which it hides anyway)
        home = Path(tempfile.mkdtemp(prefix="tui-engineer-home-", dir="/var/tmp"))
        cleanup.append(home)
        monkeypatch.setenv("HOME", str(home))
        venv = _venv(home / "envs" / "work")
    else:
        venv = _venv(tmp_path / "work")
    site = next(venv.glob("lib/python*/site-packages"))
    (site / "only_in_the_venv.py").write_text("WHERE = 'venv'\n")
    monkeypatch.setenv("PATH", f"{venv}/bin:" + os.environ["PATH"])
    root = make_repo()
    out = await _sh(
        root, shadow_of(root).path, 'python -c "import only_in_the_venv as m; print(m.WHERE)"'
    )
    assert out.split() == ["venv"], out


async def test_uncontained_runs_get_the_ignored_folders_linked(make_repo, shadow_of) -> None:
    """--sandbox none (the user's choice): no bubblewrap to mount with, so a link."""
    root = make_repo({**JS, ".gitignore": "node_modules/\n"})
    write_files(root, {"node_modules/dep/index.js": "module.exports = 42;\n"})
    shadow = shadow_of(root)
    sandbox = make_sandbox(Settings(sandbox="none"), root)
    report = await sandbox.run_tests(shadow.path, "cat node_modules/dep/index.js", timeout=60)
    assert "module.exports = 42;" in report.output_tail
    assert shadow.changes() == []


async def test_an_ignored_file_is_shown_and_its_mount_point_stays_out(make_repo, shadow_of) -> None:
    """yarn's Plug'n'Play map is a file: bubblewrap leaves an empty one in the shadow."""
    root = make_repo({**JS, ".gitignore": ".pnp.cjs\n"})
    write_files(root, {".pnp.cjs": "// the module map\n"})
    shadow = shadow_of(root)
    assert "the module map" in await _sh(root, shadow.path, "cat .pnp.cjs")
    assert shadow.changes() == []


CARGO = shutil.which("cargo") or (
    "/root/.cargo/bin/cargo" if os.path.exists("/root/.cargo/bin/cargo") else None
)
CRATE = {
    "Cargo.toml": '[package]\nname = "calc"\nversion = "0.1.0"\nedition = "2021"\n',
    ".gitignore": "target/\nCargo.lock\n",  # a library crate that does not commit its lock
    "src/lib.rs": "#[test]\nfn adds() {\n    assert_eq!(2 + 3, 5);\n}\n",
}


@pytest.mark.skipif(CARGO is None, reason="cargo is not installed")
async def test_a_crates_ignored_lock_is_shown_read_only_and_cargo_runs_offline(
    make_repo, shadow_of, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert CARGO is not None
    monkeypatch.setenv("PATH", f"{Path(CARGO).parent}:{os.environ.get('PATH', '')}")
    root = make_repo(CRATE)
    subprocess.run(["cargo", "generate-lockfile", "--offline"], cwd=root, check=True)
    lock = (root / "Cargo.lock").read_text()
    shadow = shadow_of(root)
    assert not (shadow.path / "Cargo.lock").exists()  # ignored: not in the shadow's files
    out = await _sh(
        root,
        shadow.path,
        "echo offline=$CARGO_NET_OFFLINE; cargo test --locked 2>&1 | grep 'test result'; "
        "echo x >> Cargo.lock || echo refused",
    )
    assert "offline=true" in out and "test result: ok. 1 passed" in out, out
    assert "refused" in out and (root / "Cargo.lock").read_text() == lock
    assert shadow.changes() == []  # the mount point is never part of a step
    # Allowed the network, cargo may reach the index as the user's own runs do.
    said = await _sh(root, shadow.path, "echo offline=$CARGO_NET_OFFLINE", allow_network=True)
    assert said.strip() == "offline="


async def test_uncontained_the_ignored_lock_is_a_copy_cargo_cannot_write_through(
    make_repo, shadow_of
) -> None:
    """--sandbox none links ignored folders in; a lock file is copied read-only instead: a run
    that rewrites it (cargo updating the lock) must never change the user's own (issue 48)."""
    root = make_repo(CRATE)
    write_files(root, {"Cargo.lock": "# the user's lock\nversion = 3\n"})
    shadow = shadow_of(root)
    sandbox = make_sandbox(Settings(sandbox="none"), root)
    script = (
        "cat Cargo.lock; test -L Cargo.lock && echo linked; "
        "echo x >> Cargo.lock 2>/dev/null || echo refused; rm -f Cargo.lock; echo new > Cargo.lock"
    )
    report = await sandbox.run_tests(shadow.path, script, timeout=60)
    await sandbox.close()
    assert "the user's lock" in report.output_tail and "linked" not in report.output_tail
    assert (root / "Cargo.lock").read_text() == "# the user's lock\nversion = 3\n"
    assert shadow.changes() == []  # and never part of a step
