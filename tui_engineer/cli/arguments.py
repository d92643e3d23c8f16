"""The command line's parsers: each subcommand's flags, and the settings they give. Shared by
cli.py and what opens the app (launch.py, which each browser tab under `serve` runs too)."""

from __future__ import annotations

import argparse
from pathlib import Path

from tui_engineer import __version__


def add_model_flags(parser: argparse.ArgumentParser) -> None:
    """A flag for each setting whose declaration has one (config/settings.py), and -C."""
    from tui_engineer.config.fields import FIELDS

    group = parser.add_argument_group("model and verification")
    for spec in FIELDS.values():
        flag = spec.flag
        if flag is None:
            continue
        if flag.const is not None:  # a switch: --allow-network, --no-pipeline
            group.add_argument(flag.name, dest=spec.name, action="store_const", const=flag.const,
                               help=flag.help)  # fmt: skip
            continue
        kind = float if flag.scale != 1.0 else spec.kind
        dest = spec.name if flag.scale == 1.0 else flag.name.removeprefix("--").replace("-", "_")
        choices = list(flag.choices) or None
        group.add_argument(flag.name, dest=dest, type=kind, choices=choices, help=flag.help)
    group.add_argument("-C", "--repo", type=Path, default=None, help="repo folder (default: .)")


def add_resume_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--resume",
        nargs="?",
        const="",
        metavar="RUN",
        help="go on with the last stopped session of this repository (or session RUN, as "
        "`tui-engineer runs` lists it): its plan, accepted steps and chat, no new plan",
    )


def add_no_tests_flags(parser: argparse.ArgumentParser) -> None:
    """What to do in a repository with no test command (a new project, say)."""
    group = parser.add_mutually_exclusive_group()
    group.add_argument(
        "--write-tests",
        dest="no_tests",
        action="store_const",
        const="write",
        default="",
        help="when no test command is found: the first step writes the tests (test-first)",
    )
    group.add_argument(
        "--unverified",
        dest="no_tests",
        action="store_const",
        const="unverified",
        help="run no tests: every step is reviewed and committed marked 'unverified'",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tui-engineer",
        description="A pair-programmer in your terminal. Run it inside a git repository.",
        epilog="Subcommands: 'tui-engineer config' shows the effective settings; "
        "'tui-engineer run REQUEST' works headless; 'tui-engineer bench SUITE' evaluates the "
        "engine; 'tui-engineer demo' tries it with a built-in model; 'tui-engineer serve' "
        "runs it in a browser; 'tui-engineer doctor' checks what a session needs; "
        "'tui-engineer acp' serves an editor over the Agent Client Protocol. See README.md.",
    )
    parser.add_argument("--version", action="version", version=f"tui-engineer {__version__}")
    parser.add_argument("request", nargs="?", help="what you want done (optional)")
    parser.add_argument("--init", action="store_true", help="create a git repository here first")
    add_resume_flag(parser)
    add_no_tests_flags(parser)
    add_model_flags(parser)
    return parser


def build_config_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tui-engineer config",
        description="Print the effective settings and where each one came from.",
    )
    add_model_flags(parser)
    return parser


def build_doctor_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tui-engineer doctor",
        description="Check what a session needs here (git, the repository, the sandbox, the "
        "model server, the test command, config files) and say what to do for each miss. "
        "Exit 0 when a session can start, else 1.",
    )
    add_model_flags(parser)
    return parser


def build_run_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tui-engineer run",
        description="Work on REQUEST without the TUI: plan, edit, test, and commit each step.",
    )
    parser.add_argument("request", nargs="?", help="what you want done")
    parser.add_argument(
        "--yes",
        action="store_true",
        help="nobody at the keys: --approval auto, and stop at a step that fails (an unverified "
        "session's steps are accepted)",
    )
    parser.add_argument("--json", action="store_true", help="print engine events as JSON lines")
    parser.add_argument("--no-plan", action="store_true", help="do the request as a single step")
    parser.add_argument(
        "--allow-dirty", action="store_true", help="start on top of uncommitted changes"
    )
    parser.add_argument("--no-record", action="store_true", help="do not write a run record")
    parser.add_argument("--replay", type=Path, help="use a recorded run's model replies")
    add_resume_flag(parser)
    add_no_tests_flags(parser)
    add_model_flags(parser)
    return parser


