"""`tui-engineer bench exercism PATH --oracle`: a model that answers every exercise with its
`.meta` example solution, served over real HTTP (the demo's server) so the whole path (the
openai client, the engine, the sandbox, the language's test runner, the hidden tests) runs as
with a real model. Every exercise should then work: one that does not shows a problem of the
harness or of the machine (a missing toolchain, an example the layout does not place), not of a
model."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence

from tui_engineer.bench.task import Task
from tui_engineer.edits.parser import FILE_END_LINE, FILE_START_LINE

Message = dict[str, str]


def _files(solution: dict[str, str]) -> str:
    return "".join(
        f"{path}\n````\n{FILE_START_LINE}\n{text.rstrip(chr(10))}\n{FILE_END_LINE}\n````\n\n"
        for path, text in sorted(solution.items())
    )


def oracle_answer(tasks: Sequence[Task]) -> Callable[[Sequence[Message]], str]:
    """The answer to one chat call: a one-step plan, a diagnosis, or the example solution of
    the task whose request opens the conversation. Stateless, so runs may share it."""
    tasks = list(tasks)

    def answer(messages: Sequence[Message]) -> str:
        system = messages[0]["content"] if messages else ""
        first_user = next((m["content"] for m in messages if m["role"] == "user"), "")
        if system.startswith("You diagnose"):
            return "The code does not do what the instructions ask; the example solution does."
        task = next((t for t in tasks if t.request in first_user), None)
        if task is None:
            return "The oracle knows no exercise with this request."
        if first_user.startswith("Request from the human:"):
            step = {"title": f"Solve {task.name}", "description": "the example solution",
                    "files": sorted(task.solution), "verify": "the exercise's tests"}  # fmt: skip
            return "```json\n" + json.dumps({"steps": [step]}) + "\n```\n"
        if not task.solution:
            return f"The exercise {task.name} has no example solution the oracle can place."
        return _files(task.solution)

    return answer
