"""Hostile edits: each is refused with a message naming the problem, and nothing on disk changes —
not the repo (git's files included) and not a sentinel folder next to it."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.conftest import GIT_IDENTITY, SAMPLE_FILES, write_files
from tui_engineer.edits import (
    ApplyFailed,
    DeleteFile,
    Edit,
    EditError,
    RenameFile,
    ReplyTooLarge,
    SearchReplace,
    UnsafePath,
    WriteFile,
    apply_edits,
    parse_edits,
    resolve_safe_path,
)

# Every hostile reply starts with this valid edit: it must not be written either.
GOOD = SearchReplace("calc.py", "    return a + b\n", "    return a - b\n")


def block(path: str, search: str = "", replace: str = "pwned\n") -> str:
    return f"{path}\n```\n<<<<<<< SEARCH\n{search}=======\n{replace}>>>>>>> REPLACE\n```\n"


GOOD_REPLY = block("calc.py", GOOD.search, GOOD.replace)


@dataclass
class Case:
    edits: str | list[Edit]  # a reply (parsed for real) or edits built directly
    error: type[EditError]
    phrases: list[str]
    setup: Callable[[Path, Path], None] = field(default=lambda repo, outside: None)


def _link(name: str, target: Callable[[Path, Path], Path]) -> Callable[[Path, Path], None]:
    def setup(repo: Path, outside: Path) -> None:
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).symlink_to(target(repo, outside))

    return setup


def _binary(repo: Path, outside: Path) -> None:
    (repo / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR" + bytes(range(256)))


def _latin1(repo: Path, outside: Path) -> None:
    (repo / "legacy.txt").write_bytes("café = 1\n".encode("latin-1"))


CASES = {
    "dotdot": Case(GOOD_REPLY + block("../x"), UnsafePath, ["`../x`", "contains `..`"]),
    "dotdot deep": Case(GOOD_REPLY + block("a/../../x"), UnsafePath, ["`a/../../x`", "`..`"]),
    "absolute posix": Case(GOOD_REPLY + block("/etc/x"), UnsafePath, ["`/etc/x`", "absolute"]),
    "absolute windows": Case(
        [GOOD, WriteFile("C:\\x", "x\n")], UnsafePath, ["`C:\\x`", "absolute"]
    ),
    "windows drive slash": Case(GOOD_REPLY + block("C:/x"), UnsafePath, ["absolute"]),
    "backslash": Case([GOOD, WriteFile("..\\x", "x\n")], UnsafePath, ["backslash"]),
    "home": Case(GOOD_REPLY + block("~/x"), UnsafePath, ["`~/x`", "`~`"]),
    "nul byte": Case([GOOD, WriteFile("a\0b", "x\n")], UnsafePath, ["NUL byte"]),
    "symlink file outside": Case(
        GOOD_REPLY + "link.txt\n```\n<<<<<<< FILE\npwned\n>>>>>>> FILE\n```\n",
        UnsafePath,
        ["`link.txt`", "outside the repository"],
        _link("link.txt", lambda repo, outside: outside / "sentinel.txt"),
    ),
    "symlink dir outside": Case(
        GOOD_REPLY + block("out/new.txt"),
        UnsafePath,
        ["`out/new.txt`", "outside the repository"],
        _link("out", lambda repo, outside: outside),
    ),
    "delete through symlinked dir": Case(
        [GOOD, DeleteFile("out/sentinel.txt")],
        UnsafePath,
        ["outside the repository"],
        _link("out", lambda repo, outside: outside),
    ),
    "dangling symlink outside": Case(
        GOOD_REPLY + block("ghost.txt"),
        UnsafePath,
        ["`ghost.txt`", "outside the repository"],
        _link("ghost.txt", lambda repo, outside: outside / "not-yet.txt"),
    ),
    "symlink into .git": Case(
        GOOD_REPLY + block("gitdir/config", "[core]\n", "[core]\n\thooksPath = /tmp\n"),
        UnsafePath,
        ["`gitdir/config`", "into `.git`"],
        _link("gitdir", lambda repo, outside: repo / ".git"),
    ),
    "symlink loop": Case(
        GOOD_REPLY + block("loop/x"),
        UnsafePath,
        ["`loop/x`", "symlink loop"],
        _link("loop", lambda repo, outside: repo / "loop"),
    ),
    "git config": Case(
        GOOD_REPLY + block(".git/config", "[core]\n", "[core]\n\tfsmonitor = evil\n"),
        UnsafePath,
        ["`.git/config`", "`.git`, git's own files"],
    ),
    "git hook any case": Case(
        GOOD_REPLY + block(".GIT/hooks/pre-commit"), UnsafePath, ["`.GIT/hooks/pre-commit`", ".git"]
    ),
    "git itself": Case([GOOD, DeleteFile(".git")], UnsafePath, ["`.git`"]),
    "nested worktree .git file": Case(GOOD_REPLY + block("sub/.git"), UnsafePath, [".git"]),
    "git with trailing dot": Case(GOOD_REPLY + block(".git./config"), UnsafePath, [".git"]),
    "binary search/replace": Case(
        [GOOD, SearchReplace("logo.png", "PNG\n", "JPG\n")],
        ApplyFailed,
        ["logo.png", "binary"],
        _binary,
    ),
    "binary overwrite": Case(
        GOOD_REPLY + "logo.png\n```\n<<<<<<< FILE\ntext now\n>>>>>>> FILE\n```\n",
        ApplyFailed,
        ["logo.png", "binary"],
        _binary,
    ),
    "not utf-8": Case(
        [GOOD, SearchReplace("legacy.txt", "café = 1\n", "cafe = 2\n")],
        ApplyFailed,
        ["legacy.txt", "not UTF-8"],
        _latin1,
    ),
    "nul in new content": Case([GOOD, WriteFile("n.bin", "a\0b\n")], ApplyFailed, ["NUL"]),
    "huge reply": Case(
        GOOD_REPLY + block("big.py", "", "x = 1\n" * 100_000), ReplyTooLarge, ["byte limit"]
    ),
    "search matching nothing": Case(
        GOOD_REPLY + block("calc.py", "def mul(a, b):\n", "def mul(a, b, c):\n"),
        ApplyFailed,
        ["Block 2 (SEARCH/REPLACE calc.py)", "not found"],
    ),
    "rename to dotdot": Case(
        GOOD_REPLY + "<<<<<<< RENAME calc.py -> ../x\n", UnsafePath, ["Block 2", "`../x`", "`..`"]
    ),
    "rename into .git": Case(
        GOOD_REPLY + "<<<<<<< RENAME calc.py -> .git/hooks/post-checkout\n", UnsafePath, [".git"]
    ),
    "rename from outside via symlink": Case(
        GOOD_REPLY + "<<<<<<< RENAME out/sentinel.txt -> stolen.txt\n",
        UnsafePath,
        ["`out/sentinel.txt`", "outside"],
        _link("out", lambda repo, outside: outside),
    ),
}


@pytest.fixture(scope="module")
def template_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One real committed repo, copied per test: the table stays fast."""
    root = tmp_path_factory.mktemp("template") / "repo"
    root.mkdir()
    env = {
        **os.environ,
        **GIT_IDENTITY,
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
    }
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "initial"]):
        if args[0] == "add":
            write_files(root, SAMPLE_FILES)
        subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True)
    return root


