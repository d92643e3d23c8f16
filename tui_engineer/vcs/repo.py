"""The user's repository: finding it, reading its state, and saving uncommitted work at start.

Everything here runs real git through gitpython (`repo.git.<cmd>`); the functions are synchronous
and meant to be called from a worker thread.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Literal

import git

from tui_engineer.errors import UserError

WIP_MESSAGE = "WIP: saved by tui-engineer before session"
# Commits that only live in the shadow worktree (baselines) are bookkeeping, not the user's work:
# they get a fixed identity so they work even when the user has none configured.
INTERNAL_IDENTITY = {
    "GIT_AUTHOR_NAME": "tui-engineer",
    "GIT_AUTHOR_EMAIL": "tui-engineer@localhost",
    "GIT_COMMITTER_NAME": "tui-engineer",
    "GIT_COMMITTER_EMAIL": "tui-engineer@localhost",
}
DirtyChoice = Literal["wip", "stash", "include"]


class NotARepo(UserError):
    """The folder is not inside a git repository."""

    def __init__(self, path: Path) -> None:
        super().__init__(
            f"{path} is not inside a git repository. Run 'git init' there, "
            "or 'tui-engineer --init' to create one.",
            exit_code=2,
        )


class DirtyTree(UserError):
    """Uncommitted changes where the caller (headless) may not build on them."""

    @classmethod
    def for_files(cls, root: Path, files: Sequence[str]) -> DirtyTree:
        shown = "\n  ".join(files[:10])
        more = f"\n  … and {len(files) - 10} more" if len(files) > 10 else ""
        return cls(
            f"{root} has uncommitted changes:\n  {shown}{more}\n"
            "Commit or stash them yourself, or pass --allow-dirty to build on top of them "
            "(they stay uncommitted; only each accepted step is committed).",
            exit_code=2,
        )


class GitRefused(UserError):
    """Git, or this layer protecting the user's work, refused an operation; the message says why."""


@dataclass
class RepoState:
    root: Path
    branch: str | None  # None = detached HEAD
    head: str | None  # None = no commits yet
    staged: list[str] = field(default_factory=list)
    modified: list[str] = field(default_factory=list)
    untracked: list[str] = field(default_factory=list)  # never includes ignored files
    in_progress: str | None = None  # "merge", "rebase", "cherry-pick", "revert", "am", "bisect"

    @property
    def dirty(self) -> bool:
        return bool(self.staged or self.modified or self.untracked)

    @property
    def changed_files(self) -> list[str]:
        """Every path with uncommitted changes, once, in a stable order."""
        return sorted({*self.staged, *self.modified, *self.untracked})


@contextmanager
def open_repo(root: Path) -> Iterator[git.Repo]:
    """A gitpython Repo for a known root, closed afterwards (it holds helper processes)."""
    repo = git.Repo(root)
    try:
        yield repo
    finally:
        repo.close()


def git_output(err: git.GitCommandError) -> str:
    """What git (and any hook it ran) printed, for a message the user reads."""
    parts = [str(p).strip() for p in (err.stdout, err.stderr) if p and str(p).strip()]
    text = "\n".join(parts)
    for prefix in ("stdout: ", "stderr: "):  # gitpython quotes streams as  stderr: '...'
        text = text.replace(prefix, "")
    return text.strip().strip("'").strip() or f"git exited with status {err.status}"


def literal(paths: Iterable[str]) -> list[str]:
    """Pathspecs that match exactly these paths (a file named `*.py` is not a glob)."""
    return [f":(literal){p}" for p in paths]


def find_repo_root(start: Path) -> Path:
    """The top of the working tree containing `start` (searching upward)."""
    start = Path(start).expanduser().resolve()
    if not start.exists():
        raise GitRefused(f"{start} does not exist.", exit_code=2)
    try:
        repo = git.Repo(start, search_parent_directories=True)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        raise NotARepo(start) from None
    with repo:
        if repo.bare or repo.working_tree_dir is None:
            raise GitRefused(
                f"{start} is inside a bare git repository (it has no working tree to edit). "
                "Run tui-engineer in a clone of it.",
                exit_code=2,
            )
        return Path(repo.working_tree_dir).resolve()


