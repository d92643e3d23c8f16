"""Submodules in the shadow: checked out from the user's own submodule repositories.

The shadow is made with `git init` and a checkout of the baseline, which leaves every submodule
an empty folder, so tests that import a vendored library can never pass. For each submodule
(a gitlink in the baseline's tree) whose repository the user has locally, the shadow gets a
repository of its own at that path, reading the user's submodule objects through alternates
(read-only, like the shadow itself), detached at the recorded commit. Nothing is fetched: a
submodule the user never initialised (or whose recorded commit is not there) stays empty.
Its git folder lives in the shadow's `.git/modules/`, which bubblewrap keeps read-only.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

from tui_engineer.base.names import EXACT
from tui_engineer.base.safe_git import shadow_git_full_env

_GITLINK = "160000"


@dataclass(frozen=True)
class Submodule:
    name: str
    path: str  # relative to its superproject's top
    commit: str  # what the superproject records for it
    source: Path | None  # the user's git folder for it, when they have it locally


def _git(cwd: Path, *args: str, check: bool = True) -> str:
    done = subprocess.run(
        ["git", *args], cwd=cwd, capture_output=True, env=shadow_git_full_env(), **EXACT
    )
    if check and done.returncode != 0:
        raise subprocess.CalledProcessError(done.returncode, done.args, done.stdout, done.stderr)
    return done.stdout if done.returncode == 0 else ""


def _names(shadow: Path) -> dict[str, str]:
    """path → name from the checked-out .gitmodules (a plain file read, no git config run)."""
    if not (shadow / ".gitmodules").is_file():
        return {}
    out = _git(shadow, "config", "-f", ".gitmodules", "-z", "--get-regexp", r"\.path$", check=False)
    names = {}
    for entry in filter(None, out.split("\0")):
        key, _, path = entry.partition("\n")
        names[path] = key.removeprefix("submodule.").removesuffix(".path")
    return names


def user_gitdir(user_top: Path, user_gitdir_of_top: Path, name: str, path: str) -> Path | None:
    """The user's git folder for submodule `name` at `path`: absorbed under `modules/`, or the
    submodule's own `.git` folder (or the folder its `.git` file names)."""
    absorbed = user_gitdir_of_top / "modules" / name
    if (absorbed / "objects").is_dir():
        return absorbed
    dot = user_top / path / ".git"
    if dot.is_dir() and (dot / "objects").is_dir():
        return dot
    if dot.is_file():
        text = dot.read_text(errors="replace").strip()
        if text.startswith("gitdir:"):
            target = (dot.parent / text.removeprefix("gitdir:").strip()).resolve()
            if (target / "objects").is_dir():
                return target
    return None


def submodules(shadow: Path, commit: str, user_top: Path, user_git: Path) -> list[Submodule]:
    """The submodules `commit` records, with the user's local repository for each."""
    # Their modes alone first: 7 bytes an entry, not a path each (4 MB read at 40,000 files,
    # 0.2-0.3 s while a session's start loads its modules). Git before 2.36 has no --format.
    modes = _git(shadow, "ls-tree", "-r", "-z", "--format=%(objectmode)", commit, check=False)
    if modes and _GITLINK not in modes:
        return []
    out = _git(shadow, "ls-tree", "-r", "-z", commit, check=False)
    if f"{_GITLINK} commit " not in out:  # none: 40,000 entries not split one by one
        return []
    names = _names(shadow)
    found = []
    for entry in filter(None, out.split("\0")):
        meta, _, path = entry.partition("\t")
        mode, _, sha = meta.split(" ")
        if mode == _GITLINK:
            name = names.get(path, path)
            if name.startswith("/") or ".." in Path(name).parts:
                name = path  # git refuses such names too; never a folder outside modules/
            found.append(Submodule(name, path, sha, user_gitdir(user_top, user_git, name, path)))
    return found


def check_out_submodules(shadow: Path, commit: str, user_top: Path, user_git: Path) -> list[str]:
    """Fill the shadow's submodule folders (recursively); returns the paths left empty."""
    empty = []
    for sub in submodules(shadow, commit, user_top, user_git):
        if sub.source is None or not _fill(shadow, sub):
            empty.append(sub.path)
            continue
        nested = check_out_submodules(
            shadow / sub.path, sub.commit, user_top / sub.path, sub.source
        )
        empty += [f"{sub.path}/{p}" for p in nested]
    return empty


def _fill(shadow: Path, sub: Submodule) -> bool:
    """A repository of its own at the submodule's path, detached at its commit; False when the
    commit is not in the user's submodule repository."""
    assert sub.source is not None
    gitdir = Path(_git(shadow, "rev-parse", "--absolute-git-dir").strip()) / "modules" / sub.name
    worktree = shadow / sub.path
    worktree.mkdir(parents=True, exist_ok=True)
    gitdir.parent.mkdir(parents=True, exist_ok=True)  # git init makes the last folder only
    _git(worktree, "init", "-q", "--template=", f"--separate-git-dir={gitdir}", ".")
    info = gitdir / "objects" / "info"
    info.mkdir(parents=True, exist_ok=True)
    (info / "alternates").write_text(f"{(sub.source / 'objects').resolve()}\n")
    if not _git(worktree, "cat-file", "-t", sub.commit, check=False).strip() == "commit":
        return False
    _git(worktree, "update-ref", "--no-deref", "HEAD", sub.commit)
    _git(worktree, "reset", "-q", "--hard", sub.commit)
    return True


def local_submodule_objects(user_top: Path, user_git: Path) -> list[Path]:
    """The object folders of the user's local submodule repositories (the shadow's submodules
    read them; a sandbox that hides the user's repository shows these, read-only)."""
    found = [p for p in (user_git / "modules").glob("**/objects") if (p.parent / "HEAD").is_file()]
    names = _names(user_top)
    for path, name in names.items():
        source = user_gitdir(user_top, user_git, name, path)
        if source is not None:
            found.append(source / "objects")
    return sorted(set(found))


def empty_submodules_notice(paths: tuple[str, ...]) -> str | None:
    """A sentence naming submodules the tests will find empty, else None."""
    if not paths:
        return None
    names = ", ".join(paths)
    return (
        f"Submodule{'s' if len(paths) > 1 else ''} {names} not checked out in your repository, "
        "so empty where the tests run (nothing is fetched). If tests need them, quit and run "
        "`git submodule update --init --recursive` first."
    )
