"""What a review says of the tests red at the start (engine/reviews/review.py): each id once."""

from tui_engineer.engine.reviews.review import old_failure_lines


def test_an_old_failure_the_step_reaches_is_said_once_as_still_failing() -> None:
    lines = old_failure_lines(("t::add",), ("t::div",), ("t::div", "t::net"))
    assert lines == [
        "Now passes (failed before this session): t::add",
        "Still failing, and your change runs through it (it failed before this session too): "
        "t::div",
        "1 failing before this session: t::net (not this step's)",
    ]


def test_a_disowned_old_failure_is_said_with_the_models_reason() -> None:
    lines = old_failure_lines((), ("t::div",), ("t::div",), (("t::div", "it checks rounding"),))
    assert lines == [
        "Still failing, and your change runs through it (it failed before this session too): "
        "t::div. Not this step's, says the model: it checks rounding",
    ]
