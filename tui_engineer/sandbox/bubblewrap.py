"""Containment for the local sandbox: the test command runs under bubblewrap (`bwrap`; which
one: bwrap_program.py).

Inside, the whole system is read-only, /tmp is private, the user's repository is hidden (only
its git objects, which the shadow reads, and a virtualenv kept inside it show, read-only), and
only the shadow (minus its .git, read-only) and the report folder are writable. Home folders
(HOME, /root, /home) are private and empty (~/.ssh, ~/.aws, ~/.netrc are not there) except the
toolchains tests run from, read-only; /run is empty, so no host daemon's socket (docker, systemd,
dbus, an ssh or gpg agent) can be reached. The run has its
own PID namespace, so every process it starts (a `setsid` daemon too) ends when it ends, and
`--die-with-parent` ends it if tui-engineer dies. No network unless `allow_network`.
"""

from __future__ import annotations

import os
import pwd
import shlex
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from tui_engineer.base.errors import UserError
from tui_engineer.sandbox.bwrap_program import ALTERNATIVES, SYSTEM, Bwrap, require_bwrap
from tui_engineer.sandbox.ignored import exclude_in_shadow

# Folders in a home that toolchains run from (interpreters, compilers, package stores), shown
# read-only in the private home; never credentials (~/.ssh, ~/.aws, ~/.cargo/credentials.toml).
# Virtualenvs made by poetry, pipenv, uv (and uv's own Pythons, which its venvs link to) too.
TOOLCHAIN_DIRS = (
    ".pyenv", ".local/bin", ".local/lib", ".cargo/bin", ".cargo/registry", ".cargo/git",
    ".rustup", ".nvm", ".volta", "go/bin", "go/pkg/mod", "miniconda3", "anaconda3", "miniforge3",
    ".local/share/uv/python", ".cache/pypoetry/virtualenvs", ".local/share/virtualenvs",
    ".asdf/installs", ".local/share/mise/installs",
)  # fmt: skip
# Never hidden as "the home": hiding them would hide the system.
_SYSTEM = {Path(p) for p in ("/", "/usr", "/etc", "/var", "/opt", "/bin", "/lib", "/srv", "/tmp")}
# Readable by root only: when tui-engineer runs as root, so would tests (bubblewrap keeps the
# uid), so these are blanked inside (password hashes, the host's ssh keys).
ROOT_ONLY_SECRETS = ("/etc/shadow", "/etc/gshadow", "/etc/shadow-", "/etc/gshadow-")
ROOT_ONLY_FOLDERS = ("/etc/ssh",)
# Where an empty, private home goes when HOME cannot be hidden in place (HOME=/ or unset).
_SPARE_HOME = Path("/tmp/home")


