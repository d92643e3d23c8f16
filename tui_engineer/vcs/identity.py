"""Who commits: the identity and signing settings git would use, read once, and the fixed
identity of our own bookkeeping commits."""

from __future__ import annotations

import os

import git

from tui_engineer.vcs.repo import GitRefused

# Commits that only live in the shadow worktree (baselines) are bookkeeping, not the user's work:
# they get a fixed identity so they work even when the user has none configured.
INTERNAL_IDENTITY = {
    "GIT_AUTHOR_NAME": "tui-engineer",
    "GIT_AUTHOR_EMAIL": "tui-engineer@localhost",
    "GIT_COMMITTER_NAME": "tui-engineer",
    "GIT_COMMITTER_EMAIL": "tui-engineer@localhost",
}


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
