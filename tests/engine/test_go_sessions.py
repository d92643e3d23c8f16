"""Go's runner run for real: a module with two packages and an old failure in the second, the
test command detected from go.mod (`go test ./...`, run with -v so each test is named), and a
command of the user's own with -json. Real go (offline: no dependencies) under bubblewrap, the
model scripted over real HTTP. Skips when go is not installed (.ci/run installs it)."""

from __future__ import annotations

import io
import shutil

import pytest

from tests.conftest import git
from tests.engine_support import edit, run_headless
from tests.scripted_server import Reply, ScriptedServer
from tui_engineer.engine import events as ev
from tui_engineer.headless.printer import ProgressPrinter

needs_go = pytest.mark.skipif(
    shutil.which("go") is None, reason="go is not installed (apt-get install golang-go)"
)
FILES = {
    "go.mod": "module example.com/calc\n\ngo 1.19\n",
    "calc.go": "package calc\n\nfunc Add(a, b int) int {\n\treturn a - b\n}\n",
    "calc_test.go": 'package calc\n\nimport "testing"\n\nfunc TestAdd(t *testing.T) {\n'
    '\tif got := Add(2, 3); got != 5 {\n\t\tt.Errorf("Add(2, 3) = %d, want 5", got)\n\t}\n}\n',
    "mul/mul.go": "package mul\n\nfunc Mul(a, b int) int {\n\treturn a + b\n}\n",
    "mul/mul_test.go": 'package mul\n\nimport "testing"\n\nfunc TestMul(t *testing.T) {\n'
    '\tif got := Mul(4, 3); got != 12 {\n\t\tt.Errorf("Mul(4, 3) = %d, want 12", got)\n\t}\n}\n',
}
FIX_ADD = edit("calc.go", "\treturn a - b\n", "\treturn a + b\n")
OLD = "example.com/calc/mul::TestMul"


pytestmark = pytest.mark.usefixtures("api_key")


@needs_go
@pytest.mark.parametrize("command", [None, "go test -json ./..."])
async def test_a_go_fix_commits_with_the_old_failure_of_another_package_named(
    make_repo, scripted_server: ScriptedServer, command: str | None
) -> None:
    repo = make_repo(FILES)
    scripted_server.script(Reply(text=FIX_ADD))
    out = io.StringIO()
    flags = {"test_command": command} if command else {}
    result, seen = await run_headless(
        repo, "fix Add", scripted_server.base_url, plan=False, sink=ProgressPrinter(out), **flags
    )
    assert result.exit_code == 0, out.getvalue()
    assert git(repo, "log", "-1", "--format=%s") == "fix Add"
    assert len(scripted_server.chat_requests) == 1
    (baseline,) = seen.of(ev.BaselineReady)
    assert baseline.command == (command or "go test ./...")
    assert baseline.failing == (OLD, "example.com/calc::TestAdd")
    (proposal,) = seen.of(ev.ProposalReady)
    assert proposal.tests_ok and proposal.old_failures == (OLD,)
    assert "1 passed, 1 failed" in proposal.summary


@needs_go
async def test_go_test_verbose_names_the_passing_tests_too(make_repo) -> None:
    from tui_engineer.sandbox.local import LocalSandbox

    repo = make_repo(FILES)
    report = await LocalSandbox().run_tests(repo, "go test ./...", timeout=300)
    assert report.structured and (report.passed, report.failed) == (0, 2)
    fixed = make_repo({**FILES, "calc.go": FILES["calc.go"].replace("a - b", "a + b")}, name="b")
    report = await LocalSandbox().run_tests(fixed, "go test ./...", timeout=300)
    assert report.passing == ["example.com/calc::TestAdd"]
    assert [f.test_id for f in report.failures] == [OLD]
