"""Every way a user's repository can refuse an accept leaves the step under review, nothing
lost: your own edits to the step's files since it was proposed, another git process holding the
index, the branch moved while the hooks ran, a hook refusing while the session is being
stopped. Real headless sessions, real git repos, hooks and pytest runs, the model over HTTP."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import git, write_hook
from tests.engine_support import SUB, StepReviewer, run_headless
from tests.scripted_server import Reply, ScriptedServer
from tests.tiers import whole_session
from tests.timing_support import REACHED, session_in_a_slow_hook, titles
from tui_engineer.engine import events as ev
from tui_engineer.engine.reviews.review import Decision
from tui_engineer.session.resume import load_run

pytestmark = pytest.mark.usefixtures("api_key")


class AcceptTwice(StepReviewer):
    """Accepts after doing `before_first` (what the user does in their repository meanwhile),
    then, told the accept was refused, `fix` (the user fixes the cause) and accepts again."""

    def __init__(self, before_first: Callable[[], None], fix: Callable[[], None]) -> None:
        self.before_first, self.fix = before_first, fix
        self.reviews = 0

    async def review(self, proposal):
        self.reviews += 1
        if self.reviews == 1:
            self.before_first()
        else:
            self.fix()
        return Decision.accept()


async def refused_then_accepted(
    repo: Path, server: ScriptedServer, before_first: Callable[[], None], fix: Callable[[], None]
) -> tuple[list[ev.AcceptRefused], AcceptTwice]:
    server.script(Reply(text=SUB))
    reviewer = AcceptTwice(before_first, fix)
    result, seen = await run_headless(
        repo, "add sub", server.base_url, reviewer=reviewer, plan=False
    )
    assert result.outcome == "done", result.message
    assert reviewer.reviews == 2  # the same step asked about again, no new model call
    assert len(server.chat_requests) == 1
    assert titles(repo)[0] == "add sub"
    assert "def sub" in (repo / "calc.py").read_text()
    return seen.of(ev.AcceptRefused), reviewer


@whole_session
async def test_your_edit_to_a_step_file_since_the_proposal_is_refused_then_accepted(
    make_repo, scripted_server: ScriptedServer
) -> None:
    repo = make_repo()
    calc = repo / "calc.py"
    original = calc.read_text()

    def edit() -> None:
        calc.write_text(original + "# mine\n")

    def undo_edit() -> None:
        assert calc.read_text() == original + "# mine\n"  # the refusal kept the user's edit
        calc.write_text(original)

    refused, _ = await refused_then_accepted(repo, scripted_server, edit, undo_edit)
    assert "You changed files this step also changes" in refused[0].message


@whole_session
async def test_a_commit_of_another_session_on_a_step_file_is_said_as_such_not_blamed_on_you(
    make_repo, scripted_server: ScriptedServer
) -> None:
    """Another session (an older version's, or one on another machine, which one repository
    one session cannot see) committed on a file of the step since it was proposed: the refusal
    names that commit and who made it, and never says the user changed files (issue 37 §2)."""
    repo = make_repo()
    calc = repo / "calc.py"

    def commit_elsewhere() -> None:
        calc.write_text(calc.read_text() + "# theirs\n")
        git(repo, "commit", "-qam", "Add theirs\n\nAssisted-by: tui-engineer (model: m)")

    def drop_it() -> None:
        git(repo, "reset", "-q", "--hard", "HEAD~1")

    refused, _ = await refused_then_accepted(repo, scripted_server, commit_elsewhere, drop_it)
    message = refused[0].message
    assert "You changed" not in message
    assert "Commits made on this branch since the step was proposed" in message
    assert '"Add theirs" by another tui-engineer session' in message
    assert "calc.py" in message
    assert "still under review" in refused[0].message
    assert git(repo, "status", "--porcelain") == ""


@whole_session
async def test_an_index_held_by_another_git_process_is_refused_as_git_commit_would(
    make_repo, scripted_server: ScriptedServer
) -> None:
    repo = make_repo()
    lock = repo / ".git" / "index.lock"
    refused, _ = await refused_then_accepted(repo, scripted_server, lock.touch, lock.unlink)
    assert "Another git process seems to be running" in refused[0].message
    assert f"rm {lock}" in refused[0].message
    assert git(repo, "status", "--porcelain") == ""  # the index holds the step: nothing staged


@whole_session
async def test_a_branch_moved_while_the_hooks_ran_is_refused_then_committed_on_top(
    make_repo, scripted_server: ScriptedServer
) -> None:
    repo = make_repo()
    once = repo.parent / "move-once"
    once.touch()
    # As if the user committed from another terminal while our hooks ran.
    write_hook(
        repo,
        "pre-commit",
        f"if [ -e '{once}' ]; then rm '{once}'\n"
        "  c=$(git commit-tree 'HEAD^{tree}' -p HEAD -m 'theirs')\n"
        "  git update-ref refs/heads/main $c\nfi\n",
    )
    refused, _ = await refused_then_accepted(repo, scripted_server, lambda: None, lambda: None)
    assert "refs/heads/main moved while the step was being committed" in refused[0].message
    assert titles(repo) == ["add sub", "theirs", "initial"]  # theirs kept, the step on top
    assert git(repo, "status", "--porcelain") == ""


@whole_session
async def test_a_hook_refusing_while_the_session_is_stopped_is_said_and_shown_on_resume(
    make_repo, scripted_server: ScriptedServer
) -> None:
    repo = make_repo()
    async with session_in_a_slow_hook(repo, scripted_server, "lint: no") as (
        session,
        seen,
        release,
    ):
        session.cancel()  # Ctrl-C while the hook runs; then the hook refuses
        release.touch()
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(asyncio.shield(session), REACHED)
    [refused] = [e for e in seen if isinstance(e, ev.AcceptRefused)]
    assert "lint: no" in refused.message and "resume" in refused.message
    [finished] = [e for e in seen if isinstance(e, ev.SessionFinished)]
    assert finished.outcome == "quit" and finished.commits == ()
    assert titles(repo) == ["initial"] and git(repo, "status", "--porcelain") == ""
    state = load_run(repo)  # the record: the step is to be reviewed again, not "accepted"
    assert state.under_review is not None and state.under_review.step == 1
    assert state.accepted_uncommitted == []


@whole_session
async def test_a_commit_made_whose_shadow_cannot_follow_is_never_offered_again(
    make_repo, scripted_server: ScriptedServer
) -> None:
    """The commit is on the branch when the shadow fails to move onto it (its folder went):
    the step is said committed, not "not committed ... nothing was written" and reviewed again
    (a second accept would commit it twice); the session stops, saying how to go on."""
    repo = make_repo()
    write_hook(repo, "post-commit", 'rm -rf "$XDG_CACHE_HOME/tui-engineer/worktrees"\n')
    scripted_server.script(Reply(text=SUB))
    reviewer = AcceptTwice(lambda: None, lambda: None)
    result, seen = await run_headless(
        repo, "add sub", scripted_server.base_url, reviewer=reviewer, plan=False
    )
    assert reviewer.reviews == 1 and seen.of(ev.AcceptRefused) == []
    assert [e.title for e in seen.of(ev.StepCommitted)] == ["add sub"]
    assert titles(repo) == ["add sub", "initial"]
    assert result.outcome == "stopped" and "is committed as" in result.message
    assert "--resume" in result.message
