"""Finding where a SEARCH block's lines sit in a file: exact first, then ignoring trailing
whitespace, then ignoring a uniform indentation difference (with the replacement re-indented to
match), retried without blank edge lines models often add."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]


def common_indent(lines: Sequence[str]) -> str:
    indents = [_indent(line) for line in lines if line.strip()]
    return os.path.commonprefix(indents) if indents else ""


def dedented(lines: Sequence[str]) -> list[str]:
    cut = len(common_indent(lines))
    return [line[cut:].rstrip() if line.strip() else "" for line in lines]


def reindent(replace: Sequence[str], from_indent: str, to_indent: str) -> list[str]:
    """Shift the replacement by the indentation difference between SEARCH and the file."""
    out = []
    for line in replace:
        if not line.strip():
            out.append("")
        elif line.startswith(from_indent):
            out.append(to_indent + line[len(from_indent) :])
        else:  # less indented than the SEARCH block: shift by the same amount, never below 0
            lead = _indent(line)
            size = max(0, len(lead) + len(to_indent) - len(from_indent))
            out.append((to_indent or lead or " ")[:1] * size + line.lstrip())
    return out


Normalize = Callable[[Sequence[str]], list[str]]


def _exact(lines: Sequence[str]) -> list[str]:
    return list(lines)


def _rstripped(lines: Sequence[str]) -> list[str]:
    return [line.rstrip() for line in lines]


def _windows(lines: Sequence[str], search: Sequence[str], norm: Normalize) -> list[int]:
    """Starts of the windows of `lines` equal to `search` once both are normalized."""
    n, want = len(search), norm(search)
    if norm is dedented:
        first = want[0].strip() if want else ""
        return [
            i
            for i in range(len(lines) - n + 1)
            if lines[i].strip() == first and dedented(lines[i : i + n]) == want
        ]
    normed = norm(lines)
    return [i for i in range(len(normed) - n + 1) if normed[i : i + n] == want]


def find_matches(lines: Sequence[str], search: Sequence[str]) -> tuple[list[int], Normalize]:
    """Window starts matching `search`: exact first, then ignoring trailing whitespace, then
    ignoring a uniform indentation difference. The first strategy with any match wins."""
    for norm in (_exact, _rstripped, dedented):
        starts = _windows(lines, search, norm)
        if starts:
            return starts, norm
    return [], _exact


def _trim_blank_edges(search: list[str], replace: list[str]) -> tuple[list[str], list[str]]:
    """Drop blank lines at the edges of SEARCH (models often add one) and the same blank edges
    of REPLACE, so the edit neither needs nor adds them."""
    lead = next(i for i, line in enumerate(search) if line.strip())
    trail = next(i for i, line in enumerate(reversed(search)) if line.strip())
    new = list(replace)
    for _ in range(lead):
        if new and not new[0].strip():
            new.pop(0)
    for _ in range(trail):
        if new and not new[-1].strip():
            new.pop()
    return search[lead : len(search) - trail], new


_GUTTER = re.compile(r"^\s*\d+ \| ?")  # a SHOW answer's line numbers: `4980 | def f():`


def _without_gutter(search: list[str], replace: list[str]) -> tuple[list[str], list[str]] | None:
    """SEARCH (and REPLACE) without the line numbers of a SHOW answer, when every non-blank
    SEARCH line carries them: a model told not to copy them sometimes does."""
    filled = [line for line in search if line.strip()]
    if not filled or not all(_GUTTER.match(line) for line in filled):
        return None
    return [_GUTTER.sub("", line, count=1) for line in search], [
        _GUTTER.sub("", line, count=1) for line in replace
    ]


def locate(
    lines: Sequence[str], search: list[str], replace: list[str]
) -> tuple[list[int], Normalize, list[str], list[str]]:
    """find_matches, retried without blank edge lines, then without copied line numbers;
    returns the search/replace it used."""
    starts, norm = find_matches(lines, search)
    if not starts and (not search[0].strip() or not search[-1].strip()):
        trimmed, new = _trim_blank_edges(search, replace)
        trimmed_starts, trimmed_norm = find_matches(lines, trimmed)
        if trimmed_starts:
            return trimmed_starts, trimmed_norm, trimmed, new
    if not starts and (bare := _without_gutter(search, replace)) is not None:
        bare_starts, bare_norm, bare_search, bare_replace = locate(lines, *bare)
        if bare_starts:
            return bare_starts, bare_norm, bare_search, bare_replace
    return starts, norm, search, replace
