"""A bench task: what both the suites on disk (tasks.py) and the generated ones (humaneval.py)
are made of, so neither imports the other to name it."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Task:
    """One starting repo, a request, and acceptance tests the engine never sees."""

    name: str
    request: str
    files: dict[str, str]  # the starting repo: path -> text
    hidden: dict[str, str]  # hidden acceptance tests, added only to evaluate the result
    test_command: str | None = None  # None: the engine detects it from the repo
    hidden_command: str = "python -m pytest -q -p no:cacheprovider bench_hidden"
    follow_ups: tuple[str, ...] = ()  # "still wrong" answers, given while hidden tests fail
    # For the oracle test server only: the files of a correct result, and sandbox actions.
    solution: dict[str, str] = field(default_factory=dict)
    first_try: dict[str, str] = field(default_factory=dict)  # a broken first answer, if any
    oracle_actions: tuple[str, ...] = ()
    read_only: tuple[str, ...] = ()  # files the model may not change (an exercise's tests)