def init_repo(path: Path) -> Path:
    """Create a git repository at `path` (no commits); an existing enclosing repo is reused."""
    path = Path(path).expanduser().resolve()
    path.mkdir(parents=True, exist_ok=True)
    try:
        return find_repo_root(path)
    except NotARepo:
        git.Repo.init(path).close()
        return path


def head_sha(repo: git.Repo) -> str | None:
    """HEAD's commit, or None in a repository with no commits yet."""
    out = repo.git.rev_parse("-q", "--verify", "HEAD^{commit}", with_exceptions=False)
    return out.strip() or None


def _branch(repo: git.Repo) -> str | None:
    out = repo.git.symbolic_ref("-q", "--short", "HEAD", with_exceptions=False)
    return out.strip() or None


def _in_progress(git_dir: Path) -> str | None:
    markers = [
        ("rebase-merge", "rebase"),
        ("rebase-apply/applying", "am"),
        ("rebase-apply", "rebase"),
        ("MERGE_HEAD", "merge"),
        ("CHERRY_PICK_HEAD", "cherry-pick"),
        ("REVERT_HEAD", "revert"),
        ("BISECT_LOG", "bisect"),
    ]
    return next((name for marker, name in markers if (git_dir / marker).exists()), None)


def _parse_status(out: str) -> tuple[list[str], list[str], list[str]]:
    staged: list[str] = []
    modified: list[str] = []
    untracked: list[str] = []
    fields = out.split("\0")
    i = 0
    while i < len(fields):
        entry = fields[i]
        i += 1
        if len(entry) < 4:
            continue
        x, y, path = entry[0], entry[1], entry[3:]
        if x in "RC":  # a rename/copy is followed by its source path
            i += 1
        if x == "?":
            untracked.append(path)
            continue
        if x != " ":
            staged.append(path)
        if y != " ":
            modified.append(path)
    return staged, modified, untracked


# Fields before the path in `git status --porcelain=v2` entries: ordinary, rename/copy, unmerged.
_V2_FIELDS = {"1": 8, "2": 9, "u": 10}


def _parse_status_v2(out: str) -> tuple[dict[str, str], list[str], list[str], list[str]]:
    """`git status --porcelain=v2 -z --branch`: the `# branch.*` headers, and the paths
    staged, modified (in the working tree) and untracked, as `_parse_status` gives them."""
    headers: dict[str, str] = {}
    staged: list[str] = []
    modified: list[str] = []
    untracked: list[str] = []
    fields = out.split("\0")
    i = 0
    while i < len(fields):
        entry = fields[i]
        i += 1
        kind = entry[:1]
        if kind == "#":
            key, _, value = entry[2:].partition(" ")
            headers[key] = value
        elif kind == "?":
            untracked.append(entry[2:])
        elif kind in _V2_FIELDS:
            parts = entry.split(" ", _V2_FIELDS[kind])
            xy, path = parts[1], parts[-1]
            if kind == "2":
                i += 1  # followed by the rename's or copy's source path
            if xy[0] != ".":
                staged.append(path)
            if xy[1] != ".":
                modified.append(path)
    return headers, staged, modified, untracked


def read_state(repo: git.Repo) -> RepoState:
    """Branch, HEAD and uncommitted paths from one `git status` (porcelain v2 names the branch
    and HEAD's commit itself)."""
    status = repo.git.status(
        "--porcelain=v2", "-z", "--branch", "--no-ahead-behind", "--untracked-files=all",
        strip_newline_in_stdout=False,
    )  # fmt: skip
    headers, staged, modified, untracked = _parse_status_v2(status)
    oid = headers.get("branch.oid", "(initial)")
    branch: str | None = headers.get("branch.head", "(detached)")
    if branch == "(detached)":  # also a valid branch name: git itself tells them apart
        branch = _branch(repo)
    return RepoState(
        root=Path(repo.working_tree_dir or ".").resolve(),
        branch=branch,
        head=None if oid == "(initial)" else oid,
        staged=staged,
        modified=modified,
        untracked=untracked,
        in_progress=_in_progress(Path(repo.git_dir)),
    )


def repo_state(root: Path) -> RepoState:
    with open_repo(root) as repo:
        return read_state(repo)