def snapshot(top: Path) -> dict[str, str]:
    """Every file (hashed), symlink (target) and folder under `top`."""
    seen: dict[str, str] = {}
    for folder, dirs, files in os.walk(top):
        for name in dirs + files:
            path = Path(folder, name)
            key = path.relative_to(top).as_posix()
            if path.is_symlink():
                seen[key] = "link -> " + os.readlink(path)
            elif path.is_dir():
                seen[key] = "dir"
            else:
                seen[key] = hashlib.sha256(path.read_bytes()).hexdigest()
    return seen


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_hostile_edit_is_refused_and_nothing_changes(
    case: Case, template_repo: Path, tmp_path: Path
) -> None:
    repo = tmp_path / "repo"
    shutil.copytree(template_repo, repo, symlinks=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "sentinel.txt").write_text("must stay as is\n")
    case.setup(repo, outside)
    before = snapshot(tmp_path)

    with pytest.raises(case.error) as caught:
        edits = parse_edits(case.edits) if isinstance(case.edits, str) else case.edits
        apply_edits(repo, edits)

    for phrase in case.phrases:
        assert phrase in caught.value.feedback
    assert snapshot(tmp_path) == before
    assert (outside / "sentinel.txt").read_text() == "must stay as is\n"


SAFE = ["calc.py", "./calc.py", "a/./b.py", "new/dir/file.py", ".github/workflows/ci.yml", "x.git"]


@pytest.mark.parametrize("rel", SAFE)
def test_ordinary_paths_resolve_inside_the_repo(rel: str, make_repo: Callable[..., Path]) -> None:
    repo = make_repo()
    resolved = resolve_safe_path(repo, rel)
    assert resolved.is_relative_to(repo.resolve())


def test_symlink_inside_the_repo_is_followed_to_its_target(make_repo: Callable[..., Path]) -> None:
    repo = make_repo()
    (repo / "alias.py").symlink_to("calc.py")
    result = apply_edits(repo, [SearchReplace("alias.py", GOOD.search, GOOD.replace)])
    assert result.changed == ["calc.py"]
    assert (repo / "alias.py").is_symlink() and "a - b" in (repo / "calc.py").read_text()


def test_rename_is_checked_before_the_other_edits_write(make_repo: Callable[..., Path]) -> None:
    repo = make_repo()
    with pytest.raises(UnsafePath):
        apply_edits(repo, [GOOD, RenameFile("calc.py", "/tmp/stolen.py")])
    assert "a + b" in (repo / "calc.py").read_text()