def build_acp_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tui-engineer acp",
        description="Serve the Agent Client Protocol on stdin/stdout, for an editor (Zed, "
        "Neovim, JetBrains, toad...): each session works in the folder the editor names, with "
        "the settings given here and in the usual config files. See docs/acp.md.",
    )
    parser.add_argument(
        "--allow-dirty", action="store_true", help="start sessions on top of uncommitted changes"
    )
    add_no_tests_flags(parser)
    add_model_flags(parser)
    return parser


def flag_overrides(args: argparse.Namespace) -> dict[str, object]:
    """The settings given on the command line (None means 'not given'), in each setting's own
    unit (--max-minutes is given in minutes, max_wall_seconds kept in seconds)."""
    from tui_engineer.config.fields import FIELDS

    flags: dict[str, object] = {}
    for spec in FIELDS.values():
        if spec.flag is None:
            continue
        scaled = spec.flag.scale != 1.0
        dest = spec.flag.name.removeprefix("--").replace("-", "_") if scaled else spec.name
        value = getattr(args, dest, None)
        if value is not None:
            flags[spec.name] = value * spec.flag.scale if scaled else value
    return flags


def check_resume(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """--resume goes on with a recorded request: a new one, or a replay, is a different run."""
    if args.request:
        parser.error(
            f"--resume goes on with a recorded session, so it takes no REQUEST ({args.request!r}"
            "): name the session after --resume (tui-engineer runs lists them), or leave "
            "--resume out to start a new session"
        )
    if getattr(args, "replay", None) is not None:
        parser.error("--resume and --replay cannot be used together")


def build_demo_parser() -> argparse.ArgumentParser:
    from tui_engineer.demo import DEFAULT_REQUEST

    parser = argparse.ArgumentParser(
        prog="tui-engineer demo",
        description="Try the app with no key and no server: a sample repo in a temporary "
        "folder and a built-in scripted model (it plans, writes a test first, fails once, "
        "fixes, and reacts to a reject reason and to 'still wrong').",
    )
    parser.add_argument("request", nargs="?", default=DEFAULT_REQUEST, help="the request")
    parser.add_argument("--dir", type=Path, help="where to make the sample repo (default: temp)")
    parser.add_argument(
        "--resume",
        type=Path,
        metavar="REPO",
        help="go on with the session stopped in a sample repo the demo kept (the path it "
        "printed), with the built-in model",
    )
    return parser


def build_serve_parser() -> argparse.ArgumentParser:
    from tui_engineer.cli.web import DEFAULT_HOST, DEFAULT_PORT

    parser = argparse.ArgumentParser(
        prog="tui-engineer serve",
        description="Run the app in a browser: each browser tab gets its own session. "
        "Any other argument (a REQUEST, -C REPO, --model, ...) is passed on to the app, "
        "or with --demo to 'tui-engineer demo'.",
        epilog="Whoever can open the page can edit files and run commands here, as you: keep "
        "the default 127.0.0.1 unless the network in between is yours.",
        allow_abbrev=False,  # unknown options pass on to the app; no prefix guessing
    )
    parser.add_argument("--host", default=DEFAULT_HOST, help=f"address (default {DEFAULT_HOST})")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"default {DEFAULT_PORT}")
    parser.add_argument("--demo", action="store_true", help="serve 'tui-engineer demo'")
    parser.add_argument(
        "--public-url", help="the URL browsers use, if not http://HOST:PORT (e.g. behind a proxy)"
    )
    return parser
