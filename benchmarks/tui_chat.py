"""Benchmark: the chat streaming a model reply at 1,000 tokens/s while the user types.

The real ChatPane and ChatInput, driven the way the app drives them: each token is its own message
to the app, whose handler calls `ChatPane.add_text` (Textual's MarkdownStream underneath); a new
reply begins every `--reply-tokens` tokens. Meanwhile:
- event-loop lag: a task asks to wake every 10 ms and records how late it woke;
- input latency: every 100 ms a key press is posted to the app (as the terminal driver does) and
  timed until the Input's value holds the new character (it queues behind the token messages).
The same is measured with no stream running as a baseline. Numbers are printed, not asserted.
Target: typing latency and loop lag stay well under 50 ms (a frame is ~16 ms).
Run: python benchmarks/tui_chat.py [--rate 1000] [--seconds 5]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from textual import events  # noqa: E402
from textual.app import App, ComposeResult  # noqa: E402
from textual.message import Message  # noqa: E402

from tui_engineer.tui.panes.chat import ChatInput, ChatPane  # noqa: E402

# A reply with the Markdown a model writes: prose, inline code, lists and fenced code.
REPLY = """The test `test_mul` fails because **mul returns `a + b`**, so `mul(4, 3)` gives 7.

Here is what I will change:

1. make `mul` multiply its arguments;
2. keep the existing test names;
3. add a test for negative numbers.

```python
def mul(a, b):
    return a * b


def test_mul_negative():
    assert mul(-2, 3) == -6
```

With that the whole suite should pass. """


def tokens() -> list[str]:
    """Roughly model-sized tokens: words with their spacing, code split on punctuation too."""
    out: list[str] = []
    word = ""
    for ch in REPLY:
        word += ch
        if ch in " \n()`:,." or len(word) >= 4:
            out.append(word)
            word = ""
    return out + ([word] if word else [])


class Token(Message):
    def __init__(self, text: str, begin: bool) -> None:
        super().__init__()
        self.text = text
        self.begin = begin


class TimedInput(ChatInput):
    """Records when its value last changed."""

    changed_at: float = 0.0

    def watch_value(self, value: str) -> None:
        self.changed_at = time.perf_counter()


class ChatApp(App[None]):
    CSS = "ChatPane { height: 1fr; } TimedInput { dock: bottom; }"

    def compose(self) -> ComposeResult:
        yield ChatPane(id="chat")
        yield TimedInput(id="input")

    async def on_token(self, message: Token) -> None:
        chat = self.query_one(ChatPane)
        if message.begin:
            await chat.begin_reply("model — fix")
        await chat.add_text(message.text)


@dataclass
class Numbers:
    lag_ms: list[float] = field(default_factory=list)
    key_ms: list[float] = field(default_factory=list)
    sent: int = 0
    caught_up_ms: float = 0.0


async def sample_lag(numbers: Numbers, stop: asyncio.Event) -> None:
    while not stop.is_set():
        start = time.perf_counter()
        await asyncio.sleep(0.010)
        numbers.lag_ms.append((time.perf_counter() - start - 0.010) * 1000)


async def type_keys(app: ChatApp, numbers: Numbers, stop: asyncio.Event) -> None:
    box = app.query_one(TimedInput)
    while not stop.is_set():
        before = box.value
        sent = time.perf_counter()
        app.post_message(events.Key("x", "x"))
        while box.value == before:
            await asyncio.sleep(0)
        numbers.key_ms.append((box.changed_at - sent) * 1000)
        await asyncio.sleep(0.1)


async def stream(app: ChatApp, numbers: Numbers, rate: int, seconds: float, per_reply: int):
    words = tokens()
    total = int(rate * seconds)
    start = time.perf_counter()
    for n in range(total):
        due = start + n / rate
        wait = due - time.perf_counter()
        if wait > 0:
            await asyncio.sleep(wait)
        app.post_message(Token(words[n % len(words)], begin=n % per_reply == 0))
        numbers.sent += 1


async def measure(rate: int, seconds: float, per_reply: int) -> Numbers:
    numbers = Numbers()
    app = ChatApp()
    async with app.run_test(size=(120, 40)) as pilot:
        app.query_one(TimedInput).focus()
        await pilot.pause()
        stop = asyncio.Event()
        watchers = [
            asyncio.create_task(sample_lag(numbers, stop)),
            asyncio.create_task(type_keys(app, numbers, stop)),
        ]
        if rate:
            await stream(app, numbers, rate, seconds, per_reply)
            done = time.perf_counter()
            await pilot.pause()  # every token message handled
            chat = app.query_one(ChatPane)
            await chat.end_reply()  # the stream flushes what it still holds
            numbers.caught_up_ms = (time.perf_counter() - done) * 1000
        else:
            await asyncio.sleep(seconds)
        stop.set()
        await asyncio.gather(*watchers)
    return numbers


def spread(values: list[float]) -> str:
    ordered = sorted(values)
    p95 = ordered[int(len(ordered) * 0.95)] if ordered else 0.0
    return (
        f"median {statistics.median(ordered):6.1f} ms   p95 {p95:6.1f} ms   "
        f"worst {max(ordered):6.1f} ms   (n={len(ordered)})"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rate", type=int, default=1000, help="tokens per second")
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--reply-tokens", type=int, default=2000, help="tokens per reply")
    args = parser.parse_args()
    idle = asyncio.run(measure(0, min(args.seconds, 2.0), args.reply_tokens))
    busy = asyncio.run(measure(args.rate, args.seconds, args.reply_tokens))
    print(f"idle (no stream), {min(args.seconds, 2.0):.0f} s:")
    print(f"  event-loop lag (10 ms ticks) : {spread(idle.lag_ms)}")
    print(f"  key press -> Input value     : {spread(idle.key_ms)}")
    print(
        f"streaming {busy.sent:,} tokens at {args.rate:,}/s "
        f"({args.reply_tokens:,} tokens per reply):"
    )
    print(f"  event-loop lag (10 ms ticks) : {spread(busy.lag_ms)}")
    print(f"  key press -> Input value     : {spread(busy.key_ms)}")
    print(f"  caught up after the last token: {busy.caught_up_ms:6.1f} ms")


if __name__ == "__main__":
    main()
