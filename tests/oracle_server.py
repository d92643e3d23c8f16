"""An "oracle" OpenAI-compatible server for bench tests: it answers each bench task with the
task's known solution (real HTTP, via tests/scripted_server.py), optionally broken on the first
try, so a bench's pass rates are known in advance. It proves the harness, not a model.

Stateless per request: the task is found by its request text in the conversation, and whether
this is a first try or a fix by the assistant turns already in it. So any number of runs,
workers and repeats can share one server."""

from __future__ import annotations

import json
from collections.abc import Iterable

from tests.engine_support import edit
from tests.scripted_server import RecordedRequest, Reply, ScriptedServer
from tui_engineer.bench.task import Task


def _whole_file_edits(before: dict[str, str], after: dict[str, str]) -> str:
    """Edits turning `before` into `after`: one SEARCH/REPLACE of each changed file."""
    return "".join(
        edit(path, before.get(path, ""), text)
        for path, text in sorted(after.items())
        if before.get(path) != text
    )


class OracleServer(ScriptedServer):
    def __init__(self, tasks: Iterable[Task], *, broken: Iterable[str] = (), **kwargs) -> None:
        super().__init__(**kwargs)
        self.tasks = list(tasks)
        self.broken = set(broken)  # task names whose first answer is the task's first_try

    def _task_of(self, request: RecordedRequest) -> tuple[Task | None, bool]:
        """The task of this conversation, and whether it is a follow-up ("still wrong")."""
        first_user = next((m["content"] for m in request.messages if m["role"] == "user"), "")
        for task in self.tasks:
            if task.request in first_user:
                return task, False
            if any(answer in first_user for answer in task.follow_ups):
                return task, True
        return None, False

    def _next_chat_reply(self, request: RecordedRequest) -> Reply | None:
        system = request.messages[0]["content"] if request.messages else ""
        if "You diagnose failing tests" in system:  # the diagnosis prompt names no request
            return Reply(text="The first attempt is broken; put the known solution in place.")
        task, follow_up = self._task_of(request)
        if task is None:
            with self._lock:
                self.unexpected.append(f"no task for request #{len(self.requests)}")
            return None
        if "Reply with the plan as one" in request.messages[-1]["content"]:
            step = {"title": task.name, "description": "do what the human asked", "files": [],
                    "verify": "the tests"}  # fmt: skip
            return Reply(text="```json\n" + json.dumps({"steps": [step]}) + "\n```\n")
        tries = sum(m["role"] == "assistant" for m in request.messages)
        broken_first = task.name in self.broken and bool(task.first_try)
        if tries == 0 and broken_first and not follow_up:
            return Reply(text=_whole_file_edits(task.files, task.first_try))
        before = {**task.files, **task.first_try} if broken_first else task.files
        # Sandbox actions only where the prompt offers them (the docker sandbox).
        offered = "# Repairing the test environment" in system
        actions = "".join(f"<<<<<<< {a}\n" for a in task.oracle_actions) if offered else ""
        return Reply(text=actions + _whole_file_edits(before, task.solution))
