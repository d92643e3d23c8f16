"""The engine and everything below it never import Textual: the TUI is one client of many. The
core (session/, engine/) never knows which front end drives it, and no module imports one that
imports it back (docs: CONTRIBUTING.md, "How the code is layered")."""

from __future__ import annotations

import ast
import graphlib
from pathlib import Path

import pytest

from tests.conftest import fresh_python

PACKAGE = Path(__file__).resolve().parent.parent / "tui_engineer"
UI_ONLY = {"tui"}  # folders allowed to import textual
# The bench's own screen (`bench --tui`), imported only when asked for: the bench is a front end
# of its own, beside the TUI, not under it.
UI_MODULES = {"bench/app.py", "bench/screen.py"}
CORE = {"session", "engine"}  # what every front end starts
# The front ends and what starts them: the core imports none of these, not even lazily.
FRONT_ENDS = {"tui", "headless", "bench", "acp", "cli", "demo", "__main__"}


def _engine_side_modules() -> list[Path]:
    return [
        path
        for path in PACKAGE.rglob("*.py")
        if path.relative_to(PACKAGE).parts[0] not in UI_ONLY
        and path.relative_to(PACKAGE).as_posix() not in UI_MODULES
    ]


def _imported_roots(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    roots: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            roots.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            roots.add(node.module.split(".")[0])
    return roots


@pytest.mark.parametrize(
    "module", _engine_side_modules(), ids=lambda p: str(p.relative_to(PACKAGE))
)
def test_no_textual_import_in_engine_side_module(module: Path) -> None:
    assert "textual" not in _imported_roots(module)


def test_importing_the_engine_loads_no_textual() -> None:
    code = (
        "import sys, tui_engineer.engine.session, tui_engineer.session.run; "
        "print('textual' in sys.modules or 'rich' in sys.modules)"
    )
    assert fresh_python(code).strip() == "False"


def test_the_acp_agent_loads_no_textual() -> None:
    # Editors start `tui-engineer acp` for every session: it must not pay for (or depend on)
    # the TUI, and a Textual import would be a front end leaking into another.
    code = (
        "import sys, tui_engineer.cli.main, tui_engineer.acp.command, tui_engineer.acp.agent, "
        "tui_engineer.acp.session, tui_engineer.acp.updates; "
        "print('textual' in sys.modules)"
    )
    assert fresh_python(code).strip() == "False"


def test_headless_and_editor_sessions_load_no_terminal_emulator() -> None:
    # pyte (with wcwidth) draws the TUI's Shell pane; `run` and `acp` show a command's output
    # as text, and every session of theirs paid ~15 ms (30-40 ms alone) to import it.
    code = (
        "import sys, tui_engineer.cli.main, tui_engineer.session.run, "
        "tui_engineer.headless.printer, tui_engineer.headless.reviewers, "
        "tui_engineer.acp.agent, tui_engineer.acp.shell; "
        "print([name for name in ('pyte', 'wcwidth') if name in sys.modules])"
    )
    assert fresh_python(code).strip() == "[]"


def test_the_app_paints_before_the_engine_and_the_model_sdk_load() -> None:
    # The openai SDK was over half of `tui-engineer demo`'s CPU time to its first frame, the
    # engine with GitPython a third of the rest: both load behind the first frame
    # (benchmarks/first_paint.py).
    heavy = ["openai", "git", "tui_engineer.engine.session", "tui_engineer.session.prepare"]
    heavy += ["tui_engineer.session.run"]
    code = (
        "import sys, tui_engineer.cli.main, tui_engineer.demo, tui_engineer.tui.app, "
        "tui_engineer.session.options; "
        f"print([name for name in {heavy!r} if name in sys.modules])"
    )
    assert fresh_python(code).strip() == "[]"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _package_modules() -> dict[str, Path]:
    # Bench suites are data (other projects' code), not part of the package's import graph.
    return {
        _module_name(path): path for path in PACKAGE.rglob("*.py") if "suites" not in path.parts
    }


def _imported_modules(path: Path, modules: dict[str, Path]) -> set[str]:
    """Every tui_engineer module `path` imports, at the top or inside a function: a lazy import
    is still a dependency. `from a.b import c` names module a.b.c when it is one, else a.b."""
    targets: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            targets += [
                f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in modules else node.module
                for a in node.names
            ]
    found = set()
    for target in targets:
        while target and target not in modules:
            target = target.rpartition(".")[0]
        if target.startswith("tui_engineer") and target != _module_name(path):
            found.add(target)
    return found


def _import_graph() -> dict[str, set[str]]:
    modules = _package_modules()
    return {name: _imported_modules(path, modules) for name, path in modules.items()}


def _layer(module: str) -> str:
    return module.split(".")[1] if "." in module else ""


# The layers, lowest first (CONTRIBUTING.md, "How the code is layered"). A module imports only
# from layers below its own, or from its own top-level package: two packages of one layer never
# import each other (the front ends among them). A layer's members are top-level packages or
# modules ("" is the package's own __init__), or a module named whole where it is not its
# package's layer.
LAYERS: list[tuple[str, set[str]]] = [
    ("base", {"", "base"}),
    ("services", {"llm", "verify", "vcs"}),
    ("settings", {"config"}),
    ("sandbox", {"sandbox"}),
    ("edits", {"edits"}),
    ("context", {"context"}),
    ("engine", {"engine"}),
    ("records", {"records"}),
    ("tools", {"mcp_tools"}),  # the user's MCP servers, started by the session core
    ("session core", {"session"}),
    # The bench drives sessions as a benchmark: a front end of its own, with its own screen
    # (bench/screen.py); the TUI imports nothing of it, nor it of the TUI.
    ("front ends", {"tui", "headless", "acp", "demo", "bench"}),
    ("command line", {"cli", "__main__"}),
]
# The command line's modules are one whole: they may import each other.
ONE_WHOLE = {"command line"}
# Below the session core, the interactive front ends reach only the engine (its events and
# types) and what only reads: a reply's prose, prices, recorded runs. The repository, the
# settings, the sandbox and the model go through session/.
FRONT_END_REACH = {"engine", "edits.prose", "llm.usage", "records"}
INTERACTIVE = {"tui", "acp", "headless"}


def _member(module: str) -> str:
    """`module`'s name below the package: "engine.session", "cli", "" for the package."""
    return module.removeprefix("tui_engineer").removeprefix(".")


def _rank(module: str) -> int:
    name = _member(module)
    for rank, (_, members) in reversed(list(enumerate(LAYERS))):
        if name in members:
            return rank
    for rank, (_, members) in enumerate(LAYERS):
        if name.split(".")[0] in members:
            return rank
    raise AssertionError(f"{module} is in no layer: add it to LAYERS")


def test_every_import_goes_down_the_layers() -> None:
    wrong = []
    for module, deps in _import_graph().items():
        for dep in deps:
            same = _member(module).split(".")[0] == _member(dep).split(".")[0]
            same = same or LAYERS[_rank(module)][0] in ONE_WHOLE
            if _rank(dep) < _rank(module) or (same and _rank(dep) == _rank(module)):
                continue
            wrong.append(
                f"{_member(module)} ({LAYERS[_rank(module)][0]}) imports "
                f"{_member(dep)} ({LAYERS[_rank(dep)][0]})"
            )
    assert wrong == []


def test_front_ends_reach_the_repository_settings_and_model_through_the_core() -> None:
    core = LAYERS.index(next(layer for layer in LAYERS if layer[0] == "session core"))
    wrong = []
    for module, deps in _import_graph().items():
        if _member(module).split(".")[0] not in INTERACTIVE:
            continue
        for dep in deps:
            name = _member(dep)
            if _rank(dep) >= core or _rank(dep) == 0:  # the core and above, or the base
                continue
            if not any(name == r or name.startswith(r + ".") for r in FRONT_END_REACH):
                wrong.append(f"{_member(module)} imports {name}")
    assert wrong == []


def test_the_session_core_imports_no_front_end() -> None:
    wrong = {
        module: sorted(dep for dep in deps if _layer(dep) in FRONT_ENDS)
        for module, deps in _import_graph().items()
        if _layer(module) in CORE
    }
    assert {module: deps for module, deps in wrong.items() if deps} == {}


def test_no_module_imports_one_that_imports_it_back() -> None:
    graph = _import_graph()
    assert "tui_engineer.engine.session" in graph["tui_engineer.session.run"]  # the graph is read
    try:
        tuple(graphlib.TopologicalSorter(graph).static_order())
    except graphlib.CycleError as cycle:
        pytest.fail("import cycle: " + " -> ".join(cycle.args[1]))


def test_a_browser_tab_opens_the_app_without_the_cli() -> None:
    # Each tab under `serve` runs web_tab.py: it opens the app through launch.py as the CLI
    # does, so nothing the CLI starts (the web server) is under the CLI itself.
    graph = _import_graph()
    assert "tui_engineer.cli.launch" in graph["tui_engineer.cli.web_tab"]
    assert "tui_engineer.cli.main" not in graph["tui_engineer.cli.web_tab"]
