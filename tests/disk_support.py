"""A small, real file system for the disk-full tests, on any Linux machine, root or not
(hooks and a fixture, used by tests/conftest.py).

`small_disk` is a tmpfs of `SMALL_DISK_BYTES` (or the size a `small_disk(N)` mark asks for):
the kernel's own ENOSPC for every writer, Python's and git's alike (index.lock, objects,
checkout-index). That is why it is a mount and not an injected error: a wrapper around
Python's writes never reaches git's, and RLIMIT_FSIZE gives EFBIG or kills git with SIGXFSZ,
which no user with a full disk meets.

Where this user may mount (root), the tmpfs is mounted here and the test runs as usual.
Elsewhere (a plain user, as in CI's README pass) the test is run again, in a pytest of its own,
inside a user and mount namespace where bwrap (the sandbox's: the system's, else the bundled)
mounts the tmpfs: the namespaces the local sandbox needs anyway. Only where neither works
(no namespaces allowed) does the test skip, saying so. A module sets the size by overriding
the `small_disk_bytes` fixture.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

SMALL_DISK_BYTES = 2 * 1024 * 1024
INSIDE = "TESTS_SMALL_DISK"  # set in the run inside the namespace: the folder already mounted
NAMESPACE_ONLY = "TESTS_SMALL_DISK_IN_NAMESPACE"  # 1: never mount here (as a plain user would)
ROOT = Path(__file__).resolve().parent.parent
_NAMESPACED = pytest.StashKey[tuple[Path, int]]()  # on an item whose body runs inside a namespace


def _mount(where: Path, size: int) -> bool:
    """A tmpfs of `size` bytes at `where`, mounted here; False where this user may not."""
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)],
        capture_output=True,
        check=False,
    )
    return done.returncode == 0


def _bwrap() -> str | None:
    from tui_engineer.sandbox.bwrap_program import find_bwrap

    found = find_bwrap()
    return found.path if found is not None else None


def in_namespace(where: Path, size: int, command: list[str]) -> list[str]:
    """`command` run where `where` is a fresh tmpfs of `size` bytes (a user and mount
    namespace of bwrap's; the rest of the machine as it is, the same user)."""
    bwrap = _bwrap()
    if bwrap is None:
        raise RuntimeError("no bwrap: neither a system one nor the bundled one")
    return [
        bwrap, "--dev-bind", "/", "/", "--unshare-user", "--die-with-parent",
        "--size", str(size), "--tmpfs", str(where), "--", *command,
    ]  # fmt: skip


def namespace_problem(where: Path) -> str:
    """Why a tmpfs cannot be mounted in a namespace here; "" when it can."""
    try:
        command = in_namespace(where, 65536, ["true"])
    except RuntimeError as err:
        return str(err)
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    return "" if done.returncode == 0 else done.stderr.strip() or f"bwrap exit {done.returncode}"


@pytest.fixture
def small_disk_bytes() -> int:
    return SMALL_DISK_BYTES


@pytest.fixture
def small_disk(
    request: pytest.FixtureRequest, tmp_path: Path, small_disk_bytes: int
) -> Iterator[Path]:
    """A folder on a tmpfs of `small_disk_bytes` (see the module's docstring)."""
    inside = os.environ.get(INSIDE)
    if inside:
        yield Path(inside)
        return
    where = tmp_path / "small"
    where.mkdir()
    size = small_disk_bytes
    if os.environ.get(NAMESPACE_ONLY) != "1" and _mount(where, size):
        try:
            yield where
        finally:
            subprocess.run(["umount", "-l", str(where)], check=False)
        return
    problem = namespace_problem(where)
    if problem:
        pytest.skip(f"cannot mount a tmpfs here, nor in a user namespace: {problem}")
    request.node.stash[_NAMESPACED] = (where, size)  # pytest_pyfunc_call runs the body there
    yield where


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> bool | None:
    """A test whose small disk is in a namespace: its body runs in a pytest started there."""
    namespaced = pyfuncitem.stash.get(_NAMESPACED, None)
    if namespaced is None:
        return None
    where, size = namespaced
    inner = [
        sys.executable, "-m", "pytest", "-q", "-p", "no:xdist", "-p", "no:cacheprovider",
        "--slow", "-o", "addopts=", pyfuncitem.nodeid,
    ]  # fmt: skip
    env = {**os.environ, INSIDE: str(where)}
    env.pop("PYTEST_DISABLE_PLUGIN_AUTOLOAD", None)  # hermetic_env's: the test's, not this run's
    done = subprocess.run(
        in_namespace(where, size, inner),
        cwd=pyfuncitem.config.rootpath,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=900,
    )
    said = done.stdout[-6000:] + done.stderr[-2000:]
    if done.returncode != 0 or " passed" not in done.stdout:
        pytest.fail(f"on a tmpfs in a user namespace (bwrap), the test failed:\n{said}")
    return True
