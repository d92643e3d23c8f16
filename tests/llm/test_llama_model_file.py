"""The tiny model's GGUF is put together from its package's parts in ~/.cache the first time a
test or a benchmark asks (tests/llama_support.model_file). Several ask at once on a fresh
machine (the llama tests and benchmarks/show_requests.py under -n 2, other runs beside): the
package's own assemble() wrote the file in place, and a process that found it half written
failed (`already exists with an unexpected sha256`)."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.llama_support import MODEL_PACKAGE, model_file

gguf = pytest.importorskip(MODEL_PACKAGE, reason="the gemma3-270m GGUF package (llama extra)")
pytestmark = pytest.mark.slow  # each writes the 250 MB model file
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path))  # a fresh ~/.cache, as on a new machine
    return tmp_path


def sha256(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as file:
        while block := file.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def test_a_half_written_model_file_is_put_together_again_whole() -> None:
    target = gguf.default_output_path()
    with gguf.chunk_paths()[0].open("rb") as part:  # as another process writing it in place
        target.write_bytes(part.read(1 << 20))
    assert sha256(model_file(gguf)) == gguf.EXPECTED_SHA256


def test_processes_asking_at_once_each_get_the_whole_file(home: Path) -> None:
    code = (
        f"import sys; sys.path.insert(0, {str(ROOT)!r})\n"
        f"import {MODEL_PACKAGE} as gguf\n"
        "from tests.llama_support import model_file\n"
        "print(model_file(gguf))\n"
    )
    env = {**os.environ, "HOME": str(home)}
    asking = [
        subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
        for _ in range(3)
    ]  # fmt: skip
    answers = [p.communicate(timeout=300) for p in asking]
    assert [p.returncode for p in asking] == [0, 0, 0], [err for _, err in answers]
    (path,) = {out.strip() for out, _ in answers}
    assert sha256(path) == gguf.EXPECTED_SHA256
    assert sorted(p.name for p in Path(path).parent.iterdir()) == [Path(path).name]  # no .part
