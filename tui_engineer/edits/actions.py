"""Sandbox actions in a model reply: one marker line each, beside the edit blocks.

    <<<<<<< INSTALL package-spec
    <<<<<<< SETUP shell command

They ask the sandbox to repair the test environment (docs/protocol.md, "Sandbox actions")."""

from __future__ import annotations

import re

from tui_engineer.base.errors import UserError
from tui_engineer.edits.parser import ParseError
from tui_engineer.sandbox.actions import InstallPackage, RunSetupCommand, SandboxAction

_ACTION = re.compile(r"^\s*<{5,9} *(?P<kind>INSTALL|SETUP)\b[ \t]*(?P<arg>.*?)\s*$", re.MULTILINE)


def parse_actions(reply: str) -> list[SandboxAction]:
    """The actions a reply asks for, in order. Raises ParseError (feedback for the model)."""
    actions: list[SandboxAction] = []
    for match in _ACTION.finditer(reply.replace("\r\n", "\n")):
        kind, arg = match["kind"], match["arg"]
        try:
            if kind == "INSTALL":
                actions.append(InstallPackage(arg))
            else:
                actions.append(RunSetupCommand(arg))
        except UserError as err:
            raise ParseError(
                f"Action {len(actions) + 1} ({kind}): {err} Write it as "
                "`<<<<<<< INSTALL package` or `<<<<<<< SETUP command` on one line."
            ) from None
    return actions