@dataclass(frozen=True)
class Jail:
    hidden: tuple[Path, ...] = ()  # folders tests must not see (the user's repository, homes)
    shown: tuple[Path, ...] = ()  # folders inside hidden ones shown read-only (git objects, venv)
    allow_network: bool = False
    # Folders of ours outside the shadow the runs write (the affected-tests data, testmon's).
    writable: tuple[Path, ...] = ()
    home: Path = _SPARE_HOME  # HOME inside: empty and private (a tmpfs), see private_home
    # Paths of the user's tree git ignores (node_modules, .venv), shown read-only at the same
    # relative path in the worktree a run works in (sandbox/ignored.py).
    ignored: tuple[str, ...] = ()
    repo_root: Path | None = None  # where `ignored` come from
    bwrap: Bwrap = Bwrap("bwrap", SYSTEM)  # the one to run: bwrap_program.require_bwrap's

    def environment(self) -> dict[str, str]:
        """Variables a run inside needs changed: its /tmp and its home are private ones."""
        return {"TMPDIR": "/tmp", "HOME": str(self.home)}

    def wrap(
        self,
        command: str,
        workdir: Path,
        writable: Sequence[Path] = (),
        started: Path | None = None,
    ) -> str:
        """A shell command running `command` in `workdir` inside the sandbox. `started` (in a
        `writable` folder) is made by the shell inside before `command` runs: its absence after
        the run means bubblewrap never got that far (see `JailFailed`)."""
        args = ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
        args += ["--tmpfs", "/run"]
        args += _blanked_secrets()
        if self.allow_network and Path("/run/systemd/resolve").is_dir():
            args += ["--ro-bind", "/run/systemd/resolve", "/run/systemd/resolve"]  # resolv.conf
        # Outer folders first: a folder shown inside a hidden one is mounted after it.
        for folder in sorted(self.hidden, key=lambda p: len(p.parts)):
            args += ["--tmpfs", str(folder)]
        for folder in sorted(self.shown, key=lambda p: len(p.parts)):
            # os.path: False where a user may not look (~root/.nvm for all but root), where
            # Path.exists() raises PermissionError.
            if os.path.exists(folder):
                args += ["--ro-bind", str(folder), str(folder)]
        if self.home == _SPARE_HOME:
            args += ["--dir", str(self.home)]
        for folder in self.writable:
            folder.mkdir(parents=True, exist_ok=True)
        for folder in (workdir, *self.writable, *writable):
            args += ["--bind", str(folder), str(folder)]
        if (workdir / ".git").exists():  # the shadow's own git state: tests may read, not change
            args += ["--ro-bind", str(workdir / ".git"), str(workdir / ".git")]
        args += self._ignored_binds(workdir)
        args += ["--unshare-all", *(["--share-net"] if self.allow_network else [])]
        args += ["--die-with-parent", "--new-session", "--chdir", str(workdir)]
        # exec: bwrap's parent is tui-engineer itself, so --die-with-parent follows it.
        if started is not None:
            command = f": > {shlex.quote(str(started))}; {command}"
        return "exec " + shlex.join([self.bwrap.path, *args, "--", "/bin/sh", "-c", command])

    def _ignored_binds(self, workdir: Path) -> list[str]:
        """Show the user's ignored folders inside the worktree, read-only; bubblewrap makes the
        mount points, which the shadow's git is told to ignore."""
        if self.repo_root is None or not self.ignored or workdir.resolve() == self.repo_root:
            return []
        exclude_in_shadow(workdir, self.ignored)
        args: list[str] = []
        for path in self.ignored:
            source = self.repo_root / path
            if source.exists():
                args += ["--ro-bind", str(source.resolve()), str(workdir / path)]
        return args


class JailFailed(UserError):
    """bubblewrap could not start the test command (a folder it mounts vanished, the machine
    was out of namespaces), twice: the tests did not run, so no result can be told."""

    def __init__(self, output: str) -> None:
        said = " ".join(output.split())[:500] or "no message"
        super().__init__(
            "The local sandbox could not start the test command, so the tests did not run "
            f"(twice; this says nothing about the code). bubblewrap said: {said}\n{ALTERNATIVES}"
        )


def _blanked_secrets() -> list[str]:
    """bwrap arguments hiding the root-only files this process can read (none unless root)."""
    args = []
    for name in ROOT_ONLY_SECRETS:
        if os.path.isfile(name) and os.access(name, os.R_OK):
            args += ["--ro-bind", "/dev/null", name]
    for name in ROOT_ONLY_FOLDERS:
        if os.path.isdir(name):
            args += ["--tmpfs", name]
    return args


