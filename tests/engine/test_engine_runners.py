"""Sessions in repositories that are not Python: a JavaScript package tested with node's own test
runner (its test needs a package from the ignored node_modules), a Rust crate tested with cargo
(offline, no dependencies). One step each, the model scripted over real HTTP, real git, the real
runners under bubblewrap (the local sandbox), the test command detected as a user's would be."""

from __future__ import annotations

import io
import json
import os
import shutil
import tarfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import git, write_files
from tests.docker_support import remove_env_images
from tests.engine_support import AFFECTED_AT_ONCE, edit, run_headless
from tests.scripted_server import Reply, ScriptedServer
from tests.tiers import whole_session
from tui_engineer.engine import events as ev

NODE = shutil.which("node")
CARGO = shutil.which("cargo") or (
    "/root/.cargo/bin/cargo" if os.path.exists("/root/.cargo/bin/cargo") else None
)
needs_node = pytest.mark.skipif(NODE is None, reason="node is not installed")
needs_cargo = pytest.mark.skipif(CARGO is None, reason="cargo is not installed")


pytestmark = pytest.mark.usefixtures("api_key")


@pytest.fixture(autouse=True)
def cargo_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    if CARGO is not None and shutil.which("cargo") is None:
        monkeypatch.setenv("PATH", f"{Path(CARGO).parent}:" + _path())


def _path() -> str:
    return os.environ.get("PATH", "")


# --- JavaScript: node --test, a package only in the ignored node_modules ---------------------

JS_FILES = {
    "package.json": json.dumps(
        {"name": "greet", "version": "1.0.0", "scripts": {"test": "node --test"}}
    ),
    ".gitignore": "node_modules/\n",
    "greet.js": "const pad = require('leftpad3');\n\n"
    "function greet(name) {\n  return 'hello ' + name;\n}\n\nmodule.exports = { greet, pad };\n",
    "test/greet.test.js": "const test = require('node:test');\n"
    "const assert = require('node:assert');\n"
    "const { greet } = require('../greet.js');\n\n"
    "test('greets loudly', () => {\n  assert.strictEqual(greet('bob'), 'HELLO BOB!');\n});\n",
}
# Installed by the user (never committed): the step's tests cannot run without it.
LEFTPAD = {
    "node_modules/leftpad3/package.json": json.dumps({"name": "leftpad3", "main": "index.js"}),
    "node_modules/leftpad3/index.js": "module.exports = (s, n) => String(s).padStart(n);\n",
}
GREET_LOUD = edit(
    "greet.js",
    "  return 'hello ' + name;\n",
    "  return ('hello ' + name).toUpperCase() + '!';\n",
)


@needs_node
async def test_a_javascript_step_runs_node_tests_with_the_ignored_node_modules(
    make_repo, scripted_server: ScriptedServer
) -> None:
    repo = make_repo(JS_FILES)
    write_files(repo, LEFTPAD)
    assert git(repo, "status", "--porcelain") == ""  # node_modules is ignored, not committed
    scripted_server.script(Reply(text=GREET_LOUD))
    result, seen = await run_headless(repo, "greet loudly", scripted_server.base_url, plan=False)

    started = seen.of(ev.TestsStarted)
    assert started and started[0].command == "npm test"
    finished = seen.of(ev.TestsFinished)
    assert [(f.ok, f.passed, f.failed) for f in finished] == [(True, 1, 0)]
    assert result.exit_code == 0
    assert git(repo, "log", "--format=%s", "-1") == "greet loudly"
    # Shown read-only to the tests, never part of the step.
    assert git(repo, "show", "--name-only", "--format=", "HEAD").split() == ["greet.js"]


# --- Rust: cargo test, a named test fails first, the fix passes ------------------------------