def detached_head_notice(root: Path, state: RepoState | None = None) -> str | None:
    """A sentence naming a detached HEAD before anything is committed on it (accepted steps then
    belong to no branch, and a later `git switch` leaves them behind), else None. `state`: the
    repository's state if the caller just read it."""
    state = state or repo_state(root)
    if state.branch is not None or state.head is None:
        return None
    return (
        f"HEAD is detached at {state.head[:7]}: accepted steps will be committed on it, not on "
        "a branch. To keep them on one, quit and run `git switch -c NAME` first."
    )


def refuse_in_progress(state: RepoState, doing: str) -> None:
    if state.in_progress:
        way_out = "git bisect reset" if state.in_progress == "bisect" else "--abort"
        if way_out == "--abort":
            way_out = f"git {state.in_progress} --abort"
        raise GitRefused(
            f"A {state.in_progress} is in progress in {state.root}, so tui-engineer will not "
            f"{doing}. Finish it or abort it ({way_out}) first."
        )


# What committing needs from git's config: who commits, and whether commits are signed.
_COMMIT_CONFIG = r"^(user|author|committer)\.(name|email)$|^commit\.gpgsign$"


def commit_config(repo: git.Repo) -> dict[str, str | None]:
    """The identity keys (user/author/committer .name/.email) and commit.gpgsign as git sees
    them (every config file, includes, GIT_CONFIG_*), read by one git process. Keys are
    lowercase; the last value wins, as with `git config --get`; None is a key set without a
    value (`[commit] gpgSign`, which git reads as true)."""
    out = repo.git.config(
        "-z", "--get-regexp", _COMMIT_CONFIG, with_exceptions=False, strip_newline_in_stdout=False
    )
    found: dict[str, str | None] = {}
    for item in filter(None, out.split("\0")):
        key, newline, value = item.partition("\n")
        found[key.lower()] = value if newline else None
    return found


def config_bool(value: str | None) -> bool:
    """git's reading of a boolean setting (`--type=bool`); a value git rejects counts as false."""
    if value is None:
        return True
    word = value.strip().lower()
    if word in ("true", "yes", "on"):
        return True
    try:
        return int(word) != 0
    except ValueError:
        return False


def require_identity(repo: git.Repo, config: dict[str, str | None] | None = None) -> None:
    """Refuse (without writing any config) when git has no name/email to commit with.

    git would otherwise guess one from the login and host name; commits with such an identity
    are rarely what the user wants, so we ask for a deliberate one instead. `config`: what
    `commit_config` returned, if the caller has it.
    """
    settings = commit_config(repo) if config is None else config

    def get(key: str) -> str:
        return (settings.get(key) or "").strip()

    for role in ("author", "committer"):
        env = role.upper()
        name = os.environ.get(f"GIT_{env}_NAME") or get(f"{role}.name")
        email = os.environ.get(f"GIT_{env}_EMAIL") or get(f"{role}.email")
        name = name or get("user.name")
        email = email or get("user.email") or os.environ.get("EMAIL", "")
        if not (name.strip() and email.strip()):
            raise GitRefused(
                "git does not know who you are, so tui-engineer cannot commit for you. Run:\n"
                '  git config --global user.name "Your Name"\n'
                '  git config --global user.email "you@example.com"\n'
                "(or without --global to set it for this repository only), then try again."
            )


def snapshot_commit(repo: git.Repo, *, include_dirty: bool, state: RepoState | None = None) -> str:
    """A commit to start a shadow worktree from: HEAD, plus the user's uncommitted changes
    (untracked non-ignored files too) when `include_dirty`.

    The snapshot is built in a temporary index, so the user's index and files are untouched; the
    commit is on no branch (the shadow worktree's detached HEAD is what keeps it alive).
    With no commits yet, the base is a parentless commit (empty, or holding the user's files).
    `state`: the repository's state if the caller just read it (its HEAD is used).
    """
    head = state.head if state is not None else head_sha(repo)
    if head and not include_dirty:
        return head
    with tempfile.TemporaryDirectory(prefix="tui-engineer-index-") as tmp:
        env = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
        real_index = Path(repo.git_dir) / "index"
        if include_dirty and real_index.exists():
            shutil.copyfile(real_index, env["GIT_INDEX_FILE"])  # its stat cache makes add fast
        elif head:
            repo.git.read_tree(head, env=env)
        if include_dirty:
            repo.git.add("-A", env=env)
        tree = repo.git.write_tree(env=env)
    if head and tree == repo.git.rev_parse(f"{head}^{{tree}}"):
        return head  # nothing uncommitted after all
    parents = ["-p", head] if head else []
    message = "tui-engineer baseline: HEAD plus uncommitted changes"
    if not head:
        message = "tui-engineer baseline: no commits yet"
    return repo.git.commit_tree(
        tree, *parents, "--no-gpg-sign", "-m", message, env=INTERNAL_IDENTITY
    ).strip()


