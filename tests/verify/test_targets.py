"""Which old failures a step is meant to fix (verify/targets.py), as a user's words say it."""

from __future__ import annotations

import pytest

from tui_engineer.verify.targets import StepAim

ADD = "tests/test_calc.py::test_add"
MUL = "tests/test_calc.py::test_mul"
EXPORT = "tests/test_export.py::test_csv_header"
RUST = "tests::adds"
NODE = "add returns the sum"
SIMPLE_TAKE = "tests/test_recipes.py::TakeTests::test_simple_take"
FAILING = (ADD, MUL, EXPORT, RUST, SIMPLE_TAKE)


def targets(request: str, *, fixes: tuple[str, ...] = ()) -> set[str]:
    return set(StepAim(request, request, fixes).targets(FAILING))


@pytest.mark.parametrize(
    ("request_", "expected"),
    [
        ("fix add", {ADD, RUST}),  # the code the test is named for ("adds": add)
        ("add is broken", {ADD, RUST}),
        ("testAdd fails", {ADD, RUST}),
        ("make test_mul pass", {MUL}),  # named by its function
        (f"{EXPORT} fails", {EXPORT}),  # named by its id
        # Not by its file's module: the tests of that module the change runs through are the
        # step's by reach (engine/steps/reach.py), the others not (attrs's test_converters.py).
        ("fix the csv export", set()),
        ("fix the grammar of take's docstring", set()),  # not test_simple_take: a longer name
        ("fix calc.py", set()),
        ("make the failing tests pass", set(FAILING)),
        ("fix the tests", set(FAILING)),
        # No fix asked: only a test named outright is the step's.
        ("add a --json flag to export", set()),
        ("document mul", set()),
        ("rename test_mul's helper", {MUL}),
    ],
)
def test_a_request_points_at_the_old_failures_it_means(request_: str, expected: set[str]) -> None:
    assert targets(request_) == expected


def test_a_fix_request_points_by_a_whole_name_not_a_word_inside_one() -> None:
    take = "tests/test_recipes.py::TakeTests::test_take"
    aim = StepAim("fix take's docstring", "fix take's docstring")
    assert aim.targets((take, SIMPLE_TAKE)) == {take}


def test_a_plans_fixes_name_tests_by_id_or_function() -> None:
    assert targets("tidy up", fixes=(ADD,)) == {ADD}
    assert targets("tidy up", fixes=("test_mul",)) == {MUL}


def test_a_planned_step_points_with_its_own_words_not_the_whole_request() -> None:
    aim = StepAim(text="fix add, document mul\nDocument mul", pointing="Document mul")
    assert aim.targets(FAILING) == frozenset()  # "add" is named by no test id or function
    node = StepAim(text="fix add", pointing="fix add")
    assert node.targets((NODE,)) == frozenset({NODE})  # node's test named in words