RUST_FILES = {
    "Cargo.toml": '[package]\nname = "calc"\nversion = "0.1.0"\nedition = "2021"\n\n'
    "[dependencies]\n",
    ".gitignore": "target/\n",
    "src/lib.rs": "pub fn add(a: i64, b: i64) -> i64 {\n    a + b\n}\n\n"
    "#[cfg(test)]\nmod tests {\n    use super::*;\n\n"
    "    #[test]\n    fn adds() {\n        assert_eq!(add(2, 3), 5);\n    }\n}\n",
}
MUL_BUGGY_RS = edit(
    "src/lib.rs",
    "    a + b\n}\n",
    "    a + b\n}\n\npub fn mul(a: i64, b: i64) -> i64 {\n    a + b\n}\n",
) + edit(
    "src/lib.rs",
    "        assert_eq!(add(2, 3), 5);\n    }\n",
    "        assert_eq!(add(2, 3), 5);\n    }\n\n"
    "    #[test]\n    fn multiplies() {\n        assert_eq!(mul(4, 3), 12);\n    }\n",
)
MUL_FIX_RS = edit(
    "src/lib.rs",
    "pub fn mul(a: i64, b: i64) -> i64 {\n    a + b\n}\n",
    "pub fn mul(a: i64, b: i64) -> i64 {\n    a * b\n}\n",
)


@needs_cargo
async def test_a_rust_step_fails_a_named_test_then_the_fix_passes(
    make_repo, scripted_server: ScriptedServer
) -> None:
    repo = make_repo(RUST_FILES)
    scripted_server.script(
        Reply(text=MUL_BUGGY_RS),
        Reply(text="mul adds instead of multiplying."),
        Reply(text=MUL_FIX_RS),
    )
    result, seen = await run_headless(repo, "add mul", scripted_server.base_url, plan=False)

    assert seen.of(ev.TestsStarted)[0].command == "cargo test"
    first, last = seen.of(ev.TestsFinished)[0], seen.of(ev.TestsFinished)[-1]
    assert (first.ok, first.passed, first.failed, first.failing) == (
        False,
        1,
        1,
        ("tests::multiplies",),
    )
    assert "left: 7" in dict(first.failures)["tests::multiplies"].replace("`", "")
    # The model is told which test failed, by name, in the diagnosis and in the fix prompt.
    _propose, diagnose, fix = scripted_server.chat_requests
    assert "tests::multiplies" in diagnose.messages[-1]["content"]
    assert (last.ok, last.passed, last.failed) == (True, 2, 0)
    assert result.exit_code == 0
    assert git(repo, "log", "--format=%s", "-1") == "add mul"
    assert git(repo, "show", "--name-only", "--format=", "HEAD").split() == ["src/lib.rs"]
    # Built in the repository's cache outside the shadow, kept for the next step and session.
    cache = Path(os.environ["XDG_CACHE_HOME"]) / "tui-engineer" / "build"
    assert list(cache.glob("repo-*/cargo-target/debug/deps/calc-*"))


# --- the same JavaScript step with --sandbox docker -------------------------------------------

NODE_IMAGE = "tui-engineer-test/node:bookworm"


def _tar_of(paths: dict[str, Path]) -> bytes:
    """A tar holding each host path (file, folder or symlink) under its name in the image."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for name, source in paths.items():
            tar.add(source, arcname=name)
    return buffer.getvalue()


@pytest.fixture(scope="session")
def node_image(docker_client, docker_image: str) -> str:
    """The local test image (python only) plus this machine's node and npm: there is no registry
    to pull node's image from. Built once per machine, like the base image."""
    if NODE is None or not Path("/usr/lib/node_modules/npm").is_dir():
        pytest.skip("node and npm are not installed here to copy into the image")
    try:
        docker_client.images.get(NODE_IMAGE)
        return NODE_IMAGE
    except Exception:
        pass
    container = docker_client.containers.create(docker_image, command="true")
    try:
        files = {
            "usr/local/bin/node": Path(NODE).resolve(),
            "usr/local/lib/node_modules/npm": Path("/usr/lib/node_modules/npm"),
        }
        container.put_archive("/", _tar_of(files))
        link = tarfile.TarInfo("usr/local/bin/npm")
        link.type, link.linkname = tarfile.SYMTYPE, "../lib/node_modules/npm/bin/npm-cli.js"
        buffer = io.BytesIO()
        with tarfile.open(fileobj=buffer, mode="w") as tar:
            tar.addfile(link)
        container.put_archive("/", buffer.getvalue())
        repository, tag = NODE_IMAGE.split(":")
        container.commit(
            repository=repository, tag=tag, changes=["LABEL tui-engineer.test-image=1"]
        )
    finally:
        container.remove(force=True)
    return NODE_IMAGE


