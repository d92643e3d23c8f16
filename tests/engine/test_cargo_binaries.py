"""A Rust crate with two test binaries (the library's unit tests, then tests/more.rs) and an old
failure in the later one. cargo stops at the first binary that fails, so without
`--no-fail-fast` the baseline never saw the later binary's failure, and once a step fixed the
first binary that old failure looked new: the step went to the fix loop and stuck. Real cargo,
offline (no dependencies), under bubblewrap; the model scripted over real HTTP."""

from __future__ import annotations

import io

import pytest

from tests.conftest import git
from tests.engine.test_engine_runners import cargo_on_path as cargo_on_path  # a fixture
from tests.engine.test_engine_runners import needs_cargo
from tests.engine_support import edit, run_headless
from tests.scripted_server import Reply, ScriptedServer
from tests.tiers import whole_session
from tui_engineer.engine import events as ev
from tui_engineer.headless.printer import ProgressPrinter

FILES = {
    "Cargo.toml": '[package]\nname = "calc"\nversion = "0.1.0"\nedition = "2021"\n\n'
    "[dependencies]\n",
    ".gitignore": "target/\n",
    "src/lib.rs": "pub fn add(a: i64, b: i64) -> i64 {\n    a - b\n}\n\n"
    "pub fn mul(a: i64, b: i64) -> i64 {\n    a + b\n}\n\n"
    "#[cfg(test)]\nmod tests {\n    use super::*;\n\n"
    "    #[test]\n    fn adds() {\n        assert_eq!(add(2, 3), 5);\n    }\n}\n",
    "tests/more.rs": "use calc::mul;\n\n"
    "#[test]\nfn multiplies() {\n    assert_eq!(mul(4, 3), 12);\n}\n",
}
ADD = "pub fn add(a: i64, b: i64) -> i64 {\n"
FIX_ADD = edit("src/lib.rs", f"{ADD}    a - b\n}}\n", f"{ADD}    a + b\n}}\n")


pytestmark = pytest.mark.usefixtures("api_key")


@whole_session
@needs_cargo
async def test_an_old_failure_in_the_later_test_binary_does_not_block_a_fix_in_the_first(
    make_repo, scripted_server: ScriptedServer
) -> None:
    repo = make_repo(FILES)
    scripted_server.script(Reply(text=FIX_ADD), Reply(text="mul adds"), Reply(text=FIX_ADD))
    out = io.StringIO()
    result, seen = await run_headless(
        repo, "fix add", scripted_server.base_url, plan=False, sink=ProgressPrinter(out)
    )
    assert result.exit_code == 0, out.getvalue()
    assert git(repo, "log", "-1", "--format=%s") == "fix add"
    assert len(scripted_server.chat_requests) == 1  # no fix loop about the old failure
    (baseline,) = seen.of(ev.BaselineReady)
    assert baseline.command == "cargo test"
    assert baseline.failing == ("multiplies", "tests::adds")  # both binaries ran
    (proposal,) = seen.of(ev.ProposalReady)
    assert proposal.tests_ok and proposal.old_failures == ("multiplies",)
    assert "1 failing before this session: multiplies" in out.getvalue()