@contextmanager
def index_guard(repo: git.Repo) -> Iterator[None]:
    """Put the user's index back exactly as it was if the body fails (e.g. a hook refused)."""
    index = Path(repo.git_dir) / "index"
    saved = index.read_bytes() if index.exists() else None
    try:
        yield
    except BaseException:
        if saved is None:
            index.unlink(missing_ok=True)
        else:
            index.write_bytes(saved)
        raise


def _save_as_wip(repo: git.Repo) -> str:
    require_identity(repo)
    first = head_sha(repo) is None
    try:
        with index_guard(repo):
            repo.git.add("-A")
            repo.git.commit("-q", "-m", WIP_MESSAGE)
    except git.GitCommandError as err:
        raise GitRefused(
            f"Could not commit your changes as WIP; nothing was changed.\n{git_output(err)}"
        ) from None
    sha = head_sha(repo) or ""
    undo = (
        "git update-ref -d HEAD" if first else "git reset --soft HEAD~1"
    )  # keeps the files, drops the commit
    return (
        f"Committed your uncommitted changes as '{WIP_MESSAGE}' ({sha[:8]}). "
        f"To turn it back into uncommitted changes later: {undo}"
    )


def _stash(repo: git.Repo) -> str:
    if head_sha(repo) is None:
        raise GitRefused(
            "git cannot stash in a repository with no commits yet. "
            "Choose 'commit as WIP' or 'include' instead."
        )
    label = f"tui-engineer: saved before session {datetime.now():%Y-%m-%d %H:%M:%S}"
    try:
        repo.git.stash("push", "--include-untracked", "-m", label)
    except git.GitCommandError as err:
        raise GitRefused(
            f"Could not stash your changes; nothing was changed.\n{git_output(err)}"
        ) from None
    return (
        f"Stashed your uncommitted changes as '{label}'. Get them back with: git stash pop "
        "(if you stash more in between, find it with git stash list)."
    )


def handle_dirty(root: Path, choice: DirtyChoice) -> str:
    """Deal with uncommitted changes before a session, as the user chose; returns what was done.

    Nothing is ever discarded: "wip" commits everything on the current branch, "stash" stashes it
    (untracked files included), "include" leaves the tree alone (the shadow starts from it).
    """
    with open_repo(root) as repo:
        state = read_state(repo)
        if not state.dirty:
            return "Nothing to save: the working tree has no uncommitted changes."
        refuse_in_progress(state, "save your changes")
        if choice == "wip":
            return _save_as_wip(repo)
        if choice == "stash":
            return _stash(repo)
        if choice == "include":
            return (
                "Your uncommitted changes stay as they are, uncommitted; each step builds on "
                "them. A step that edits one of those files commits that whole file."
            )
    raise ValueError(f"unknown choice {choice!r}: expected 'wip', 'stash' or 'include'")


def uncommitted(root: Path, paths: Iterable[str]) -> list[str]:
    """Those of `paths` whose file differs from HEAD (edited, new or deleted, not committed).
    Files our own commit just wrote are not among them: they equal HEAD."""
    paths = list(paths)
    if not paths:
        return []
    with open_repo(root) as repo:
        out = repo.git.status(
            "--porcelain=v1", "-z", "--untracked-files=all", "--", *literal(paths),
            strip_newline_in_stdout=False,
        )  # fmt: skip
    staged, modified, untracked = _parse_status(out)
    return sorted(set(staged) | set(modified) | set(untracked))