@pytest.fixture
def node_template(docker_client, node_image: str) -> Iterator[str]:
    """A template of the user's own (in their config folder) on that image: node's tests with
    the packages of the user's ignored node_modules, nothing installed."""
    name = f"node-e2e-{uuid.uuid4().hex[:8]}"
    folder = Path(os.environ["XDG_CONFIG_HOME"]) / "tui-engineer" / "templates"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.toml").write_text(
        f'name = "{name}"\nimages = ["{node_image}"]\nuser = "1000:1000"\n'
        'test_command = "npm test"\ninstall = "npm install --no-save {package}"\n'
        'detect = ["package.json"]\n[env]\nCI = "true"\nNPM_CONFIG_UPDATE_NOTIFIER = "false"\n'
    )
    yield name
    remove_env_images(docker_client, name)


@needs_node
async def test_the_javascript_step_in_docker_gets_the_ignored_node_modules_too(
    make_repo, scripted_server: ScriptedServer, node_template: str
) -> None:
    repo = make_repo(JS_FILES)
    write_files(repo, LEFTPAD)
    scripted_server.script(Reply(text=GREET_LOUD))
    result, seen = await run_headless(
        repo, "greet loudly", scripted_server.base_url, plan=False,
        sandbox="docker", sandbox_template=node_template,
    )  # fmt: skip

    assert seen.of(ev.SessionStarted)[0].sandbox == "docker"
    finished = seen.of(ev.TestsFinished)
    assert [(f.ok, f.passed, f.failed) for f in finished] == [(True, 1, 0)]
    assert result.exit_code == 0, result.message
    assert git(repo, "show", "--name-only", "--format=", "HEAD").split() == ["greet.js"]


# --- narrowing: cargo test by the changed module's name; a runner that cannot be, said once ---

CRATE_WITH_MODULES = {
    **RUST_FILES,
    "src/lib.rs": "pub mod calc;\npub mod slow;\n",
    "src/calc.rs": "pub fn add(a: i64, b: i64) -> i64 {\n    a + b\n}\n\n"
    "#[cfg(test)]\nmod tests {\n    #[test]\n    fn adds() {\n"
    "        assert_eq!(super::add(2, 3), 5);\n    }\n}\n",
    "src/slow.rs": "#[cfg(test)]\nmod tests {\n    #[test]\n    fn takes_a_while() {}\n}\n",
}
CALC_SUB = edit(
    "src/calc.rs",
    "    a + b\n}\n",
    "    a + b\n}\n\npub fn sub(a: i64, b: i64) -> i64 {\n    a - b\n}\n",
)


async def affected_first(repo: Path, server: ScriptedServer, request: str, **flags: object):
    """The session asked `request` (no plan), each attempt running the tests its change
    affects first, then the full suite."""
    return await run_headless(
        repo, request, server.base_url, plan=False, **AFFECTED_AT_ONCE, **flags
    )


@needs_cargo
async def test_cargo_runs_the_changed_modules_tests_first(
    make_repo, scripted_server: ScriptedServer
) -> None:
    repo = make_repo(CRATE_WITH_MODULES)
    scripted_server.script(Reply(text=CALC_SUB))
    result, seen = await affected_first(repo, scripted_server, "add sub")
    assert [e.scope for e in seen.of(ev.TestsStarted)] == ["affected", "full"]
    finished = [(e.passed, e.failed) for e in seen.of(ev.TestsFinished)]
    assert finished == [(1, 0), (2, 0)]  # the calc module's test (`-- calc::`), then all
    assert result.exit_code == 0


@needs_node
async def test_a_runner_that_cannot_be_narrowed_is_said_once(
    make_repo, scripted_server: ScriptedServer
) -> None:
    repo = make_repo({**JS_FILES, "Makefile": "test:\n\tnode --test\n"})
    write_files(repo, LEFTPAD)
    scripted_server.script(Reply(text=GREET_LOUD))
    result, seen = await affected_first(
        repo, scripted_server, "greet loudly", test_command="make test"
    )
    said = [n.message for n in seen.of(ev.Notice) if "cannot be narrowed" in n.message]
    assert said == [
        "`make test` cannot be narrowed to the tests a change affects: every attempt runs it "
        "whole (pytest, cargo test, go test, jest, node --test, unittest and runtests.py can "
        "be; see "
        "docs/configuration.md)."
    ]
    assert [e.scope for e in seen.of(ev.TestsStarted)] == ["full"]
    assert result.exit_code == 0


