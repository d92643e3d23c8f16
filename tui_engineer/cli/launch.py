"""Opening the app from a command line: `tui-engineer [REQUEST]` and `tui-engineer demo`, as the
terminal runs them and as each browser tab under `serve` does (web_tab.py), and the one line a
problem is said in. Textual is imported only once the app opens."""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from tui_engineer.base import start_collection
from tui_engineer.base.errors import UserError
from tui_engineer.cli.arguments import build_demo_parser, build_parser, check_resume, flag_overrides
from tui_engineer.cli.terminal import require_terminal


def open_app(argv: Sequence[str], *, notes: Sequence[str] = (), resume: str | None = None) -> int:
    """`tui-engineer [REQUEST] [flags]`: the app in a repository; `notes` are said first.
    `resume`: a session to go on with in place of REQUEST (serve: a reloaded tab's)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.resume is not None:
        check_resume(parser, args)
    if resume is not None:
        args.request, args.resume = "", resume
    require_terminal()
    start_collection.hold()  # until the start-up checks are done (tui/startup.py), or the end
    try:
        # The TUI: Textual is imported here only, so --help and the headless commands stay fast.
        from tui_engineer.session.options import RunOptions
        from tui_engineer.tui.app import TuiEngineerApp

        options = RunOptions(
            request=args.request or "",
            repo=(args.repo or Path.cwd()).resolve(),
            flags=flag_overrides(args),
            no_tests=args.no_tests,
            resume=args.resume,
        )
        code = TuiEngineerApp(options, init=args.init, notes=tuple(notes)).run()
    finally:
        start_collection.release()
    return code if isinstance(code, int) else 0


def open_demo(argv: Sequence[str]) -> int:
    """`tui-engineer demo [REQUEST]`: the app on a sample repo, with a built-in model;
    `--resume REPO` goes on with the session stopped in a sample repo kept earlier (a plain
    `tui-engineer --resume` there would need a model server and key)."""
    args = build_demo_parser().parse_args(argv)
    require_terminal()
    start_collection.hold()  # as open_app
    try:
        from tui_engineer.demo import DemoServer, demo_flags, make_sample_repo
        from tui_engineer.session.options import RunOptions
        from tui_engineer.tui.app import TuiEngineerApp

        repo = args.resume.resolve() if args.resume else make_sample_repo(args.dir)
        with DemoServer() as server:
            options = RunOptions(
                request=args.request,
                repo=repo,
                flags=demo_flags(server.base_url),
                resume="" if args.resume else None,
            )
            code = TuiEngineerApp(options).run()
    finally:
        start_collection.release()
    # stderr: under `serve`, stdout is the app's channel to the web server, while stderr reaches
    # the server's console.
    print(f"tui-engineer demo: {kept_sample(repo)}", file=sys.stderr)
    return code if isinstance(code, int) else 0


def kept_sample(repo: Path) -> str:
    """Where the sample repo is kept, and how to go on with its session if it was stopped."""
    from tui_engineer.session.resume import NothingToResume, load_run

    said = f"the sample repo is kept in {repo} (see its git log)"
    try:
        load_run(repo)
    except (NothingToResume, OSError):
        return said
    return f"{said}; to go on with its stopped session: tui-engineer demo --resume {repo}"


def reported(command: Callable[[list[str]], int], argv: list[str]) -> int:
    """Run `command`; a problem it meets is one line on stderr and an exit code, never a
    traceback."""
    try:
        return command(argv)
    except UserError as err:
        from tui_engineer.base.names import readable  # a file name in it may not be UTF-8

        print(f"tui-engineer: {readable(str(err))}", file=sys.stderr)
        return err.exit_code
    except KeyboardInterrupt:
        print("tui-engineer: interrupted", file=sys.stderr)
        return 130
    except Exception as err:  # a bug of ours: said with the way out, never a traceback
        from tui_engineer.base.crash import INTERNAL_ERROR_EXIT, internal_error_message
        from tui_engineer.base.disk import disk_trouble

        print(f"tui-engineer: {internal_error_message(err)}", file=sys.stderr)
        full = disk_trouble(err)  # the machine's state, not a bug: exit as a setup problem
        return INTERNAL_ERROR_EXIT if full is None else full.exit_code
