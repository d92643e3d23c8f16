"""The base of every event, and what receives them."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar


@dataclass(frozen=True)
class Event:
    type: ClassVar[str] = "event"
    at: float = field(default_factory=time.time, kw_only=True)

    def to_dict(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        return {"type": self.type, **data}


EventSink = Callable[[Event], None]
