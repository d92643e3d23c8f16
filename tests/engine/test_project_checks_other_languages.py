"""The checks a JavaScript or Rust project declares, in a session: package.json's `lint` script
and `cargo clippy -- -D warnings` (the crate has a clippy.toml) run on the step, and a new
finding goes back to the model with the tool's own words. Real node and cargo under the local
sandbox, the model over HTTP."""

from __future__ import annotations

import json
import shutil

import pytest

from tests.conftest import git
from tests.engine.test_engine_runners import (
    RUST_FILES,
    cargo_on_path,  # noqa: F401  (a fixture: cargo on PATH where rustup put it)
    needs_cargo,
    needs_node,
)
from tests.engine_support import edit, run_headless
from tests.scripted_server import Reply, ScriptedServer
from tests.tiers import whole_session
from tui_engineer.engine import events as ev

pytestmark = pytest.mark.usefixtures("api_key")

# The project's own lint: no console.log left in its sources (one finding a line, as eslint's
# unix format writes them).
LINT_JS = """const fs = require('fs');
let found = 0;
for (const file of fs.readdirSync('.').filter((f) => f.endsWith('.js') && f !== 'lint.js')) {
  fs.readFileSync(file, 'utf8').split('\\n').forEach((line, i) => {
    if (line.includes('console.log')) {
      console.log(`${file}:${i + 1}:1: no-console: unexpected console.log`);
      found += 1;
    }
  });
}
process.exit(found ? 1 : 0);
"""
JS_FILES = {
    "package.json": json.dumps(
        {
            "name": "greet",
            "version": "1.0.0",
            "scripts": {"test": "node --test", "lint": "node lint.js"},
        }
    ),
    "lint.js": LINT_JS,
    "greet.js": "function greet(name) {\n  return 'hello ' + name;\n}\n\n"
    "module.exports = { greet };\n",
    "test/greet.test.js": "const test = require('node:test');\n"
    "const assert = require('node:assert');\n"
    "const { greet } = require('../greet.js');\n\n"
    "test('greets loudly', () => {\n  assert.strictEqual(greet('bob'), 'HELLO BOB!');\n});\n",
}
LOUD_WITH_LOG = edit(
    "greet.js",
    "  return 'hello ' + name;\n",
    "  console.log('greeting', name);\n  return ('hello ' + name).toUpperCase() + '!';\n",
)
DROP_LOG = edit("greet.js", "  console.log('greeting', name);\n", "")


@needs_node
@whole_session
async def test_a_package_json_lint_script_finding_goes_back_to_the_model(
    make_repo, scripted_server: ScriptedServer
) -> None:
    repo = make_repo(JS_FILES)
    scripted_server.script(Reply(text=LOUD_WITH_LOG), Reply(text=DROP_LOG))
    result, seen = await run_headless(repo, "greet loudly", scripted_server.base_url, plan=False)
    assert result.outcome == "done", result.message
    runs = [e for e in seen.of(ev.CheckFinished) if e.name == "npm run lint"]
    assert [e.ok for e in runs] == [False, True]
    assert "greet.js:2:1: no-console" in str(scripted_server.chat_requests[1])
    assert "console.log" not in (repo / "greet.js").read_text()
    assert git(repo, "log", "-1", "--format=%s") == "greet loudly"


# A binding returned at once: clippy's let_and_return, a warning -D warnings makes an error.
MUL_LET = edit(
    "src/lib.rs",
    "    a + b\n}\n",
    "    a + b\n}\n\n"
    "pub fn mul(a: i64, b: i64) -> i64 {\n    let product = a * b;\n    product\n}\n",
)
MUL_PLAIN = edit("src/lib.rs", "    let product = a * b;\n    product\n", "    a * b\n")


@needs_cargo
@whole_session
async def test_cargo_clippy_with_deny_warnings_sends_a_lint_back(
    make_repo, scripted_server: ScriptedServer
) -> None:
    repo = make_repo({**RUST_FILES, "clippy.toml": ""})
    scripted_server.script(Reply(text=MUL_LET), Reply(text=MUL_PLAIN))
    result, seen = await run_headless(repo, "add mul", scripted_server.base_url, plan=False)
    assert result.outcome == "done", result.message
    runs = [e for e in seen.of(ev.CheckFinished) if e.name == "cargo clippy"]
    assert [e.ok for e in runs] == [False, True], [e.output for e in runs]
    assert "let_and_return" in str(scripted_server.chat_requests[1]) or "`let` binding" in str(
        scripted_server.chat_requests[1]
    )
    assert "a * b" in (repo / "src/lib.rs").read_text()


GO_FILES = {
    "go.mod": "module example.com/calc\n\ngo 1.21\n",
    "calc.go": "package calc\n\nfunc Add(a, b int) int {\n\treturn a + b\n}\n",
    "calc_test.go": 'package calc\n\nimport "testing"\n\n'
    'func TestAdd(t *testing.T) {\n\tif Add(2, 3) != 5 {\n\t\tt.Fatal("add")\n\t}\n}\n',
    ".github/workflows/ci.yml": "jobs:\n  test:\n    steps:\n      - run: go vet ./...\n",
}
# A self-assignment: go vet's assign check (go test's own vet run does not include it).
MUL_SELF = edit(
    "calc.go",
    "\treturn a + b\n}\n",
    "\treturn a + b\n}\n\nfunc Mul(a, b int) int {\n\ta = a\n\treturn a * b\n}\n",
)
MUL_CLEAN = edit("calc.go", "\ta = a\n\treturn a * b\n", "\treturn a * b\n")


@pytest.mark.skipif(shutil.which("go") is None, reason="go is not installed")
@whole_session
async def test_go_vet_from_the_ci_workflow_sends_a_finding_back(
    make_repo, scripted_server: ScriptedServer
) -> None:
    repo = make_repo(GO_FILES)
    scripted_server.script(Reply(text=MUL_SELF), Reply(text=MUL_CLEAN))
    result, seen = await run_headless(repo, "add mul", scripted_server.base_url, plan=False)
    assert result.outcome == "done", result.message
    runs = [e for e in seen.of(ev.CheckFinished) if e.name == "go vet"]
    assert [e.ok for e in runs] == [False, True], [e.output for e in runs]
    assert "self-assignment of a to a" in str(scripted_server.chat_requests[1])
    assert "a = a" not in (repo / "calc.go").read_text()
