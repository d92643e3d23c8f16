"""Which of the tests red on the starting commit a step's change runs through (its reach).

A failure that was red before the session is the repository's only when the step's change does
not run through it; one the change runs through is the step's to fix, or to disown with a reason
(edits/disown.py), whatever words the request used. Reach is read from the code, per runner:
- the step changed the test's own file;
- Python (pytest, unittest): the test's function calls a function the step changed (or one that
  calls it, in the same module), in a module its file imports; a change at module level reaches
  every test whose file imports the module;
- Rust (cargo): the test function, in the changed file's crate, calls a changed function;
- Go: the test function, in the changed file's package, calls a changed function;
- JavaScript/TypeScript (node, jest): the test file imports the changed module and uses a changed
  function (or the change is at module level).
A test that cannot be found this way has no reach signal: it is reached only by the rules above
and by being named (verify/targets.py). Nothing here runs code: files are read and parsed with
the repository map's grammars (context/symbols.py)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path, PurePosixPath

from unidiff import PatchSet
from unidiff.errors import UnidiffParseError

from tui_engineer.context.symbols import Symbol, language_of, parse_symbols
from tui_engineer.verify.related import imports_module, is_test_file, module_names
from tui_engineer.verify.report import TestReport

MAX_FILE_BYTES = 1_000_000  # a file bigger than this is not parsed for reach
MAX_SEARCHED = 2_000  # source files searched for a test that names no file (cargo, go)
_FUNCTIONS = ("function", "method")
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_JS_IMPORT = re.compile(r"""(?:require\(|import\(|from\s+|import\s+)\s*['"]([^'"]+)['"]""")


@dataclass
class ChangedCode:
    """What a step changed, as reach reads it."""

    files: set[str] = field(default_factory=set)  # every changed path (new side)
    # Per changed source file: the short names of the functions it changed (and of those in the
    # same file that call them); "" when a change lies outside any function.
    functions: dict[str, set[str]] = field(default_factory=dict)
    # The same for changed Python test files: a new test beside a red one does not reach it.
    tests: dict[str, set[str]] = field(default_factory=dict)


def changed_code(workdir: Path, diff: str) -> ChangedCode:
    """Read `diff` (the step against its base) and the changed files in `workdir`."""
    changed = ChangedCode()
    try:
        patch = PatchSet(diff)
    except (UnidiffParseError, ValueError):
        return changed
    for patched in patch:
        path = _strip(patched.target_file if not patched.is_removed_file else patched.source_file)
        changed.files.add(path)
        if patched.source_file and not patched.is_added_file:
            changed.files.add(_strip(patched.source_file))  # a rename's old path too
        if language_of(path) is None:
            continue
        where = changed.tests if is_test_file(path) else changed.functions
        if patched.is_removed_file:
            where[path] = {""}
            continue
        where[path] = _functions_at(workdir / path, path, _changed_lines(patched))
    return changed


def _strip(name: str) -> str:
    return name[2:] if name.startswith(("a/", "b/")) else name


def _changed_lines(patched) -> set[int]:  # noqa: ANN001 (unidiff's PatchedFile)
    """Line numbers of the new file that changed; a removal counts at the line it left."""
    lines: set[int] = set()
    for hunk in patched:
        last = hunk.target_start
        for line in hunk:
            if line.target_line_no is not None:
                last = line.target_line_no
            if line.is_added and line.value.strip():  # a blank line reaches nothing
                lines.add(line.target_line_no)
            elif line.is_removed:
                lines.add(max(last, 1))
    return lines


def _read(path: Path) -> bytes | None:
    try:
        stat = path.stat()
    except OSError:
        return None
    if stat.st_size > MAX_FILE_BYTES:
        return None
    return _read_as_of(path, stat.st_mtime_ns, stat.st_size)


@lru_cache(maxsize=512)
def _read_as_of(path: Path, mtime_ns: int, size: int) -> bytes | None:
    """A file's bytes, read once while it stays the same: a suite with hundreds of old failures
    in one test file reads and parses that file once per change, not once per test."""
    try:
        return path.read_bytes()
    except OSError:
        return None


@lru_cache(maxsize=512)
def _symbols(path: str, data: bytes) -> list[Symbol]:
    return parse_symbols(path, data) or []


def _functions_at(file: Path, path: str, lines: set[int]) -> set[str]:
    data = _read(file)
    if data is None or language_of(path) is None:
        return {""}
    symbols = _symbols(path, data)
    functions = [s for s in symbols if s.kind in _FUNCTIONS]
    names: set[str] = set()
    for number in lines:
        around = [s for s in functions if s.line <= number <= s.end]
        names.add(min(around, key=lambda s: s.end - s.line).short if around else "")
    return _with_callers(functions, data.decode("utf-8", "replace").splitlines(), names)


def _with_callers(functions: Sequence[Symbol], lines: list[str], names: set[str]) -> set[str]:
    """`names` and the functions of the same file that call one of them, to a fixed point: a
    test of `total()` reaches a change to the `_sum()` it calls."""
    found = set(names)
    for _ in range(5):
        grown = {
            f.short
            for f in functions
            if f.short not in found and _mentions("\n".join(lines[f.line - 1 : f.end]), found)
        }
        if not grown:
            break
        found |= grown
    return found


def _mentions(text: str, names: Iterable[str]) -> bool:
    wanted = {n for n in names if n}
    return bool(wanted) and any(w in wanted for w in _WORD.findall(text))


def reach(workdir: Path, test_ids: Iterable[str], changed: ChangedCode) -> dict[str, str]:
    """The ids among `test_ids` the change runs through, each with why (for the human)."""
    found: dict[str, str] = {}
    for test_id in test_ids:
        why = _why(workdir, test_id, changed)
        if why:
            found[test_id] = why
    return found


def unknown(workdir: Path, test_ids: Iterable[str]) -> list[str]:
    """The ids whose reach cannot be read from the code: no rule above knows where such a test
    lives (a Catch2 case, a runner's own names). Only naming and their file count for them."""
    cargo = (workdir / "Cargo.toml").is_file()
    return [i for i in test_ids if not _readable(workdir, i.split("[", 1)[0], cargo)]


def _readable(workdir: Path, bare: str, cargo: bool) -> bool:
    head = bare.split(" > ", 1)[0].split("::", 1)[0]
    if head.endswith((".py", ".js", ".ts", ".mjs", ".cjs", ".jsx", ".tsx")):
        return (workdir / head).is_file()
    if "::" in bare and "/" in head and "." in head.split("/", 1)[0]:
        return True  # go: `example.com/calc::TestAdd`
    return cargo and " " not in bare


def _why(workdir: Path, test_id: str, changed: ChangedCode) -> str:
    bare = test_id.split("[", 1)[0]
    if " > " in bare:  # node/jest: `test/calc.test.js > suite > name`
        return _why_js(workdir, bare.split(" > ", 1)[0], changed)
    head, _, rest = bare.partition("::")
    if head in changed.files and _own_code_changed(head, rest, changed):
        return f"the step changed {head}"
    if head.endswith(".py"):
        return _why_python(workdir, head, rest, changed)
    if "/" in head and "." in head.split("/", 1)[0]:  # go: `example.com/calc::TestAdd`
        return _why_go(workdir, rest, changed)
    if not head.endswith((".js", ".ts", ".mjs", ".cjs")):  # cargo: `tests::adds`, `adds`
        return _why_rust(workdir, bare.replace("::", "."), changed)
    return ""


def _own_code_changed(path: str, qualified: str, changed: ChangedCode) -> bool:
    """Did the change to a test file touch this test: its own function, or the file outside any
    function (imports, fixtures)? Unknown where the file was not parsed: then it did."""
    names = changed.tests.get(path)
    if names is None or not qualified:
        return True
    own = {qualified.split("::")[-1], *qualified.split("::")}
    return "" in names or bool(own & names)


def _why_python(workdir: Path, path: str, qualified: str, changed: ChangedCode) -> str:
    data = _read(workdir / path)
    if data is None:
        return ""
    text = data.decode("utf-8", "replace")
    body = _body(path, data, qualified.replace("::", ".")) if qualified else text
    for module, names in changed.functions.items():
        if not module.endswith(".py") or not imports_module(text, _importable(module)):
            continue
        if "" in names:
            return f"its file imports {module}, which the step changed outside any function"
        used = _used(body, names)
        if used:
            return f"it calls {used}, which the step changed in {module}"
    return ""


def _importable(module: str) -> set[str]:
    """The names a test may import `module`'s functions by: the module's own, and its packages'
    (a package re-exports: `import more_itertools as mi; mi.take` tests recipes.py's take)."""
    names = module_names(module)
    pure = PurePosixPath(module)
    for parent in pure.parents:
        if parent.name and parent != PurePosixPath("."):
            names |= module_names(f"{parent}.py")
    return names


def _body(path: str, data: bytes, qualified: str) -> str:
    """The source of the definition `qualified` (`Class.test_x`, `tests.adds`) in a file, or
    '' when it is not there."""
    symbols = _symbols(path, data)
    short = qualified.rsplit(".", 1)[-1]
    match = next((s for s in symbols if s.name == qualified), None) or next(
        (s for s in symbols if s.kind in _FUNCTIONS and s.short == short), None
    )
    if match is None:
        return ""
    lines = data.decode("utf-8", "replace").splitlines()
    return "\n".join(lines[match.line - 1 : match.end])


def _used(body: str, names: set[str]) -> str:
    words = set(_WORD.findall(body))
    used = sorted(n for n in names if n and n in words)
    return ", ".join(f"{n}()" for n in used[:3])


def _sources(folder: Path, suffix: str) -> list[Path]:
    found: list[Path] = []
    for path in sorted(folder.rglob(f"*{suffix}")):
        if "target" in path.relative_to(folder).parts or ".git" in path.parts:
            continue
        found.append(path)
        if len(found) >= MAX_SEARCHED:
            break
    return found


def _crate(workdir: Path, path: str) -> Path | None:
    folder = (workdir / path).parent
    while True:
        if (folder / "Cargo.toml").is_file():
            return folder
        if folder == workdir or workdir not in folder.parents:
            return None
        folder = folder.parent


def _why_rust(workdir: Path, qualified: str, changed: ChangedCode) -> str:
    for module, names in changed.functions.items():
        crate = _crate(workdir, module) if module.endswith(".rs") else None
        if crate is not None:
            own = [workdir / module]  # a change outside any function reaches the file's tests
            why = _why_among(_sources(crate, ".rs"), qualified, module, names, own)
            if why:
                return why
    return ""


def _why_go(workdir: Path, name: str, changed: ChangedCode) -> str:
    for module, names in changed.functions.items():
        if module.endswith(".go"):
            tests = sorted((workdir / module).parent.glob("*_test.go"))
            why = _why_among(tests, name, module, names, tests)  # the whole package
            if why:
                return why
    return ""


def _why_among(
    sources: Sequence[Path], name: str, module: str, names: set[str], whole: Sequence[Path]
) -> str:
    """Why the test function `name`, found in one of `sources`, runs through `module`'s change:
    it calls a changed function, or the change lies outside any function and the test is in
    one of `whole` (its file, its package)."""
    for source in sources:
        data = _read(source)
        body = _body(source.name, data, name) if data is not None else ""
        if not body:
            continue
        if "" in names and source in whole:
            return f"it is beside {module}'s change outside any function"
        used = _used(body, names)
        if used:
            return f"it calls {used}, which the step changed in {module}"
    return ""


def _why_js(workdir: Path, path: str, changed: ChangedCode) -> str:
    if path in changed.files:
        return f"the step changed {path}"
    data = _read(workdir / path)
    if data is None:
        return ""
    text = data.decode("utf-8", "replace")
    imported = {_module_stem(spec) for spec in _JS_IMPORT.findall(text) if spec.startswith(".")}
    for module, names in changed.functions.items():
        if language_of(module) not in ("javascript", "typescript", "tsx"):
            continue
        if _module_stem(module) not in imported:
            continue
        if "" in names:
            return f"its file imports {module}, which the step changed outside any function"
        used = _used(text, names)
        if used:
            return f"it uses {used}, which the step changed in {module}"
    return ""


def _module_stem(spec: str) -> str:
    """`../calc` and `src/calc.js` → calc; `./lib/index.js` → lib."""
    pure = PurePosixPath(spec)
    stem = pure.name.split(".", 1)[0]
    return pure.parent.name if stem == "index" and pure.parent.name else stem


def judge(
    report: TestReport,
    failing_at_start: Sequence[str],
    workdir: Path,
    diff: str,
    disowned: Mapping[str, str],
) -> None:
    """`report`, judged against the starting commit already (verify/baseline.py), judged by
    reach too: an old failure the step's change runs through is the step's again (back among
    its failures), unless the model disowned it; a disowned one is the repository's, said with
    the model's reason. `report.reached` lists both."""
    old = [f.test_id for f in report.old]
    found = reach(workdir, old, changed_code(workdir, diff)) if old else {}
    start = set(failing_at_start)
    given_back = [f for f in report.failures if f.test_id in disowned and f.test_id in start]
    report.failures = [f for f in report.failures if f not in given_back]
    report.failures += [f for f in report.old if f.test_id in found and f.test_id not in disowned]
    report.old = [f for f in report.old if f not in report.failures] + given_back
    still = [*found, *(f.test_id for f in given_back)]
    report.reached = list(dict.fromkeys([*report.reached, *still]))
    report.disowned = {i: disowned[i] for i in report.reached if i in disowned}
    report.reach_why = {**report.reach_why, **found}


def unknown_notice(ids: Sequence[str]) -> str:
    shown = ", ".join(ids[:3]) + (" …" if len(ids) > 3 else "")
    return (
        f"Reach unknown for {shown}: failing before this session, but where such a test lives "
        "cannot be read from the code, so whether a step's change runs through it is not known. "
        "It is a step's only when the request or the plan names it, or the step changes its file."
    )


def reach_hint(report: TestReport) -> str:
    """What a fix prompt adds about the reached old failures still the step's ('' when none)."""
    owned = [i for i in report.reached if i not in report.disowned]
    if not owned:
        return ""
    lines = [f"- {i} ({report.reach_why[i]})" if i in report.reach_why else f"- {i}" for i in owned]
    return (
        "\n\nThese tests failed before this session too, and your change runs through them:\n"
        + "\n".join(lines[:10])
        + "\nMake them pass. If one is not this step's to fix (it checks something this step "
        "is not about), say so instead, on a line of its own: NOT THIS STEP'S: <test id>: <why>. "
        "The human sees your reason."
    )


def disowned_notice(step: int, test_id: str, why: str) -> str:
    reason = f": {why}" if why else " (no reason given)"
    return (
        f"Step {step}: the model says {test_id} is not this step's to fix{reason}. It still "
        "fails, and the change runs through it: you see it in the review."
    )