def private_home(env: Mapping[str, str]) -> tuple[list[Path], list[Path], Path]:
    """(folders to hide, toolchain folders to show again, HOME inside) for the home folders.

    The user's HOME (and XDG config and data folders), /root and /home are hidden; HOME inside
    is the same path, now an empty private folder (so ~/.pyenv and the like keep their paths),
    unless HOME is unset or a system folder. Interpreters, PATH entries and the TOOLCHAIN_DIRS
    inside a hidden folder are shown again, read-only."""
    home = Path(env.get("HOME") or "/").resolve()
    private = [home] + [Path(env[n]) for n in ("XDG_CONFIG_HOME", "XDG_DATA_HOME") if env.get(n)]
    hidden = [Path("/root"), Path("/home")] + [p for p in private if p.resolve() not in _SYSTEM]
    homes = {home, Path("/root"), _account_home()}
    shown = [h / rel for h in homes for rel in TOOLCHAIN_DIRS]
    shown += [_venv_of(Path(p)) for p in env.get("PATH", "").split(os.pathsep) if p.startswith("/")]
    shown += [Path(sys.prefix), Path(sys.base_prefix)]
    inside = [p.resolve() for p in shown if _shown_again(p.resolve(), hidden)]
    return _outermost(hidden), _outermost(inside), home if home in hidden else _SPARE_HOME


def _venv_of(entry: Path) -> Path:
    """A PATH entry, or the whole virtualenv when it is one's bin/: its python reads pyvenv.cfg
    and site-packages beside bin/, and shown alone ran as the base interpreter without the
    venv's packages ("No module named pytest")."""
    if entry.name == "bin" and (entry.parent / "pyvenv.cfg").is_file():
        return entry.parent
    return entry


def _shown_again(path: Path, hidden: Sequence[Path]) -> bool:
    """Whether `path` (a toolchain) is inside a hidden folder and holds none: a PATH entry
    naming a home (or /home) must not show all of it again."""
    if any(h == path or _below(h, path) for h in hidden):
        return False
    return any(_below(path, h) for h in hidden)


def _below(path: Path, folder: Path) -> bool:
    return path != folder and path.is_relative_to(folder)


def _outermost(paths: Sequence[Path]) -> list[Path]:
    """`paths` without duplicates and without those inside another one (mounted with it)."""
    unique = sorted(set(paths), key=lambda p: (len(p.parts), str(p)))
    return [p for i, p in enumerate(unique) if not any(_below(p, q) for q in unique[:i])]


def _account_home() -> Path:
    """The home of the account running us (HOME may point elsewhere)."""
    try:
        return Path(pwd.getpwuid(os.getuid()).pw_dir)
    except KeyError:  # a uid with no passwd entry (some containers)
        return Path("/root")


def jail_for(
    repo_root: Path,
    git_objects: Path,
    venvs: Sequence[Path],
    *,
    network: bool,
    writable: Sequence[Path] = (),
    env: Mapping[str, str] | None = None,
    more_objects: Sequence[Path] = (),
    ignored: Sequence[str] = (),
) -> Jail:
    """The jail for tests of the repository at `repo_root` (`env`: the host's, by default).
    `more_objects`: other object folders the shadow reads (the user's submodules').
    `ignored`: paths of the repository git ignores that runs see in their worktree.
    SandboxUnavailable when no bwrap can make a sandbox here."""
    bwrap = require_bwrap()
    root = repo_root.resolve()
    env = os.environ if env is None else env
    hidden, toolchains, home = private_home(env)
    # A repository's own venv keeps its path too: its scripts' #! lines name it.
    venvs = [*venvs, *(root / p for p in ignored if (root / p / "pyvenv.cfg").is_file())]
    shown = [git_objects.resolve(), *(p.resolve() for p in more_objects), *toolchains]
    # The interpreter's venv, wherever it lives: in the repository, a hidden home, or /tmp
    # (private inside); and PATH entries under /tmp (a venv's bin made by a script).
    covered = [root, *hidden, Path("/tmp")]
    paths = [
        _venv_of(Path(p)) for p in env.get("PATH", "").split(os.pathsep) if p.startswith("/tmp/")
    ]
    for folder in [*venvs, *paths]:
        if any(_below(folder.resolve(), c) for c in covered):
            shown.append(folder.resolve())
    return Jail(
        hidden=(root, *hidden),
        shown=tuple(_outermost(shown)),
        allow_network=network,
        writable=tuple(writable),
        home=home,
        ignored=tuple(ignored),
        repo_root=root,
        bwrap=bwrap,
    )
