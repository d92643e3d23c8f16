"""`tui-engineer bench export`: bench runs and, opt-in, interactive sessions (their run records
plus the human's verdict) as one dataset: JSONL, or Parquet with pyarrow. Schema: docs/bench.md.
Every text field is scrubbed of secrets on the way out."""

from __future__ import annotations

import argparse
import json
import os
import re
from collections.abc import Iterable, Sequence
from pathlib import Path

from tui_engineer.base.errors import UserError
from tui_engineer.base.secrets import mask_values, secret_values
from tui_engineer.bench.results import read_results
from tui_engineer.records.recorder import read_record, runs_dir

SCHEMA_VERSION = 1
REDACTED = "[redacted]"
# (pattern, replacement): key-shaped strings, bearer tokens, and `NAME = value` where the name
# says the value is secret.
_SECRET_PATTERNS = [
    (re.compile(r"\b(sk|pk|rk)-[A-Za-z0-9_\-]{16,}"), REDACTED),
    (re.compile(r"\bgh[pousr]_[A-Za-z0-9]{20,}"), REDACTED),
    (re.compile(r"\bxox[abp]-[A-Za-z0-9\-]{10,}"), REDACTED),
    (re.compile(r"(?i)\b(Bearer)\s+[A-Za-z0-9._\-]{12,}"), rf"\1 {REDACTED}"),
    (
        re.compile(
            r"(?i)\b(\w*(?:API_?KEY|TOKEN|SECRET|PASSWORD|PASSWD))(\s*[:=]\s*)['\"]?[^\s'\"]{4,}"
        ),
        rf"\1\2{REDACTED}",
    ),
]


def redact(text: str, secrets: Sequence[str] = ()) -> str:
    text = mask_values(text, secrets, REDACTED)
    for pattern, replacement in _SECRET_PATTERNS:
        text = pattern.sub(replacement, text)
    return text


def redact_tree(value: object, secrets: Sequence[str]) -> object:
    """Every string inside dicts and lists, redacted (before JSON encoding, so the encoding's
    quotes and escapes are never cut)."""
    if isinstance(value, str):
        return redact(value, secrets)
    if isinstance(value, dict):
        return {k: redact_tree(v, secrets) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redact_tree(v, secrets) for v in value]
    return value


def _row_from_record(events: list[dict[str, object]]) -> dict[str, object]:
    """The record-derived columns: request, model, verdict, outcome, usage, events."""
    by_type: dict[str, dict[str, object]] = {}
    for event in events:
        by_type[str(event.get("type"))] = event
    started = by_type.get("session_started", {})
    verdict = by_type.get("verdict")
    usage = by_type.get("usage", {})
    return {
        "session_id": started.get("session_id"),
        "request": started.get("request"),
        "model": started.get("model"),
        "outcome": by_type.get("session_finished", {}).get("outcome"),
        "verdict_ran": verdict.get("ran") if verdict else None,
        "verdict_worked": verdict.get("worked") if verdict else None,
        "verdict_perfect": verdict.get("perfect") if verdict else None,
        "verdict_comment": verdict.get("comment") if verdict else None,
        "prompt_tokens": usage.get("prompt_tokens", 0),
        "completion_tokens": usage.get("completion_tokens", 0),
        "usd": usage.get("usd"),
        "events": events,  # JSON-encoded by _clean, after redaction
    }


COLUMNS = [
    "schema", "source", "suite", "task", "config", "repeat", "session_id", "request", "model",
    "outcome", "ran", "worked", "perfect", "steps", "fix_attempts", "edits_ok", "edits_refused",
    "follow_ups", "prompt_tokens", "completion_tokens", "usd", "wall_seconds", "verdict_ran",
    "verdict_worked", "verdict_perfect", "verdict_comment", "events",
]  # fmt: skip


def bench_rows(folder: Path) -> Iterable[dict[str, object]]:
    results = read_results(folder)
    if not results:
        raise UserError(f"{folder}: no bench results here (no results.jsonl with runs)")
    meta_path = folder / "bench.json"
    suite = json.loads(meta_path.read_text())["suite"] if meta_path.is_file() else None
    for result in results:
        record = folder / result.record if result.record else None
        events = read_record(record) if record and record.is_file() else []
        row = {**_row_from_record(events), **result.to_dict()}
        row.update(source="bench", suite=suite)
        yield row


def session_rows(repo: Path) -> Iterable[dict[str, object]]:
    """A repo's interactive sessions (only those the human gave a verdict)."""
    for path in sorted(runs_dir(repo).glob("*.jsonl")):
        events = read_record(path)
        if not any(e.get("type") == "verdict" for e in events):
            continue
        row = _row_from_record(events)
        row.update(source="session", ran=row["verdict_ran"], worked=row["verdict_worked"],
                   perfect=row["verdict_perfect"])  # fmt: skip
        yield row


def _clean(row: dict[str, object], secrets: Sequence[str]) -> dict[str, object]:
    out: dict[str, object] = {name: row.get(name) for name in COLUMNS}
    out["schema"] = SCHEMA_VERSION
    out = redact_tree(out, secrets)  # type: ignore[assignment]
    out["events"] = json.dumps(out["events"] or [], ensure_ascii=False)
    return out


def export(rows: Iterable[dict[str, object]], path: Path) -> int:
    secrets = secret_values(os.environ)  # the shell's rule too
    cleaned = [_clean(row, secrets) for row in rows]
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix == ".parquet":
        try:
            import pyarrow as pa
            import pyarrow.parquet as pq
        except ImportError:
            raise UserError(
                'Parquet export needs pyarrow: pip install "tui-engineer[bench]"'
            ) from None
        pq.write_table(pa.Table.from_pylist(cleaned), path)
    else:
        with path.open("w", encoding="utf-8") as out:
            for row in cleaned:
                out.write(json.dumps(row, ensure_ascii=False) + "\n")
    return len(cleaned)


def cmd_export(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="tui-engineer bench export",
        description="Export bench runs (and, opt-in, interactive sessions with a verdict) as one "
        "dataset, secrets redacted. Schema: docs/bench.md.",
    )
    parser.add_argument("folders", nargs="*", type=Path, help="bench results folders")
    parser.add_argument(
        "--sessions", action="append", type=Path, default=[], metavar="REPO",
        help="also export this repo's recorded sessions that have a verdict (opt-in)",
    )  # fmt: skip
    parser.add_argument("--out", type=Path, required=True, help="FILE.jsonl or FILE.parquet")
    args = parser.parse_args(argv)
    if not args.folders and not args.sessions:
        parser.error("give bench folders and/or --sessions REPO")
    rows: list[dict[str, object]] = []
    for folder in args.folders:
        rows += bench_rows(folder)
    for repo in args.sessions:
        rows += session_rows(repo)
    count = export(rows, args.out)
    print(f"{count} rows → {args.out}")
    return 0