@whole_session
@needs_node
async def test_node_runs_the_changed_modules_test_file_first(
    make_repo, scripted_server: ScriptedServer
) -> None:
    other_test = (
        "const test = require('node:test');\nconst assert = require('node:assert');\n"
        "test('other', () => assert.ok(true));\n"
    )
    repo = make_repo(
        {**JS_FILES, "other.js": "module.exports = 1;\n", "test/other.test.js": other_test}
    )
    write_files(repo, LEFTPAD)
    scripted_server.script(Reply(text=GREET_LOUD))
    result, seen = await affected_first(repo, scripted_server, "greet loudly")
    assert [e.scope for e in seen.of(ev.TestsStarted)] == ["affected", "full"]
    # test/greet.test.js alone (`npm test -- test/greet.test.js`), then both files.
    assert [(e.passed, e.failed) for e in seen.of(ev.TestsFinished)] == [(1, 0), (2, 0)]
    assert result.exit_code == 0


# --- test-first steps with these runners --------------------------------------------------------


def plan_test_first(title: str, files: list[str]) -> str:
    step = {"title": title, "description": title, "files": files, "test_first": True}
    return "The plan.\n\n```json\n" + json.dumps({"steps": [step]}) + "\n```\n"


JS_GREEN = {
    **JS_FILES,
    "test/greet.test.js": "const test = require('node:test');\n"
    "const assert = require('node:assert');\nconst { greet } = require('../greet.js');\n\n"
    "test('greets', () => {\n  assert.strictEqual(greet('bob'), 'hello bob');\n});\n",
}
SHOUT = edit(
    "greet.js",
    "module.exports = { greet, pad };\n",
    "function shout(name) {\n  return greet(name).toUpperCase();\n}\n\n"
    "module.exports = { greet, pad, shout };\n",
) + edit(
    "test/shout.test.js",
    "",
    "const test = require('node:test');\nconst assert = require('node:assert');\n"
    "const { shout } = require('../greet.js');\n\n"
    "test('shouts', () => {\n  assert.strictEqual(shout('bob'), 'HELLO BOB');\n});\n",
)


@whole_session
@needs_node
async def test_a_javascript_test_first_step_fails_before_and_passes_after(
    make_repo, scripted_server: ScriptedServer
) -> None:
    repo = make_repo(JS_GREEN)
    write_files(repo, LEFTPAD)
    scripted_server.script(
        Reply(text=plan_test_first("Add shout", ["greet.js"])), Reply(text=SHOUT)
    )
    result, seen = await run_headless(repo, "add shout", scripted_server.base_url)

    assert [(e.scope, e.ok) for e in seen.of(ev.TestsFinished)] == [
        ("before", False),
        ("full", True),
    ]
    (proposal,) = seen.of(ev.ProposalReady)
    before, after = proposal.test_runs
    # Only the new test file ran on the old code (`npm test -- test/shout.test.js`).
    assert before.startswith("before the change: 1 failed") and "(expected)" in before
    assert after.startswith("after the change (full): 2 passed")
    assert result.exit_code == 0
    assert git(repo, "log", "--format=%s", "-1") == "Add shout"


@needs_cargo
async def test_a_rust_test_first_step_with_its_test_inline_is_not_sent_back(
    make_repo, scripted_server: ScriptedServer
) -> None:
    """Rust's unit tests live in the file they test: there is no old code to run them on, which
    is no reason to ask the model for a test elsewhere."""
    repo = make_repo(RUST_FILES)
    scripted_server.script(
        Reply(text=plan_test_first("Add mul", ["src/lib.rs"])), Reply(text=MUL_BUGGY_RS),
        Reply(text="mul adds instead of multiplying."), Reply(text=MUL_FIX_RS),
    )  # fmt: skip
    result, seen = await run_headless(repo, "add mul", scripted_server.base_url)

    assert [(e.scope, e.ok) for e in seen.of(ev.TestsFinished)] == [
        ("full", False),
        ("full", True),
    ]
    fix = scripted_server.chat_requests[-1].messages[-1]["content"]
    assert "wrote no test" not in fix
    (proposal,) = seen.of(ev.ProposalReady)
    assert proposal.test_runs[0] == (
        "before the change: not run (the new tests are in the code's own file, "
        "Rust's #[cfg(test)] module: there is no old code to run them on)"
    )
    assert result.exit_code == 0
