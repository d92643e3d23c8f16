"""The `exercism` suite: Exercism practice exercises in their own layout, as aider's polyglot
benchmark uses them (a checkout of github.com/Aider-AI/polyglot-benchmark, or one track of
Exercism's own repositories).

    TRACK/exercises/practice/NAME/
        .docs/instructions.md (+ introduction.md, instructions.append.md)   the request
        .meta/config.json   {"files": {"solution": [...], "test": [...], "example": [...]}}
        .meta/example.py    the example solution (the oracle's answer)
        the stubs, the tests, and the build files (Cargo.toml, package.json, ...)

Each exercise becomes a task: a repo of its stubs, tests and build files; the request is its
instructions; its tests are the hidden tests too, so the verdict always runs the exercise's own
tests, whatever the session did to its copy (as aider restores them before each run)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from tui_engineer.base.errors import UserError
from tui_engineer.bench.task import Task

PRACTICE = Path("exercises") / "practice"


@dataclass(frozen=True)
class Track:
    """How one language's exercises are tested (the commands of aider's harness)."""

    test_command: str
    extensions: tuple[str, ...]
    unskip: tuple[tuple[str, str], ...] = ()  # Exercism skips all tests but the first
    ignore: tuple[str, ...] = ()  # what the test command builds in the repo: never a step's
    # The programs the test command needs ("a|b": either), and how to get them (toolchains.py).
    needs: tuple[str, ...] = ()
    install: str = ""
    unsupported: str = ""  # why none of its exercises can run in this harness, if so


TRACKS = {
    "python": Track("python -m pytest -q -p no:cacheprovider", (".py",)),
    # Exercism marks every Rust test but the first #[ignore]: run them all.
    "rust": Track(
        "cargo test -- --include-ignored", (".rs",), needs=("cargo",), install="Rust: rustup.rs"
    ),
    "go": Track("go test ./...", (".go",), needs=("go",), install="Go: apt-get install golang-go"),
    "javascript": Track(
        "npm test",
        (".js",),
        (("xtest(", "test("), ("xit(", "it(")),
        unsupported=(
            "jest and babel (each exercise's package.json devDependencies) come from the npm "
            "registry; the bench runs each exercise in a fresh repo with no node_modules and "
            "installs no packages, so JavaScript is not supported yet"
        ),
    ),
    "java": Track(
        "gradle test --offline",
        (".java",),
        (('@Disabled("Remove to run test")', ""),),
        needs=("gradle",),
        install="Gradle 8 with JUnit 5 and AssertJ in its cache: build.gradle takes them from "
        "Maven Central",
    ),
    "cpp": Track(
        "cmake -S . -B build -DEXERCISM_RUN_ALL_TESTS=1 && cmake --build build",
        (".cpp", ".h"),
        ignore=("/build/",),
        needs=("cmake", "make", "c++|g++|clang++"),
        install="CMake, make and a C++ compiler: apt-get install cmake make g++",
    ),
}
BUILD_FILES = {"Cargo.toml", "CMakeLists.txt"}  # listed as solution files; not for the model
# Not named in config.json: an example's own manifest when it needs crates the stub does not.
EXAMPLE_MANIFESTS = {".meta/Cargo-example.toml": "Cargo.toml"}
# .approaches/.articles: Exercism's write-ups of solutions, not the student's files.
SKIPPED_DIRS = {
    ".meta", ".docs", ".approaches", ".articles", ".git", "target", "node_modules", "build",
    "__pycache__",
}  # fmt: skip
# Exercism's C++ CMakeLists.txt names the program after the exercise's folder; a task's repo,
# its shadow and the hidden tests' copy live in folders of other names.
CMAKE_NAME = "get_filename_component(exercise ${CMAKE_CURRENT_SOURCE_DIR} NAME)"

ADDENDUM = """
####

