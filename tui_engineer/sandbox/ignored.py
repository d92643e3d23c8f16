"""What a build needs that git ignores: the folders of the user's tree a test run sees, read-only,
at the same place in the shadow (which holds only tracked files), and the per-repository build
cache the runs may write outside the shadow.

Defaults per ecosystem, by the file that marks it: `package.json` → `node_modules` (and yarn's
Plug'n'Play files: `.pnp.cjs`, `.pnp.loader.mjs`, `.yarn/unplugged`); a Python
project (`pyproject.toml`, `setup.py`, `setup.cfg`, `requirements.txt`) → `.venv`, `venv`;
`go.mod`, `composer.json` → `vendor`; `Gemfile` → `vendor/bundle`, `.bundle`; `Cargo.toml` →
`Cargo.lock` (a library crate's lock, which it does not commit). The `show_ignored`
setting adds others (generated code). A path is shown only when it exists in the user's tree, git
ignores it there (a tracked one is in the shadow already), and it stays inside the repository
once symlinks are resolved."""

from __future__ import annotations

import subprocess
from collections.abc import Iterable, Sequence
from hashlib import sha1
from pathlib import Path

import platformdirs

from tui_engineer.base.names import EXACT

ECOSYSTEM_PATHS: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...] = (
    # yarn's Plug'n'Play keeps its module map and unpacked packages outside node_modules.
    (("package.json",), ("node_modules", ".pnp.cjs", ".pnp.loader.mjs", ".yarn/unplugged")),
    (("pyproject.toml", "setup.py", "setup.cfg", "requirements.txt"), (".venv", "venv")),
    (("go.mod", "composer.json"), ("vendor",)),
    (("Gemfile",), ("vendor/bundle", ".bundle")),
    # A library crate that does not commit its lock: the user's, which their cache matches.
    (("Cargo.toml",), ("Cargo.lock",)),
)


def parse_paths(text: str | None) -> list[str]:
    """`show_ignored` as the user writes it: relative paths, by spaces or commas."""
    return [p.strip("/") for p in (text or "").replace(",", " ").split() if p.strip("/")]


def default_paths(root: Path) -> list[str]:
    found: list[str] = []
    for markers, paths in ECOSYSTEM_PATHS:
        if any((root / marker).is_file() for marker in markers):
            found += paths
    return found


def ignored_paths(root: Path, extra: Sequence[str] = ()) -> list[str]:
    """The paths (relative, POSIX) of `root`'s ignored files and folders tests are shown."""
    root = root.resolve()
    wanted = list(dict.fromkeys([*default_paths(root), *extra]))
    present = [p for p in wanted if _inside(root, p)]
    return _git_ignored(root, present)


def _inside(root: Path, path: str) -> bool:
    if path.startswith("/") or ".." in path.split("/") or path.split("/")[0] == ".git":
        return False
    candidate = root / path
    if not (candidate.exists() or candidate.is_symlink()):
        return False
    return candidate.resolve().is_relative_to(root) and candidate.resolve() != root


def _git_ignored(root: Path, paths: Iterable[str]) -> list[str]:
    paths = list(paths)
    if not paths:
        return []
    done = subprocess.run(
        ["git", "-C", str(root), "check-ignore", "-z", "--stdin"],
        input="".join(f"{name}\0" for name in paths),
        capture_output=True,
        check=False,
        **EXACT,  # -z and exact: a name that is not UTF-8 comes back as given, not quoted
    )  # exit 1: none ignored; 128: not a git repository (then show nothing)
    said = {name.rstrip("/") for name in done.stdout.split("\0") if name}
    return [p for p in paths if p in said]


def build_cache(root: Path) -> Path:
    """The writable build cache of the repository at `root`, outside every shadow, kept between
    sessions: cargo's target folder and go's build cache live there (see `build_env`)."""
    root = root.resolve()
    key = sha1(str(root).encode()).hexdigest()[:10]
    return platformdirs.user_cache_path("tui-engineer") / "build" / f"{root.name}-{key}"


def build_env(cache: Path, *, offline: bool = False) -> dict[str, str]:
    """Variables pointing the build tools at the cache (every step would rebuild from nothing in
    a fresh shadow). `offline`: the runs have no network, so cargo builds from its cache alone
    rather than reach for the index and fail (what it lacks is then named: `cargo fetch`)."""
    env = {"CARGO_TARGET_DIR": str(cache / "cargo-target"), "GOCACHE": str(cache / "go-build")}
    return env | offline_env(offline)


def offline_env(offline: bool) -> dict[str, str]:
    """What tells the build tools the runs have no network (bubblewrap's and docker's alike):
    cargo then builds from its cache alone instead of failing at the index."""
    return {"CARGO_NET_OFFLINE": "true"} if offline else {}


def exclude_in_shadow(workdir: Path, paths: Iterable[str]) -> None:
    """Make the shadow's own git ignore the shown paths too (the user's tree may ignore them in
    .git/info/exclude, which the shadow does not have): the empty mount points bubblewrap leaves
    must never appear in a step's changes."""
    info = workdir / ".git" / "info"
    if not (workdir / ".git").is_dir():
        return
    exclude = info / "exclude"
    try:
        have = exclude.read_text(encoding="utf-8").splitlines()
    except OSError:
        have = []
    missing = [f"/{p}" for p in paths if f"/{p}" not in have]
    if missing:
        info.mkdir(parents=True, exist_ok=True)
        with exclude.open("a", encoding="utf-8") as out:
            out.write("".join(line + "\n" for line in missing))


def run_artifacts(workdir: Path) -> list[str]:
    """Files a test run writes that are not the step's: cargo writes Cargo.lock next to a
    Cargo.toml that has none (a crate that does not commit it). Kept out of the shadow's git."""
    if (workdir / "Cargo.toml").is_file() and not (workdir / "Cargo.lock").exists():
        return ["Cargo.lock"]
    return []
