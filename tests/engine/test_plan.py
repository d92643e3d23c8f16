"""Plans from the model: fenced JSON, validated with messages the model can act on."""

from __future__ import annotations

import re

import pytest

from tui_engineer.engine.plans.plan import PlanError, parse_plan, single_step

GOOD = """Here is the plan.

```json
{"steps": [
  {"title": "Add a failing test for --json", "files": ["tests/test_cli.py"],
   "verify": "the new test", "description": "write the test first"},
  {"title": "Implement --json", "files": ["cli.py"], "depends_on": [1]}
]}
```
Let me know."""


def test_plan_parsed_from_prose_with_fenced_json() -> None:
    steps = parse_plan(GOOD)
    assert [s.title for s in steps] == ["Add a failing test for --json", "Implement --json"]
    assert steps[0].files == ["tests/test_cli.py"]
    assert steps[1].depends_on == [1]
    assert [s.index for s in steps] == [1, 2]


def test_plan_indexes_continue_after_earlier_steps() -> None:
    steps = parse_plan(GOOD, first_index=4)
    assert [s.index for s in steps] == [4, 5]
    assert steps[1].depends_on == [4]


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("I think we should just do it.", "No plan found"),
        ('```json\n{"steps": [}\n```', "not valid JSON"),
        ('```json\n{"steps": []}\n```', "no steps"),
        ('```json\n{"steps": [{"files": []}]}\n```', "steps[0].title"),
        ('```json\n{"steps": [{"title": "a", "depends_on": [1]}]}\n```', "earlier steps"),
        ('```json\n{"steps": [{"title": "a", "files": "x.py"}]}\n```', "list of strings"),
        ('```json\n{"steps": [{"title": "a", "test_first": "yes"}]}\n```', "true or false"),
    ],
)
def test_invalid_plans_explain_what_to_fix(reply: str, expected: str) -> None:
    with pytest.raises(PlanError, match=re.escape(expected)):
        parse_plan(reply)


def test_a_step_is_test_first_only_when_the_plan_says_so() -> None:
    reply = '{"steps": [{"title": "Add --json", "test_first": true}, {"title": "Tidy"}]}'
    steps = parse_plan(reply)
    assert [s.test_first for s in steps] == [True, False]
    assert steps[0].info().test_first


def test_single_step_uses_first_line_as_title() -> None:
    step = single_step("Add a --json flag\nto the export command")
    assert step.title == "Add a --json flag"
    assert "export command" in step.description


def test_a_long_request_titles_its_step_cut_after_a_whole_word() -> None:
    request = "Rename the export helpers to snake case in the whole package; fix the imports too"
    title = single_step(request).title
    assert title == "Rename the export helpers to snake case in the whole package; fix the…"
    assert len(title) <= 72
    assert single_step("x" * 100).title == "x" * 71 + "…"  # one word: cut where it must be
    assert single_step("Add a --json flag").title == "Add a --json flag"
