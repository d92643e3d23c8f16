"""One file of the repository map: its path, and where its symbols are (context/map_cache.py
holds them by git's blob id, read when a prompt asks)."""

from __future__ import annotations

import marshal
from dataclasses import dataclass, field

from tui_engineer.context.map_cache import MapCache
from tui_engineer.context.symbols import Symbol

Row = tuple[str, str, int, int, str]  # a Symbol as cached (marshalled per file: FileMap.packed)


@dataclass(slots=True)
class FileMap:
    path: str
    lines: int = 0  # 0 for files not parsed
    # Where its symbol rows are: read from the cache when asked (a prompt looks at a few
    # files' rows; holding every file's cost ~20 MiB at 40,000 files, as tuples ~60 MiB).
    blob: str = ""  # git's blob id of the bytes parsed; "" for files not parsed
    parsed: bool = False  # a grammar read it (symbols may still be empty)
    cache: MapCache | None = field(default=None, repr=False, compare=False)

    @property
    def packed(self) -> bytes:
        """The symbol rows as cached, marshalled."""
        return self.cache.packed(self.blob) if self.cache is not None and self.blob else b""

    @property
    def rows(self) -> tuple[Row, ...]:
        packed = self.packed
        return marshal.loads(packed) if packed else ()

    @property
    def symbols(self) -> list[Symbol]:
        return [Symbol._make(row) for row in self.rows]
