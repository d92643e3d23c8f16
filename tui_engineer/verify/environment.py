"""The environment a test process gets: an allow list, never the API key.

A deny list of secret-looking names always misses some (SLACK_WEBHOOK_URL, SENTRY_DSN, a URL with
a password in it, the key copied into a variable with a harmless name), so tests get only the
variables named here, plus the ones the user lists in the `test_env` setting. Whatever the
lists say, a variable whose value contains the API key is dropped. See docs/sandbox.md.
A "key" shorter than MIN_SECRET_CHARS is a placeholder (local servers take any key, and users
write OPENAI_API_KEY=local): matching it would drop PATH=/usr/local/bin and more.
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Iterable, Mapping

# What toolchains and test runners need to find themselves and behave; no credentials.
DEFAULT_ALLOW = (
    "PATH", "HOME", "USER", "LOGNAME", "SHELL", "TERM", "TMPDIR", "TEMP", "TMP", "TZ",
    "LANG", "LANGUAGE", "LC_*", "COLUMNS", "LINES", "NO_COLOR", "FORCE_COLOR", "CI",
    "VIRTUAL_ENV", "CONDA_PREFIX", "CONDA_DEFAULT_ENV", "PYENV_ROOT", "PYENV_VERSION",
    "PYTHONPATH", "PYTHONHASHSEED", "PYTHONDONTWRITEBYTECODE", "PYTHONUNBUFFERED",
    "PYTHONIOENCODING", "PYTHONUTF8", "PYTHONWARNINGS", "PYTHONDEVMODE", "PYTHONFAULTHANDLER",
    "PYTHONNOUSERSITE", "PYTHONSAFEPATH",
    "JAVA_HOME", "GOPATH", "GOROOT", "GOCACHE", "CARGO_HOME", "RUSTUP_HOME", "NODE_PATH",
    "SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE",
    "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_RUNTIME_DIR",
)  # fmt: skip
# Real API keys are 20+ characters; placeholders like "local", "none", "x" are shorter.
MIN_SECRET_CHARS = 12


def _allowed(name: str, patterns: Iterable[str]) -> bool:
    # Case-sensitive: environment names are, and `PATH*` must not let `path_secret` through.
    return any(fnmatch.fnmatchcase(name, pattern) for pattern in patterns)


def env_for_tests(
    base: Mapping[str, str] | None = None,
    *,
    allow: Iterable[str] = (),
    deny_names: Iterable[str] = (),
    secret_values: Iterable[str] = (),
) -> dict[str, str]:
    """The variables of `base` (default: os.environ) that tests may see.

    `allow`: extra names or `PREFIX*` patterns (the user's `test_env`). `deny_names`: names never
    passed (the variable holding the API key). `secret_values`: values never passed, under any
    name (the API key itself)."""
    patterns = (*DEFAULT_ALLOW, *allow)
    denied = set(deny_names)
    secrets = [v for v in secret_values if len(v) >= MIN_SECRET_CHARS]
    source = os.environ if base is None else base
    passed = {
        name: value
        for name, value in source.items()
        if _allowed(name, patterns)
        and name not in denied
        and not any(secret in value for secret in secrets)
    }
    # A Python suite writes its progress as it goes, not in one block at its end: the first model
    # call waits until a run shows a test's result (verify/started.py), not for the whole run.
    passed.setdefault("PYTHONUNBUFFERED", "1")
    return passed


def parse_allow(text: str | None) -> list[str]:
    """`test_env` as the user writes it: names or `PREFIX*` patterns, by spaces or commas."""
    return [part for part in (text or "").replace(",", " ").split() if part]
