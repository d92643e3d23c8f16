"""Benchmark: the repository map (tui_engineer/context) on a generated 10,000-file repository.

Prints the map build time and peak memory, cold (empty cache) and warm (nothing changed, then
one file changed), and the file-contents part of a propose prompt for a request naming one
function near the end of a 6,000-line module: tokens, and whether the function is in it, with
the map and regions vs the old head-of-file approach (the first 24,000 characters per file).
Targets: cold < 5 s, warm < 0.3 s; the prompt holds the function the request names.

With `--library DIR` (e.g. an unpacked more-itertools sdist: `pip download --no-deps
--no-binary :all: more-itertools`), the same on a real library, for requests naming `--symbols`.

Run: python benchmarks/context_map.py [--files 10000] [--big-lines 6000] [--library DIR]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tui_engineer.context import build_map, gather_context  # noqa: E402
from tui_engineer.context.repomap import cache_file  # noqa: E402

PY_MODULE = '''"""Module {n}: generated for the map benchmark."""

import os
from dataclasses import dataclass


@dataclass
class Record{n}:
    key: str
    value: int = 0

    def doubled(self) -> int:
        return self.value * 2

    def describe(self, prefix: str = "") -> str:
        return f"{{prefix}}{{self.key}}={{self.value}}"


class Store{n}:
    """Keeps records by key."""

    def __init__(self) -> None:
        self.items: dict[str, Record{n}] = {{}}

    def put(self, record: Record{n}) -> None:
        self.items[record.key] = record

    def get(self, key: str) -> Record{n} | None:
        return self.items.get(key)

    async def flush(self, path: str) -> int:
        with open(path, "w") as out:
            for record in self.items.values():
                out.write(record.describe() + os.linesep)
        return len(self.items)


def load_{n}(path: str) -> Store{n}:
    store = Store{n}()
    for line in open(path):
        key, _, value = line.partition("=")
        store.put(Record{n}(key, int(value or 0)))
    return store


def helper_{n}(values: list[int]) -> int:
    total = 0
    for value in values:
        total += value
    return total
'''

TS_MODULE = """export interface Item{n} {{ id: number; name: string }}

export class List{n} {{
  private items: Item{n}[] = [];
  add(item: Item{n}): void {{ this.items.push(item); }}
  find(id: number): Item{n} | undefined {{ return this.items.find((i) => i.id === id); }}
}}

export function total{n}(items: Item{n}[]): number {{
  return items.reduce((sum, i) => sum + i.id, 0);
}}
"""

TARGET = "rolling_checksum"


def big_module(lines: int) -> str:
    """A module of about `lines` lines whose TARGET function sits near its end."""
    parts = ['"""A big module, like more-itertools\' more.py."""\n\n']
    count = 0
    while sum(p.count("\n") for p in parts) < lines - 40:
        parts.append(
            f"def step_{count}(iterable, n={count}):\n"
            f'    """Step {count} of the pipeline."""\n'
            f"    for item in iterable:\n"
            f"        yield item + n\n\n\n"
        )
        count += 1
    parts.append(
        f"def {TARGET}(data, window=16):\n"
        '    """The checksum the benchmark request names."""\n'
        "    total = 0\n"
        "    for index, byte in enumerate(data):\n"
        "        total = (total * 31 + byte) % 65521\n"
        "        if index >= window:\n"
        "            total -= data[index - window]\n"
        "    return total\n"
    )
    return "".join(parts)


def generate(root: Path, files: int, big_lines: int) -> None:
    root.mkdir(parents=True, exist_ok=True)
    for n in range(files - 1):
        folder = root / f"pkg{n // 200}"
        folder.mkdir(exist_ok=True)
        kind = n % 10
        if kind < 7:
            (folder / f"mod{n}.py").write_text(PY_MODULE.format(n=n))
        elif kind < 9:
            (folder / f"mod{n}.ts").write_text(TS_MODULE.format(n=n))
        else:
            (folder / f"notes{n}.md").write_text(f"# Notes {n}\n\nNothing to parse here.\n")
    (root / "big.py").write_text(big_module(big_lines))
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "generated"]):
        subprocess.run(["git", *args], cwd=root, check=True, env=_git_env())


def _git_env() -> dict[str, str]:
    return {
        **os.environ,
        "GIT_AUTHOR_NAME": "bench",
        "GIT_AUTHOR_EMAIL": "bench@example.com",
        "GIT_COMMITTER_NAME": "bench",
        "GIT_COMMITTER_EMAIL": "bench@example.com",
    }


def timed_build(root: Path) -> tuple[float, float, int]:
    """(seconds, peak MiB traced, files parsed) of one map build."""
    tracemalloc.start()
    started = time.perf_counter()
    built = build_map(root)
    seconds = time.perf_counter() - started
    peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    return seconds, peak, built.parsed


