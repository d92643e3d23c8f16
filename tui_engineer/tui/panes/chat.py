"""The chat pane: the model's replies stream in as Markdown; the human's messages show whether
they were delivered to a model call yet. The input box lives apart (always on screen)."""

from __future__ import annotations

import asyncio

from rich.markup import escape
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.timer import Timer
from textual.widgets import Input, Markdown, Static
from textual.widgets.markdown import MarkdownStream

from tui_engineer.edits.prose import EditBlockFilter
from tui_engineer.names import readable
from tui_engineer.tui.panes.chat_text import code_paths, edited_line

MAX_ENTRIES = 300  # older entries are dropped: a long session must not grow the DOM forever
# Streamed text reaches the Markdown at most this often. Each append re-lays-out the pane; fed
# per token at 1,000 tokens/s, appends would run back to back and starve the keyboard.
FLUSH_SECONDS = 0.1


class ChatInput(Input):
    """The message box. Escape leaves it so the review keys (a, r, s...) work again. While it
    has focus the footer hides the letter keys (they type), so it shows how to get them back."""

    BINDINGS = [Binding("escape", "leave", "Leave the box (keys)")]

    def action_leave(self) -> None:
        # Back to the diff, where a review happens (next in focus order if it is hidden).
        diff = self.screen.query("#pane-diff")
        if diff and diff.first().display and diff.first().can_focus:
            diff.first().focus()
        else:
            self.app.action_focus_next()


class ChatPane(VerticalScroll):
    DEFAULT_CSS = """
    ChatPane { padding: 0 1; }
    ChatPane > .chat-who { margin-top: 1; text-style: bold; color: $primary; }
    ChatPane > .chat-you { margin-top: 1; color: $accent; }
    ChatPane > .chat-note { margin-top: 1; color: $text-muted; }
    ChatPane > .chat-error { margin-top: 1; color: $error; }
    ChatPane > .chat-plan { color: $foreground; }
    ChatPane > Markdown { margin: 0; padding: 0; background: transparent; }
    ChatPane > Markdown.chat-edited { margin-top: 1; color: $text-muted; }
    """

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self._stream: MarkdownStream | None = None
        self._reply: Markdown | None = None
        self._queued: list[tuple[str, Static]] = []
        self._unflushed: list[str] = []  # streamed text not yet given to the Markdown
        self._flush_timer: Timer | None = None
        self._quiet: Static | None = None  # the one-line stand-in for a reply not shown raw
        self._quiet_label = ""
        self._quiet_chars = 0
        self._edits = EditBlockFilter()  # the reply's SEARCH/REPLACE blocks stay out of the chat

    def on_mount(self) -> None:
        self.anchor()

    async def _add(self, *widgets: Static | Markdown) -> None:
        extra = len(self.children) + len(widgets) - MAX_ENTRIES
        if extra > 0:
            await self.remove_children(list(self.children[:extra]))
        await self.mount_all(widgets)

    async def note(self, text: str, *, error: bool = False) -> None:
        """A line from tui-engineer itself (a notice, an error, a step's outcome)."""
        text = readable(text)  # a file name in it may not be UTF-8
        await self._add(Static(text, classes="chat-error" if error else "chat-note", markup=False))

    async def user_message(self, text: str, *, queued: bool) -> None:
        """The human's message; when `queued`, it is marked delivered by `delivered()` later."""
        entry = Static(self._you(text, "queued for the next model call" if queued else ""))
        entry.add_class("chat-you")
        if queued:
            self._queued.append((text, entry))
        await self._add(entry)

    def delivered(self, text: str, purpose: str, step: int | None = None) -> bool:
        """The engine sent `text` with a model call (of `step`); mark the oldest matching
        message, naming the step that took it."""
        call = f"step {step}'s {purpose} call" if step is not None else f"the {purpose} call"
        for i, (queued, entry) in enumerate(self._queued):
            if queued == text:
                entry.update(self._you(text, f"✓ delivered to {call}"))
                del self._queued[i]
                return True
        return False

    def not_delivered(self) -> None:
        """The session ended before a model call took the queued messages: say so on each."""
        why = "not sent: the session ended before the model's next call"
        for text, entry in self._queued:
            entry.update(self._you(text, why))
        self._queued.clear()

    @staticmethod
    def _you(text: str, state: str) -> str:
        return f"You: {escape(text)}" + (f"  [dim]({state})[/]" if state else "")

    async def begin_reply(self, title: str, *, quiet: str = "") -> None:
        """A model call started: its text streams into a new Markdown block under `title`.
        With `quiet` (e.g. "Planning…"), the raw text (JSON) is not shown: one line says what
        is going on and counts what arrived, until `show_plan` replaces it."""
        await self.end_reply()
        header = Static(title, classes="chat-who", markup=False)
        if quiet:
            self._quiet_label, self._quiet_chars = quiet, 0
            self._quiet = Static(quiet, classes="chat-note", markup=False)
            await self._add(header, self._quiet)
            return
        self._quiet = None
        self._edits = EditBlockFilter()
        self._reply = Markdown()
        await self._add(header, self._reply)
        self._stream = Markdown.get_stream(self._reply)

    async def add_text(self, text: str) -> None:
        if self._quiet is not None:
            self._quiet_chars += len(text)
            self._quiet.update(f"{self._quiet_label} ({self._quiet_chars:,} characters)")
            return
        if self._stream is None:
            await self.begin_reply("model")
        shown = self._edits.feed(text)
        if shown:
            self._unflushed.append(code_paths(shown))
        if self._flush_timer is None:
            self._flush_timer = self.set_timer(FLUSH_SECONDS, self._flush)

    async def _flush(self) -> None:
        self._flush_timer = None
        if self._stream is not None and self._unflushed:
            text = "".join(self._unflushed)
            self._unflushed.clear()
            await self._stream.write(text)

    async def show_plan(self, steps: list[tuple[int, str]]) -> None:
        """The plan arrived: a readable list of its steps, in place of the "Planning…" line
        (nothing when no plan call stands waiting, e.g. a one-step session)."""
        if self._quiet is None:
            return
        count = f"{len(steps)} step" + ("" if len(steps) == 1 else "s")
        lines = [f"Plan ({count}):"] + [f"  {index}. {title}" for index, title in steps]
        self._quiet.update("\n".join(lines))
        self._quiet.set_classes("chat-plan")
        self._quiet = None

    async def edited(self, files: list[tuple[str, int, int]]) -> None:
        """One line per applied edit: each path links to its part of the diff."""
        if files:
            line = Markdown(edited_line(files), open_links=False, classes="chat-edited")
            await self._add(line)

    async def end_reply(self) -> None:
        rest = self._edits.finish()
        if rest and self._stream is not None:
            self._unflushed.append(code_paths(rest))
        if self._flush_timer is not None:
            self._flush_timer.stop()
        await self._flush()
        if self._stream is not None:
            stream, self._stream = self._stream, None
            # A reply that was all edit blocks wrote nothing: let the stream's task start
            # before cancelling it, or awaiting a never-started task raises CancelledError here.
            await asyncio.sleep(0)
            await stream.stop()

    @property
    def has_unflushed_text(self) -> bool:
        """Streamed text still waiting for the next batched write into the Markdown."""
        return bool(self._unflushed) or self._flush_timer is not None

    @property
    def reply_text(self) -> str:
        """The Markdown source of the reply being streamed (or the last one)."""
        return self._reply.source if self._reply is not None else ""