Use the instructions above to change these files: {solution}. Keep the names of the existing
functions, classes and types: the tests use them. Use only the language's standard library.
The tests are {tests}; do not change them."""


def _track_dirs(path: Path) -> list[Path]:
    """The track folders under `path`: itself, or the tracks of a checkout holding several."""
    if (path / PRACTICE).is_dir():
        return [path]
    return sorted(p for p in path.iterdir() if p.is_dir() and (p / PRACTICE).is_dir())


def _language(track: Path, solution: list[str]) -> str:
    name = track.name.removeprefix("exercism-")
    if name in TRACKS:
        return name
    for language, spec in TRACKS.items():
        if any(path.endswith(spec.extensions) for path in solution):
            return language
    raise UserError(f"{track}: cannot tell which language this track is (solution {solution})")


def _config(folder: Path) -> dict[str, list[str]]:
    path = folder / ".meta" / "config.json"
    try:
        files = json.loads(path.read_text(encoding="utf-8")).get("files", {})
    except (OSError, ValueError, AttributeError) as err:
        raise UserError(f"{path}: cannot read the exercise's config: {err}") from None
    if not files.get("solution") or not files.get("test"):
        raise UserError(f"{path}: `files` must name the solution and test files")
    kinds = ("solution", "test", "example", "editor")
    return {k: [str(v) for v in files.get(k, [])] for k in kinds}


def _text_files(folder: Path) -> dict[str, str]:
    """The exercise's files (not .meta/.docs, not build output). Binary files (a Gradle wrapper
    jar) cannot be carried in a task and are left out."""
    found = {}
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder)
        if not path.is_file() or SKIPPED_DIRS.intersection(rel.parts[:-1]):
            continue
        try:
            found[rel.as_posix()] = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
    return found


def _instructions(folder: Path) -> str:
    docs = folder / ".docs"
    parts = [
        (docs / name).read_text(encoding="utf-8").strip()
        for name in ("introduction.md", "instructions.md", "instructions.append.md")
        if (docs / name).is_file()
    ]
    if not parts:
        raise UserError(f"{folder}: no .docs/instructions.md")
    return "\n\n".join(parts)


def _example_solution(folder: Path, files: dict[str, list[str]]) -> dict[str, str]:
    """The example files put where the solution files go: by file name, else the one solution
    file of the same kind (.meta/example.rs -> src/lib.rs)."""
    examples = [e for e in files["example"] if (folder / e).is_file()]
    solution = files["solution"]
    by_name = {Path(s).name: s for s in solution}
    placed = {}
    for example in examples:
        target = by_name.get(Path(example).name)
        alike = [s for s in solution if Path(s).suffix == Path(example).suffix]
        if target is None and len(alike) == 1:
            target = alike[0]
        if target is not None:
            placed[target] = (folder / example).read_text(encoding="utf-8")
    for manifest, target in EXAMPLE_MANIFESTS.items():  # the crates the example needs
        if (folder / manifest).is_file() and (folder / target).is_file():
            placed[target] = (folder / manifest).read_text(encoding="utf-8")
    return placed


def _unskipped(text: str, track: Track) -> str:
    for old, new in track.unskip:
        text = text.replace(old, new)
    return text


def _named_build(repo: dict[str, str], name: str) -> None:
    cmake = repo.get("CMakeLists.txt")
    if cmake is not None and CMAKE_NAME in cmake:
        repo["CMakeLists.txt"] = cmake.replace(CMAKE_NAME, f"set(exercise {name})")


def exercise_task(folder: Path, language: str) -> Task:
    files = _config(folder)
    track = TRACKS[language]
    repo = _text_files(folder)
    _named_build(repo, folder.name)
    if track.ignore:  # else the build folder would be committed with the step
        ignored = repo.get(".gitignore", "").rstrip("\n").splitlines()
        repo[".gitignore"] = "\n".join([*ignored, *track.ignore]) + "\n"
    tests = {t: _unskipped(repo[t], track) for t in files["test"] if t in repo}
    if not tests:
        raise UserError(f"{folder}: none of its test files {files['test']} exists")
    # Exercism's "editor" files are shown to the student but not theirs to change (the Go
    # tests' cases, Java's given exception classes): kept and restored like the tests.
    tests |= {e: repo[e] for e in files["editor"] if e in repo and e not in tests}
    repo.update(tests)
    editable = [f for f in files["solution"] if Path(f).name not in BUILD_FILES]
    # The first line is the step's title (and commit subject) when the request is one step.
    title = f"Solve the {language} exercise {folder.name} as its instructions say\n\n"
    request = (
        title
        + _instructions(folder)
        + ADDENDUM.format(solution=", ".join(editable or files["solution"]), tests=", ".join(tests))
    )
    return Task(
        name=f"{language}-{folder.name}",
        request=request,
        files=repo,
        hidden=tests,
        test_command=track.test_command,
        hidden_command=track.test_command,
        solution=_example_solution(folder, files),
        read_only=tuple(tests),
    )


def exercism_tasks(path: Path, languages: list[str] | None = None) -> list[Task]:
    """Every practice exercise under `path` (a track or a checkout of several), by language then
    name, narrowed to `languages` when given."""
    if not path.is_dir():
        raise UserError(f"exercism: {path} is not a folder")
    unknown = sorted(set(languages or ()) - set(TRACKS))
    if unknown:
        raise UserError(f"--languages: unknown {', '.join(unknown)}; known: {', '.join(TRACKS)}")
    tasks = []
    for track in _track_dirs(path):
        for folder in sorted(p for p in (track / PRACTICE).iterdir() if p.is_dir()):
            language = _language(track, _config(folder)["solution"])
            if not languages or language in languages:
                tasks.append(exercise_task(folder, language))
    if not tasks:
        wanted = f" in {', '.join(languages)}" if languages else ""
        raise UserError(
            f"exercism: no practice exercises{wanted} under {path} (looked for "
            f"{PRACTICE}/NAME/.meta/config.json in it or in its track folders)"
        )
    return tasks
