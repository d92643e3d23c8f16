"""Building an accepted step's commit as objects, before anything in the user's tree changes.

The commit's tree is the user's HEAD tree plus the step's files, staged in a temporary index
(GIT_INDEX_FILE in a scratch folder: the user's index and its index.lock are never used) when a
hook is given one (else tree_edit.py builds the same tree folder by folder). The
user's hooks run the way `git commit` runs them, through `git hook run` (so core.hooksPath and
friends apply): pre-commit and prepare-commit-msg/commit-msg with GIT_INDEX_FILE pointing at the
temporary index (what they see staged is exactly the commit), post-commit once the commit is in
place. A hook that `git add`s into the index it is given changes the commit, as with git. What a
hook does *not* see is the step's files in the working tree: they are written only after the
branch has moved. A hook that lints working files rather than the index therefore checks the
user's files as they were; hooks that read the index (`git diff --cached`, pre-commit.com's
stash-and-check) see the step.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

import git

from tui_engineer.vcs.plumbing import git_text, raise_for, run_git
from tui_engineer.vcs.repo import GitRefused, git_output

NOTHING_TO_COMMIT = "The step only changes files git does not track; nothing to commit."
TRAILER_KEY = "Assisted-by"
TRAILER_TOOL = "tui-engineer"


def trailer(model: str | None) -> str:
    return f"{TRAILER_KEY}: {TRAILER_TOOL}" + (f" (model: {model})" if model else "")


def compose_message(title: str, body: str, model: str | None) -> str:
    parts = [title.strip(), body.strip(), trailer(model)]
    return "\n\n".join(p for p in parts if p) + "\n"


@dataclass(frozen=True)
class Entry:
    """One path of the step in the commit: its mode and blob, or removed (sha None)."""

    path: str
    mode: str = ""
    sha: str | None = None


def hash_shadow_file(root: Path, shadow: Path, rel: str) -> Entry:
    """Write the shadow's version of `rel` into the user's object store (filters as for `rel`)."""
    source = shadow / rel
    if source.is_symlink():
        target = os.fsencode(os.readlink(source))
        sha = run_git(root, "hash-object", "-w", "--stdin", data=target).stdout.decode().strip()
        return Entry(rel, "120000", sha)
    if source.is_file():
        sha = git_text(root, "hash-object", "-w", f"--path={rel}", "--", str(source))
        return Entry(rel, "100755" if source.stat().st_mode & 0o100 else "100644", sha)
    return Entry(rel)


def stage(root: Path, index: Path, head: str | None, entries: list[Entry]) -> None:
    """The temporary index: HEAD's tree with the step's entries put in (or taken out)."""
    env = {"GIT_INDEX_FILE": str(index)}
    if head:
        run_git(root, "read-tree", head, env=env)
    present = b"".join(
        f"{e.mode} {e.sha}\t{e.path}".encode("utf-8", "surrogateescape") + b"\0"
        for e in entries
        if e.sha
    )
    if present:
        run_git(root, "update-index", "-z", "--index-info", env=env, data=present)
    removed = b"".join(
        e.path.encode("utf-8", "surrogateescape") + b"\0" for e in entries if not e.sha
    )
    if removed:
        run_git(root, "update-index", "-z", "--force-remove", "--stdin", env=env, data=removed)


def run_hook(root: Path, name: str, *args: str, index: Path | None = None) -> None:
    """Run one of the user's hooks as git would; a refusal raises GitRefused naming the hook,
    with what it printed."""
    env = {"GIT_EDITOR": ":"}
    if index is not None:
        env["GIT_INDEX_FILE"] = str(index)
    done = run_git(root, "hook", "run", "--ignore-missing", name, "--", *args, env=env, check=False)
    try:
        if done.returncode != 0 and b"not a git command" in done.stderr:
            _run_hook_file(root, name, args, env)  # git before 2.36 has no `git hook run`
        else:
            raise_for(done)
    except git.GitCommandError as err:
        raise GitRefused(
            f"Your {name} hook refused the commit (exit {err.status}):\n{git_output(err)}"
        ) from None


def _run_hook_file(root: Path, name: str, args: tuple[str, ...], env: dict[str, str]) -> None:
    path = Path(git_text(root, "rev-parse", "--git-path", f"hooks/{name}"))  # core.hooksPath too
    path = path if path.is_absolute() else root / path
    if not (path.is_file() and os.access(path, os.X_OK)):
        return
    done = subprocess.run(
        [str(path), *args], cwd=root, env={**os.environ, **env}, capture_output=True
    )
    raise_for(done)


def checked_message(root: Path, gitdir: Path, message: str, index: Path | None) -> str:
    """The message after prepare-commit-msg and commit-msg (which may edit or refuse it)."""
    path = gitdir / "COMMIT_EDITMSG"  # where git keeps it, and where hooks expect it
    path.write_text(message, encoding="utf-8")
    run_hook(root, "prepare-commit-msg", str(path), "message", index=index)
    run_hook(root, "commit-msg", str(path), index=index)
    edited = path.read_bytes()
    cleaned = run_git(root, "stripspace", data=edited).stdout.decode("utf-8", "replace")
    if not cleaned.strip():
        raise GitRefused("A commit-msg hook left the commit message empty; nothing was committed.")
    return cleaned


def make_commit(root: Path, tree: str, head: str | None, message: str, *, sign: bool) -> str:
    """Write the commit of `tree` (the user's identity; signed when `sign`, the user's
    commit.gpgSign); return it."""
    if head and tree == git_text(root, "rev-parse", f"{head}^{{tree}}"):
        raise GitRefused(NOTHING_TO_COMMIT)
    args = ["commit-tree", tree, *(["-p", head] if head else [])]
    if sign:
        args.append("-S")
    done = run_git(root, *args, "-F", "-", data=message.encode("utf-8"), check=False)
    if done.returncode != 0 and sign:
        said = done.stderr.decode(errors="replace").strip()
        raise GitRefused(
            f"git could not sign the commit (commit.gpgSign is on for you):\n{said}\n"
            "Make signing work (gpg and user.signingKey), or turn it off for this repository: "
            "git config commit.gpgSign false"
        )
    raise_for(done)
    return done.stdout.decode().strip()
