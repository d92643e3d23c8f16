"""A suite that cannot build or fetch is not a failing step (issue 48, part 2): a run that
failed before any test ran because the toolchain needs the network (or a lock that must be
updated) is said before any model call, with the fix in the user's words, and never sent to
the model as a code failure. A real crate built by real cargo in the local sandbox (no
network), its dependency missing from an empty CARGO_HOME."""

from __future__ import annotations

import io
import os
import shutil
from pathlib import Path

import pytest

from tests.engine_support import run_headless
from tests.scripted_server import ScriptedServer
from tests.tiers import whole_session
from tui_engineer.engine import events as ev
from tui_engineer.headless.printer import ProgressPrinter
from tui_engineer.verify.report import FailingTest, TestReport
from tui_engineer.verify.setup_failures import environment_problem
from tui_engineer.verify.toolchain_failures import toolchain_problem

CARGO = shutil.which("cargo") or (
    "/root/.cargo/bin/cargo" if os.path.exists("/root/.cargo/bin/cargo") else None
)
needs_cargo = pytest.mark.skipif(CARGO is None, reason="cargo is not installed")
CRATE = {
    "Cargo.toml": '[package]\nname = "calc"\nversion = "0.1.0"\nedition = "2021"\n\n'
    '[dependencies]\nsemver = "1"\n',
    ".gitignore": "target/\nCargo.lock\n",  # a library crate that does not commit its lock
    "src/lib.rs": "pub fn add(a: i64, b: i64) -> i64 {\n    a - b\n}\n\n"
    "#[cfg(test)]\nmod tests {\n    #[test]\n    fn adds() {\n"
    "        assert_eq!(super::add(2, 3), 5);\n    }\n}\n",
}

pytestmark = pytest.mark.usefixtures("api_key")


@needs_cargo
@whole_session
async def test_a_crate_whose_dependency_is_not_in_the_cache_stops_before_any_model_call(
    make_repo, scripted_server: ScriptedServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    assert CARGO is not None
    monkeypatch.setenv("PATH", f"{Path(CARGO).parent}:{os.environ.get('PATH', '')}")
    monkeypatch.setenv("CARGO_HOME", str(tmp_path / "empty-cargo-home"))  # nothing fetched
    repo = make_repo(CRATE)
    out = io.StringIO()
    result, seen = await run_headless(
        repo, "add returns the difference; fix it", scripted_server.base_url,
        test_command="cargo test", sandbox="local", plan=False, sink=ProgressPrinter(out),
    )  # fmt: skip
    printed = out.getvalue() + result.message
    assert result.exit_code == 2, printed
    assert scripted_server.chat_requests == [], printed  # said before any model call
    (failed,) = seen.of(ev.BaselineFailed)
    assert "needs a crate that is not in its cache" in failed.problem
    assert "`cargo fetch`" in result.message and "allow_network" in result.message
    assert "set test_command" not in result.message  # the toolchain's fix, not ours


def _unread(tail: str, exit_code: int = 101) -> TestReport:
    return TestReport("cargo test", exit_code, 0.4, False, output_tail=tail)


@pytest.mark.parametrize(
    ("tail", "fix"),
    [
        (
            "error: the lock file /w/Cargo.lock needs to be updated but --locked was passed "
            "to prevent this",
            "cargo update",
        ),
        (
            "error: cannot create the lock file /w/Cargo.lock because --locked was passed to "
            "prevent this",
            "cargo generate-lockfile",
        ),
        ("error: failed to write /w/Cargo.lock\n\nCaused by: Read-only file system", "fetch"),
        ("npm error code ENOTFOUND\nnpm error network request to https://registry...", "npm ci"),
        (
            'go: github.com/x/y@v1.2.0: Get "https://proxy.golang.org/...": dial tcp: lookup '
            "proxy.golang.org: no such host",
            "go mod download",
        ),
        ("  Caused by:\n  failed to download from `https://index.crates.io/config.json`", "fetch"),
    ],
)
def test_each_toolchain_says_its_own_fix(tail: str, fix: str) -> None:
    found = toolchain_problem(tail)
    assert found is not None and fix in found.fix
    problem = environment_problem(_unread(tail), ["src/lib.rs"])
    assert problem is not None and fix in problem


def test_a_failing_test_that_mentions_a_download_is_the_codes() -> None:
    tail = "test result: FAILED. 1 passed; 1 failed"
    report = _unread(tail)
    report.structured, report.failed = True, 1
    report.failures = [FailingTest("tests::fetch", "failed to download from `https://x`", "")]
    assert environment_problem(report, ["src/lib.rs"]) is None
