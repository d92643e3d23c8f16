"""KeyFooter's choice of keys when they do not fit (the drawn result: test_focus_and_dialogs.py)."""

from __future__ import annotations

from textual.widgets._footer import FooterKey

from tui_engineer.tui.footer import keys_that_fit

ORDER = ["undo", "switch_pane", "accept"]  # undo gives way first


def key(name: str, action: str, disabled: bool = False) -> FooterKey:
    return FooterKey(name[0].lower(), name[0].lower(), name, action, disabled=disabled)


def drawn(keys: list[FooterKey], width: int) -> list[str]:
    kept = keys_that_fit(keys, width, ORDER)
    return [k.description for i, k in enumerate(keys) if i in kept]


KEYS = [
    key("Back", "back_to_diff"),  # the focused widget's own key: not in the order
    key("Accept", "accept"),
    key("Undo", "undo"),
    key("Prev", "switch_pane(-1)"),
    key("Next", "switch_pane(1)"),
    key("Quit", "quit"),
]


def test_everything_fits_in_its_own_order() -> None:
    assert drawn(KEYS, 100) == ["Back", "Accept", "Undo", "Prev", "Next", "Quit"]


def test_the_first_of_the_drop_order_gives_way_and_quit_always_stays() -> None:
    # Widths with the gap after each: Back 7, Accept 9, Undo 7, Prev 7, Next 7, Quit 7.
    assert drawn(KEYS, 37) == ["Back", "Accept", "Prev", "Next", "Quit"]
    assert drawn(KEYS, 30) == ["Back", "Accept", "Undo", "Quit"]  # both pane keys or neither
    assert drawn(KEYS, 5) == ["Quit"]


def test_dimmed_keys_give_way_before_keys_that_work_now() -> None:
    keys = [key("Accept", "accept", disabled=True), key("Undo", "undo"), key("Quit", "quit")]
    assert drawn(keys, 16) == ["Undo", "Quit"]
    assert drawn(keys, 30) == ["Accept", "Undo", "Quit"]