def untraced_build(root: Path) -> float:
    started = time.perf_counter()
    build_map(root)
    return time.perf_counter() - started


def head_of_file(root: Path, paths: list[str], cap: int = 24_000) -> str:
    """What the engine showed before: each named file from its top, cut at 24,000 characters."""
    return "\n\n".join((root / p).read_text()[:cap] for p in paths)


def compare_prompts(root: Path, request: str, symbol: str, path: str) -> None:
    """Tokens of the old and new prompt context for `request`, alone and as a plan step naming
    `path`, and whether each holds `def symbol(` / `class symbol`."""
    old_listing = "\n".join(sorted(build_map(root).files)[:400])  # the old listing: 400 names
    wanted = (f"def {symbol}(", f"class {symbol}")
    for files in ([], [path]):  # the request alone; a plan step naming the file
        old = old_listing + "\n" + head_of_file(root, files)
        started = time.perf_counter()
        context = gather_context(root, request, step_files=files, budget_chars=120_000)
        took = time.perf_counter() - started
        new = context.listing + "\n" + context.contents
        where = "step names the file" if files else "request only       "
        print(
            f"  {where}: old head-of-file {len(old) // 4:>6,} tokens, holds it: "
            f"{any(w in old for w in wanted)!s:5} | map + regions {len(new) // 4:>6,} tokens, "
            f"holds it: {any(w in context.contents for w in wanted)} ({took:.2f}s to gather)"
        )


def bench_generated(home: Path, files: int, big_lines: int) -> None:
    root = home / "repo"
    started = time.perf_counter()
    generate(root, files, big_lines)
    print(f"generated {files:,} files in {time.perf_counter() - started:.1f}s")
    cold = untraced_build(root)
    size = cache_file(root).stat().st_size / 2**20
    warm = min(untraced_build(root) for _ in range(3))
    cache = cache_file(root)  # a database: its write-ahead log beside it, if a reader is left
    for part in (cache, cache.with_name(f"{cache.name}-wal"), cache.with_name(f"{cache.name}-shm")):
        part.unlink(missing_ok=True)
    _, cold_peak, parsed = timed_build(root)
    _, warm_peak, reparsed = timed_build(root)
    changed = PY_MODULE.format(n=0) + "\n\ndef extra():\n    pass\n"
    (root / "pkg0" / "mod0.py").write_text(changed)
    one_changed, _, changed_parsed = timed_build(root)
    print(
        f"cold build: {cold:.2f}s (target < 5 s), {parsed:,} files parsed, "
        f"peak {cold_peak:.0f} MiB traced; cache file {size:.1f} MiB"
    )
    print(
        f"warm build: {warm:.3f}s (target < 0.3 s), {reparsed} files parsed, "
        f"peak {warm_peak:.0f} MiB traced"
    )
    print(f"one file changed: {changed_parsed} file parsed (traced run {one_changed:.3f}s)")
    request = f"make {TARGET} handle an empty window"
    print(f"prompt context for `{request}` ({TARGET}: line ~{big_lines - 8} of big.py):")
    compare_prompts(root, request, TARGET, "big.py")


def bench_library(home: Path, source: Path, symbols: list[str]) -> None:
    """A real library (e.g. an unpacked more-itertools sdist), copied into a fresh repository."""
    root = home / source.name
    shutil.copytree(source, root, ignore=shutil.ignore_patterns(".git"))
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "import"]):
        subprocess.run(["git", *args], cwd=root, check=True, env=_git_env())
    cold = untraced_build(root)
    warm = min(untraced_build(root) for _ in range(3))
    built = build_map(root)
    count = sum(1 for _ in built.symbols())
    print(
        f"{source.name}: {len(built.files):,} files, {count:,} symbols; "
        f"cold build {cold:.2f}s, warm {warm:.3f}s"
    )
    for symbol in symbols:
        defined = [p for p, _ in built.defining(symbol) if not p.endswith(".pyi")]
        if not defined:
            print(f"  {symbol}: not defined in {source.name}")
            continue
        line = built.defining(symbol)[0][1].line
        request = f"{symbol} should raise ValueError on bad input"
        print(f"prompt context for `{request}` ({symbol}: line {line} of {defined[0]}):")
        compare_prompts(root, request, symbol, defined[0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--big-lines", type=int, default=6_000)
    parser.add_argument("--library", type=Path, help="a real source tree to map as well")
    parser.add_argument("--symbols", default="argmax,serialize,windowed,chunked")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as home:
        os.environ["XDG_CACHE_HOME"] = str(Path(home) / "cache")  # an empty cache to start
        bench_generated(Path(home), args.files, args.big_lines)
        if args.library:
            bench_library(Path(home), args.library, args.symbols.split(","))


if __name__ == "__main__":
    main()
