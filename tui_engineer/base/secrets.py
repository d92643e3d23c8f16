"""Which values are secrets, in one place: the values of variables whose name says they hold one
(`OPENAI_API_KEY`, `GITHUB_TOKEN`, `DB_PASSWORD`...), long enough to be real. What the human's
shell sends to the model (base/user_shell.py) and what `bench export` writes out
(bench/dataset.py) are masked by this one rule, so a secret one of them hides the other does
too."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

SECRET_NAME = re.compile(r"(?i)(KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL)")
# Shorter values are placeholders ("local", "x", "none"): masking them mangles ordinary text.
MIN_SECRET_CHARS = 8


def secret_values(env: Mapping[str, str], extra: Iterable[str | None] = ()) -> tuple[str, ...]:
    """Values of secret-named variables in `env`, and `extra` (the API key), longest first (so
    a secret that holds another is masked whole)."""
    found = {v for k, v in env.items() if SECRET_NAME.search(k) and len(v) >= MIN_SECRET_CHARS}
    found |= {v for v in extra if v and len(v) >= MIN_SECRET_CHARS}
    return tuple(sorted(found, key=len, reverse=True))


def mask_values(text: str, secrets: Iterable[str], mask: str) -> str:
    """`text` with each of `secrets` replaced by `mask`."""
    for secret in secrets:
        text = text.replace(secret, mask)
    return text
