"""The key footer: Textual's compact Footer, but it never draws a key it cannot show whole.

When the offered keys do not fit the width, the least important ones give way: dimmed keys
first, then by the app's drop order. They still work, and the command palette (^p) lists them.
Quit always stays (as ^c while a box takes the letters), and so do the focused widget's own
keys (such as "esc Back to diff"): they say how to leave where you are.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from rich.cells import cell_len
from textual import events
from textual.app import ComposeResult
from textual.widget import Widget
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

ALWAYS = "quit"


def action_name(action: str) -> str:
    """`resize_side(-1)` -> `resize_side`; a widget's key for an app action, `app.comment`,
    is the app's `comment`."""
    return action.partition("(")[0].removeprefix("app.")


def key_width(key: FooterKey) -> int:
    """Columns a key takes in the compact footer, with the one-column gap after it."""
    description = 1 + cell_len(key.description) if key.description else 0
    return cell_len(key.key_display) + description + 1


def keys_that_fit(keys: Sequence[FooterKey], width: int, drop_order: Sequence[str]) -> set[int]:
    """Indexes of `keys` to draw in `width` columns. Quit first, then the keys whose action is
    not in `drop_order` (the focused widget's own), then `drop_order` from its end (most
    important last), the keys that work now before the dimmed ones; the keys of one action
    (such as `switch_pane(-1)` and `(1)`) go together."""

    def rank(index: int) -> tuple[int, int]:
        key = keys[index]
        name = action_name(key.action)
        if name == ALWAYS:
            return (0, 0)
        if name not in drop_order:
            return (1, 0)
        return (3 if key.has_class("-disabled") else 2, -drop_order.index(name))

    units: dict[str, list[int]] = {}
    for index in sorted(range(len(keys)), key=rank):
        units.setdefault(action_name(keys[index].action), []).append(index)
    kept: set[int] = set()
    used = 0
    for name, indexes in units.items():
        need = sum(key_width(keys[i]) for i in indexes)
        if name == ALWAYS or used + need <= width:
            kept.update(indexes)
            used += need
    return kept


class KeyFooter(Footer):
    """`drop_order`: action names, the first given up first when the keys do not fit."""

    def __init__(self, drop_order: Iterable[str] = (), *, id: str | None = None) -> None:
        super().__init__(compact=True, id=id)
        self.drop_order = list(drop_order)
        self.left_out: list[str] = []  # descriptions not drawn at this width
        self._width = 0

    def compose(self) -> ComposeResult:
        if any(b.show and b.group for _, b, _, _ in self.screen.active_bindings.values()):
            yield from super().compose()  # binding groups (nested widgets): Textual's own way
            return
        # Without groups Textual's Footer yields one FooterKey per binding, the palette key
        # last; keep the ones that fit before the palette key.
        widgets: list[Widget] = list(super().compose())
        keys = [w for w in widgets if isinstance(w, FooterKey) and not _is_palette(w)]
        if not any(action_name(k.action) == ALWAYS for k in keys):
            keys.extend(self._quit_key())
        palette = [w for w in widgets if isinstance(w, FooterKey) and _is_palette(w)]
        # The palette key has a one-column border on its left; one more column spare.
        width = self.size.width - sum(key_width(p) + 1 for p in palette)
        if self.size.width:
            kept = keys_that_fit(keys, width, self.drop_order)
        else:  # not laid out yet
            kept = set(range(len(keys)))
        self._width = self.size.width
        self.left_out = [k.description for i, k in enumerate(keys) if i not in kept]
        yield from (k for i, k in enumerate(keys) if i in kept)
        yield from palette

    def _quit_key(self) -> list[FooterKey]:
        """While a box takes the letters, q types: name a quit key that still works (ctrl+c),
        a binding kept out of the footer otherwise."""
        for _node, binding, enabled, _tooltip in self.screen.active_bindings.values():
            if action_name(binding.action) == ALWAYS:
                display = self.app.get_key_display(binding)
                key = FooterKey(
                    binding.key, display, binding.description, binding.action, not enabled
                )
                return [key.data_bind(compact=Footer.compact)]
        return []

    def on_resize(self, event: events.Resize) -> None:
        if event.size.width != self._width:
            self.call_after_refresh(self.recompose)


def _is_palette(widget: Widget) -> bool:
    return widget.has_class("-command-palette")
