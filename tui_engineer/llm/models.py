"""Whether a server serves the model asked for: the one rule the TUI and the headless command
both apply to the server's model list (GET /models), before any paid call."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import PurePosixPath

# A model listed as a file (llama.cpp reports the model it loaded as its path) is a local,
# one-model server: it answers whatever name a request carries.
_MODEL_FILE_SUFFIXES = (".gguf", ".ggml", ".bin")


def _is_model_file(name: str) -> bool:
    return name.lower().endswith(_MODEL_FILE_SUFFIXES) or name.startswith(("/", "./", "~"))


def _file_names(listed: str) -> tuple[str, str]:
    path = PurePosixPath(listed.replace("\\", "/"))
    return path.name, path.stem


def names_model_file(wanted: str, listed: str) -> bool:
    """True when `listed` is a model file (a path llama.cpp reports) named `wanted`, with or
    without its suffix."""
    return _is_model_file(listed) and wanted in _file_names(listed)


def model_is_served(wanted: str, listed: Sequence[str]) -> bool:
    """True when a request for `wanted` will reach a model the server has.

    Accepted: an empty list (nothing to check against), the exact name, the file name of a listed
    model file (with or without its suffix), and any name when the server's only model is a file
    (llama.cpp ignores the name)."""
    if not listed or wanted in listed:
        return True
    files = [name for name in listed if _is_model_file(name)]
    if len(listed) == 1 and files:
        return True
    return any(names_model_file(wanted, name) for name in files)
