"""Bytes that may not be UTF-8 — file names, git's output, test output (DESIGN invariant 9).

A name is carried exactly as a `str` whose undecodable bytes are lone surrogates (Python's own
convention for os paths: `os.fsdecode`, "surrogateescape"), so it reaches git and the disk byte
for byte. It is shown (screen, prompt, record, JSON) with U+FFFD for each such byte: nothing
downstream can encode a lone surrogate."""

from __future__ import annotations

# What subprocess.run(...) takes to decode a git command's output into exact names.
EXACT = {"encoding": "utf-8", "errors": "surrogateescape"}


def exact(data: bytes) -> str:
    """`data` as a str that encodes back to the same bytes (see `raw`)."""
    return data.decode("utf-8", "surrogateescape")


def raw(text: str) -> bytes:
    """The bytes an exact str stands for (a surrogate that came from elsewhere: U+FFFD)."""
    try:
        return text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a lone surrogate that no byte stands for (e.g. from JSON)
        return text.encode("utf-8", "replace")


def readable(text: str) -> str:
    """`text` with every byte that was not UTF-8 shown as U+FFFD."""
    return raw(text).decode("utf-8", "replace")


def is_exact_only(text: str) -> bool:
    """True when `text` holds bytes that are not UTF-8 (it cannot be shown as it is)."""
    return readable(text) != text
