"""Environment templates for the docker sandbox: data files (templates/*.toml) that say which image
a kind of project is tested in, how its environment is set up, how a package is installed and
which files decide its dependencies. Users add or replace templates with their own TOML files in
`<repo>/.tui-engineer/templates/` or `<user config>/tui-engineer/templates/`."""

from __future__ import annotations

import hashlib
import re
import shlex
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

import platformdirs

from tui_engineer.base.errors import UserError

BUILTIN_DIR = Path(__file__).with_name("templates")
REPO_DIR = Path(".tui-engineer") / "templates"
# Dependency files bigger than this are hashed by size and mtime only: keys stay cheap.
_MAX_HASHED_BYTES = 16 * 1024 * 1024
# Numeric so the workspace copy can be owned by the test user in any image, /etc/passwd or not.
_USER = re.compile(r"root|\d+:\d+")


class TemplateError(UserError):
    """A template file is broken, or no template fits the repository."""


@dataclass(frozen=True)
class EnvTemplate:
    name: str
    images: tuple[str, ...]  # preferred first; the first present locally wins
    test_command: str
    install: str  # shell command with a `{package}` placeholder
    description: str = ""
    user: str = "1000:1000"  # who runs the tests; "root" where the image needs it
    setup: tuple[str, ...] = ()  # run once as root in /workspace; cached with the environment
    dependency_files: tuple[str, ...] = ()  # globs relative to the repo root
    detect: tuple[str, ...] = ()  # globs relative to the repo root; more hits = better fit
    keep_paths: tuple[str, ...] = ()  # workspace paths that survive a refresh (node_modules)
    env: Mapping[str, str] = field(default_factory=dict)
    source: Path | None = None

    @property
    def uid_gid(self) -> tuple[int, int]:
        if self.user == "root":
            return 0, 0
        uid, gid = self.user.split(":")
        return int(uid), int(gid)

    def install_command(self, package: str) -> str:
        return self.install.replace("{package}", shlex.quote(package))

    def detect_hits(self, root: Path) -> int:
        return sum(1 for pattern in self.detect if _first_match(root, pattern) is not None)

    def dependency_paths(self, root: Path) -> list[Path]:
        found = {p for pattern in self.dependency_files for p in root.glob(pattern) if p.is_file()}
        return sorted(found)

    def environment_key(self, root: Path) -> str:
        """Names the cached environment: changes when the template's recipe or any of the
        repo's dependency files change, so a stale environment is never reused."""
        digest = hashlib.sha256()
        recipe = [self.name, *self.images, self.user, *self.setup, *sorted(self.env.items())]
        digest.update(repr(recipe).encode())
        for path in self.dependency_paths(root):
            digest.update(path.relative_to(root).as_posix().encode() + b"\0")
            digest.update(_file_digest(path))
        return digest.hexdigest()[:16]


def _first_match(root: Path, pattern: str) -> Path | None:
    return next(iter(root.glob(pattern)), None)


def _file_digest(path: Path) -> bytes:
    stat = path.stat()
    if stat.st_size > _MAX_HASHED_BYTES:
        return f"{stat.st_size}:{stat.st_mtime_ns}".encode()
    return hashlib.sha256(path.read_bytes()).digest()


def template_dirs(repo_root: Path | None) -> list[Path]:
    """Where templates are read from; a later folder's template replaces an earlier one's."""
    dirs = [BUILTIN_DIR, Path(platformdirs.user_config_dir("tui-engineer")) / "templates"]
    if repo_root is not None:
        dirs.append(repo_root / REPO_DIR)
    return dirs


def load_templates(repo_root: Path | None = None) -> dict[str, EnvTemplate]:
    templates: dict[str, EnvTemplate] = {}
    for folder in template_dirs(repo_root):
        if folder.is_dir():
            for path in sorted(folder.glob("*.toml")):
                template = load_template_file(path)
                templates[template.name] = template
    return templates


def load_template_file(path: Path) -> EnvTemplate:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as err:
        raise TemplateError(f"The sandbox template {path} cannot be read: {err}") from None
    return template_from_data(data, path)


def template_from_data(data: Mapping[str, Any], source: Path | None = None) -> EnvTemplate:
    where = f"The sandbox template {source or '(inline)'}"
    required = ("name", "images", "test_command", "install")
    missing = [key for key in required if not data.get(key)]
    if missing:
        raise TemplateError(f"{where} lacks {', '.join(missing)}.")
    known = {f for f in EnvTemplate.__dataclass_fields__ if f != "source"}
    unknown = sorted(set(data) - known)
    if unknown:
        raise TemplateError(f"{where} has unknown keys: {', '.join(unknown)}.")
    values = {key: _checked(where, key, value) for key, value in data.items()}
    if "{package}" not in values["install"]:
        raise TemplateError(f"{where}: install must contain {{package}}.")
    return EnvTemplate(**values, source=source)


def _checked(where: str, key: str, value: Any) -> Any:
    if key == "env":
        if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
            raise TemplateError(f"{where}: env must be a table of strings.")
        return dict(value)
    if key in ("images", "setup", "dependency_files", "detect", "keep_paths"):
        if isinstance(value, str) or not _all_str(value):
            raise TemplateError(f"{where}: {key} must be a list of strings.")
        if key == "keep_paths":
            _check_relative(where, value)
        return tuple(value)
    if not isinstance(value, str):
        raise TemplateError(f"{where}: {key} must be a string.")
    if key == "user" and not _USER.fullmatch(value):
        raise TemplateError(f"{where}: user must be 'root' or numeric 'uid:gid', got {value!r}.")
    return value


def _all_str(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) and v for v in value)


def _check_relative(where: str, paths: Iterable[str]) -> None:
    for path in paths:
        # Top-level names only: the workspace refresh keeps or replaces whole entries.
        if len(PurePosixPath(path).parts) != 1 or path in (".", ".."):
            raise TemplateError(f"{where}: keep_paths entry {path!r} must be a top-level name.")


def pick_template(
    repo_root: Path,
    override: str | None = None,
    templates: Mapping[str, EnvTemplate] | None = None,
) -> EnvTemplate:
    """The template named by `override`, else the one whose detection globs hit most."""
    templates = load_templates(repo_root) if templates is None else templates
    names = ", ".join(sorted(templates)) or "(none)"
    if override:
        if override not in templates:
            raise TemplateError(
                f"There is no sandbox template named {override!r}. Known templates: {names}. "
                f"Add one as a TOML file in {repo_root / REPO_DIR}."
            )
        return templates[override]
    scored = [(t.detect_hits(repo_root), t) for t in templates.values()]
    best = max(scored, key=lambda pair: pair[0], default=(0, None))
    if best[1] is None or best[0] == 0:
        raise TemplateError(
            f"No sandbox template fits {repo_root} (none of their detection files is there). "
            f"Known templates: {names}. Name one in the config, or add your own as a TOML file "
            f"in {repo_root / REPO_DIR}."
        )
    return best[1]
