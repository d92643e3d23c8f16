"""What a model call waits for, in one wording for the TUI's status bar and headless progress:
"step 2 · waiting for the model: propose", then "step 2 · the model writes: propose" once its
reply streams. A front end adds the call's own elapsed time ("· 14 s")."""

from __future__ import annotations


def call_wait(step: int | None, purpose: str, streaming: bool = False) -> str:
    """The call's step (none for the plan), what it waits for, and its purpose."""
    where = f"step {step} · " if step is not None else ""
    doing = "the model writes" if streaming else "waiting for the model"
    return f"{where}{doing}: {purpose}"
