"""tox's setenv as the test command's prefix (`PYTHONDONTWRITEBYTECODE=1 python runtests.py`):
which of a project's variables are passed on, for tox.ini (config/tox_ini.py) and tox.toml
(config/tox_toml.py) alike."""

from __future__ import annotations

import re
import shlex

UNREAD = "\x00"  # stands for a substitution only tox can make (the readers write it)

# Set by the sandbox for the run (or the machine's): never from a project's setenv.
_NOT_EXPORTED = frozenset(
    {"PATH", "HOME", "VIRTUAL_ENV", "PYTHONHOME", "LD_PRELOAD", "LD_LIBRARY_PATH", "TMPDIR",
     "PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL"}
)  # fmt: skip
_TOX_PLACES = re.compile(
    r"\{(?:toxinidir|tox_root|toxworkdir|work_dir|envdir|env_dir|envtmpdir|env_tmp_dir|"
    r"envlogdir|env_log_dir|envsitepackagesdir|temp_dir|homedir)"
)


def exported(values: dict[str, str], raw: dict[str, str], used: set[str]) -> dict[str, str]:
    """The setenv variables passed to the test command: named plainly, not the sandbox's own,
    not empty, not naming a folder of tox's (`{toxinidir}`: a path on your machine, not in
    the sandbox's copy), not used only to build the commands (`{env:X}`)."""
    found = {}
    for name, value in values.items():
        written = raw.get(name, "")
        if not re.fullmatch(r"[A-Za-z_]\w*", name) or name in _NOT_EXPORTED or name in used:
            continue
        if not value or UNREAD in value or _TOX_PLACES.search(written) or "|" in name:
            continue
        found[name] = value
    return found


def assignments(variables: dict[str, str]) -> str:
    """`A=1 B='two words'`: the variables as a command's prefix."""
    return " ".join(f"{name}={shlex.quote(value)}" for name, value in variables.items())
