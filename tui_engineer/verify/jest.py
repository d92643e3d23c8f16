"""jest's results come from its JSON report: a jest command gets `--json --outputFile=<file>`
(outside the worktree, like pytest's JUnit file), as `npm test` does when the package's test
script runs jest (`npm test -- …`, `yarn test …`, `pnpm test …` pass them on)."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

from tui_engineer.shell_command import words
from tui_engineer.verify.report import TestReport, apply_runner_result
from tui_engineer.verify.runner_output import parse_jest_json

_NPM_TEST = (("npm", "test"), ("npm", "t"), ("npm", "run", "test"))


_tokens = words  # compound commands read as none: extra args could land anywhere


def _script_runs_jest(workdir: Path) -> bool:
    try:
        data = json.loads((workdir / "package.json").read_text(encoding="utf-8"))
        script = data["scripts"]["test"]
    except (OSError, ValueError, KeyError, TypeError):
        return False
    words = script.split() if isinstance(script, str) else []
    return bool(words) and Path(words[0]).name == "jest"


def with_jest_report_args(command: str, workdir: Path, report: Path) -> str | None:
    """`command` asking jest for its JSON report at `report`, or None when it is not jest."""
    tokens = _tokens(command)
    extra = f"--json --outputFile={shlex.quote(str(report))}"
    if tokens and Path(tokens[0]).name == "jest":
        return f"{command} {extra}"
    if tokens[:2] == ["npx", "jest"] or tokens[:3] == ["npx", "--no-install", "jest"]:
        return f"{command} {extra}"
    if any(tuple(tokens[: len(p)]) == p for p in _NPM_TEST) and _script_runs_jest(workdir):
        return f"{command} {extra}" if "--" in tokens else f"{command} -- {extra}"
    if tokens[:2] in (["yarn", "test"], ["pnpm", "test"]) and _script_runs_jest(workdir):
        return f"{command} {extra}"  # both pass arguments on to the script as they are
    return None


def read_jest_report(report: TestReport, path: Path, root: Path) -> None:
    """Counts and failures from jest's JSON file, when it wrote one."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return
    parsed = parse_jest_json(text, root)
    if parsed is not None:
        apply_runner_result(report, parsed)
