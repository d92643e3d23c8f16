"""What a JavaScript package declares for its tests: the `test` script of package.json, read
as words (tui_engineer/base/shell_command.py), and whether `npm test` and its like run it.
Shared by the runners a package's test script can start (jest, node --test)."""

from __future__ import annotations

import json
from pathlib import Path

from tui_engineer.base.shell_command import tokens, words

NPM_RUNNERS = ("npm", "yarn", "pnpm")


def test_script(root: Path | None) -> list[str]:
    """The tokens of package.json's `test` script under `root` ([] when there is none)."""
    if root is None:
        return []
    try:
        script = json.loads((root / "package.json").read_text(encoding="utf-8"))["scripts"]["test"]
    except (OSError, ValueError, KeyError, TypeError):
        return []
    return (tokens(script) or []) if isinstance(script, str) else []


def is_npm_test(command: str) -> bool:
    """`npm test`, `yarn test`, `pnpm t`: the package's test script with no arguments."""
    found = words(command)
    return len(found) == 2 and found[0] in NPM_RUNNERS and found[1] in ("test", "t")


def with_script_args(command: str, args: str) -> str:
    """`command` (an npm-style test command) passing `args` on to the test script: npm needs
    `--` before them, yarn and pnpm pass them on as they are."""
    return f"{command} -- {args}" if words(command)[0] == "npm" else f"{command} {args}"
