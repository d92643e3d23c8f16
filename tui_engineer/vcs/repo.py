"""The user's repository: finding it and reading its state (branch, HEAD, uncommitted paths).

Everything here runs real git through gitpython (`repo.git.<cmd>`); the functions are synchronous
and meant to be called from a worker thread.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import git

from tui_engineer.base.disk import remember_folder
from tui_engineer.base.errors import UserError


class NotARepo(UserError):
    """The folder is not inside a git repository."""

    def __init__(self, path: Path) -> None:
        super().__init__(
            f"{path} is not inside a git repository. Run 'git init' there, "
            "or 'tui-engineer --init' to create one.",
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
        root = Path(repo.working_tree_dir).resolve()
    remember_folder(root)  # a full disk whose error names no file is looked for here first
    return root


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


# Fields before the path in `git status --porcelain=v2` entries: ordinary, rename/copy, unmerged.
_V2_FIELDS = {"1": 8, "2": 9, "u": 10}


def _parse_status_v2(out: str) -> tuple[dict[str, str], list[str], list[str], list[str]]:
    """`git status --porcelain=v2 -z --branch`: the `# branch.*` headers, and the paths
    staged, modified (in the working tree) and untracked."""
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


def head_state(repo: git.Repo) -> RepoState:
    """Where HEAD is and whether a merge, rebase (...) is in progress, without the uncommitted
    paths: no `git status`, which reads every file's stat and every folder (0.2-0.3 s at 40,000
    files), for callers that need no more."""
    return RepoState(
        root=Path(repo.working_tree_dir or ".").resolve(),
        branch=_branch(repo),
        head=head_sha(repo),
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


def uncommitted(root: Path, paths: Iterable[str]) -> list[str]:
    """Those of `paths` whose file differs from HEAD (edited, new or deleted, not committed).
    Files our own commit just wrote are not among them: they equal HEAD."""
    paths = list(paths)
    if not paths:
        return []
    with open_repo(root) as repo:
        out = repo.git.status(
            "--porcelain=v2", "-z", "--untracked-files=all", "--", *literal(paths),
            strip_newline_in_stdout=False,
        )  # fmt: skip
    _, staged, modified, untracked = _parse_status_v2(out)
    return sorted(set(staged) | set(modified) | set(untracked))
