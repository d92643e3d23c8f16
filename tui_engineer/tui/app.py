"""The Textual app: start-up checks as screens, the panes, the keys, and the engine as a worker.

The app holds no engine logic: it runs `prepare`/`run_prepared`, renders engine events
(`EngineEvent`) and answers the engine's questions through `TuiReviewer`.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import Iterable

from textual import on, work
from textual.app import App, ComposeResult, SystemCommand
from textual.binding import Binding
from textual.containers import Container, Vertical
from textual.screen import Screen
from textual.widgets import Footer, Tab, Tabs
from textual.worker import Worker

from tui_engineer.engine import events as ev
from tui_engineer.engine.plan import Step
from tui_engineer.engine.review import Decision
from tui_engineer.engine.session import Session
from tui_engineer.errors import UserError
from tui_engineer.headless.runner import Prepared, RunOptions, prepare, run_prepared
from tui_engineer.tui.bridge import Asked, EngineEvent, TuiReviewer, event_poster
from tui_engineer.tui.panes.chat import ChatInput, ChatPane
from tui_engineer.tui.panes.diff_view import DiffView
from tui_engineer.tui.panes.file_tree import RepoTree
from tui_engineer.tui.panes.plan import PlanPane
from tui_engineer.tui.panes.status import StatusBar
from tui_engineer.tui.panes.test_output import TestOutputPane
from tui_engineer.tui.screens import (
    DirtyTreeScreen,
    EditPlanScreen,
    InitRepoScreen,
    ProblemScreen,
    QuitScreen,
    RejectReasonScreen,
    StillWrongScreen,
    VerdictScreen,
)
from tui_engineer.tui.startup import problem_title, save_theme_choice, startup_url
from tui_engineer.tui.themes import DEFAULT_THEME, register_themes

PANES = [
    ("tree", "Files"),
    ("plan", "Plan"),
    ("diff", "Diff"),
    ("tests", "Tests"),
    ("chat", "Chat"),
]
REVIEW_ACTIONS = {"accept", "reject", "skip", "edit_plan"}
_DURATION = re.compile(r"\b\d+(\.\d+)?s\b")
_TEMP_PATH = re.compile(r"/\S*/(repo|worktrees?|tui-engineer\S*)\S*")
_ADDRESS = re.compile(r"0x[0-9a-f]{6,}")


class TuiEngineerApp(App[int]):
    """`options.request` empty: the app asks for a request in the chat box.
    `deterministic` (snapshots): no clock, no durations, no temp paths on screen."""

    CSS_PATH = "app.tcss"
    TITLE = "tui-engineer"
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (110, "-wide")]
    BINDINGS = [
        Binding("a", "accept", "Accept"),
        Binding("r", "reject", "Reject"),
        Binding("s", "skip", "Skip"),
        Binding("e", "edit_plan", "Edit plan"),
        Binding("u", "undo", "Undo"),
        Binding("t", "run_tests", "Run tests"),
        Binding("d", "toggle_split", "Split diff"),
        Binding("c", "focus_chat", "Chat"),
        Binding("q", "quit", "Quit"),
        Binding("ctrl+c", "quit", "Quit", show=False, priority=True),
        Binding("ctrl+q", "quit", "Quit", show=False, priority=True),
    ]

    def __init__(
        self, options: RunOptions, *, init: bool = False, deterministic: bool = False
    ) -> None:
        super().__init__()
        self.options = options
        self.init_first = init
        self.deterministic = deterministic
        self.reviewer = TuiReviewer(self.post_message)
        self.inbox: asyncio.Queue[str] = asyncio.Queue()
        self.prepared: Prepared | None = None
        self.session: Session | None = None
        self.engine: Worker[None] | None = None
        self.tests: Worker[object] | None = None
        self.ready = False  # start-up checks passed
        self.proposals_seen = 0  # tests and scripts wait on these counters
        self.finished_sessions = 0
        self._tests_running = False
        self._changes: set[str] = set()
        self.check_retries = 1  # the start-up server check (tests set 0)
        self.check_timeout = 15.0

    # ----- layout

    def compose(self) -> ComposeResult:
        # Kept as attributes: app.query_one() searches the top screen, which may be a dialog.
        self.plan_pane = PlanPane(id="pane-plan", classes="pane")
        self.chat = ChatPane(id="pane-chat", classes="pane")
        self.diff = DiffView(id="pane-diff", classes="pane")
        self.test_pane = TestOutputPane(id="pane-tests", classes="pane")
        self.chat_input = ChatInput(
            placeholder="What do you want done? (Enter sends)", id="chat-input"
        )
        self.status = StatusBar(deterministic=self.deterministic, id="status")
        yield Tabs(*(Tab(label, id=f"tab-{key}") for key, label in PANES), id="pane-tabs")
        with Container(id="panes"):
            yield Vertical(id="pane-tree", classes="pane")
            yield self.plan_pane
            yield self.chat
            yield self.diff
            yield self.test_pane
        yield self.chat_input
        yield self.status
        yield Footer()

    def on_mount(self) -> None:
        register_themes(self)
        self.theme = DEFAULT_THEME
        for key, title in PANES:
            self.query_one(f"#pane-{key}").border_title = title
        self._show_pane("diff")
        self.chat_input.focus()
        self.startup()

    def _show_pane(self, key: str) -> None:
        """Narrow terminals show one pane at a time (the tabs); wide ones show them all."""
        if self.screen_stack:
            self.screen_stack[0].query_one(Tabs).active = f"tab-{key}"  # -> _tab_activated

    @on(Tabs.TabActivated, "#pane-tabs")
    def _tab_activated(self, event: Tabs.TabActivated) -> None:
        # Only classes here: setting Tabs.active again would ping-pong with stale events.
        key = (event.tab.id or "").removeprefix("tab-")
        for pane_key, _ in PANES:
            pane = self.screen_stack[0].query_one(f"#pane-{pane_key}")
            pane.set_class(pane_key == key, "-active")

    # ----- start-up: each problem is a screen

    @work(group="startup", exclusive=True)
    async def startup(self) -> None:
        self.status.phase = "checking the repository and settings"
        if self.init_first:
            from tui_engineer.vcs import init_repo

            await asyncio.to_thread(init_repo, self.options.repo)
        prepared = await self._prepare_until_ok()
        if prepared is None:
            self.exit(2, return_code=2)
            return
        await self._became_ready(prepared)

    async def _prepare_until_ok(self) -> Prepared | None:
        from tui_engineer.vcs import DirtyTree, NotARepo

        while True:
            try:
                prepared = await asyncio.to_thread(prepare, self.options)
                await self._check_server(prepared)
                return prepared
            except NotARepo:
                if not await self._offer_init():
                    return None
            except DirtyTree:
                if not await self._ask_dirty():
                    return None
            except UserError as err:
                url = await asyncio.to_thread(startup_url, self.options, err)
                screen = ProblemScreen(problem_title(err), str(err), url)
                if not await self.push_screen_wait(screen):
                    return None

    async def _check_server(self, prepared: Prepared) -> None:
        """One quick look at the server, with its own small retry count: a server that is down
        gets its screen (with Retry) in a second or two, not after the session's backoff."""
        from tui_engineer.llm import ModelClient

        if getattr(prepared.model, "check_connection", None) is None:
            return  # a replayed run needs no server
        s = prepared.settings
        checker = ModelClient(
            model=s.model,
            base_url=s.base_url,
            api_key=s.api_key,
            api_key_env=s.api_key_env,
            max_retries=self.check_retries,
            timeout=self.check_timeout,
        )
        self.status.busy = f"checking {checker.base_url}"
        try:
            await checker.check_connection()
        except UserError:
            await prepared.model.aclose()
            raise
        finally:
            await checker.aclose()
            self.status.busy = ""

    async def _offer_init(self) -> bool:
        from tui_engineer.vcs import init_repo

        if not await self.push_screen_wait(InitRepoScreen(self.options.repo)):
            return False
        root = await asyncio.to_thread(init_repo, self.options.repo)
        self.notify(f"Created a git repository in {root}", title="git init")
        return True

    async def _ask_dirty(self) -> bool:
        from tui_engineer.vcs import find_repo_root, handle_dirty, repo_state

        root = await asyncio.to_thread(find_repo_root, self.options.repo)
        state = await asyncio.to_thread(repo_state, root)
        choice = await self.push_screen_wait(DirtyTreeScreen(state.changed_files))
        if choice is None:
            return False
        if choice == "include":
            self.options.allow_dirty = True
        done = await asyncio.to_thread(handle_dirty, root, choice)
        self.notify(done, title="Uncommitted changes", timeout=8)
        await self.chat.note(done)
        return True

    async def _became_ready(self, prepared: Prepared) -> None:
        self.prepared = prepared
        self.ready = True
        if prepared.settings.theme in self.available_themes:
            self.theme = prepared.settings.theme
        self.theme_changed_signal.subscribe(self, self._theme_changed)
        tree_slot = self.screen_stack[0].query_one("#pane-tree")
        await tree_slot.mount(RepoTree(prepared.root, id="tree"))
        self.status.model = prepared.settings.model
        self.status.sandbox = prepared.settings.sandbox
        self.status.max_tokens = prepared.settings.max_tokens
        self.status.max_usd = prepared.settings.max_usd
        self.status.phase = "ready"
        if self.options.request:
            await self.chat.user_message(self.options.request, queued=False)
            self.start_session(self.options.request)
        else:
            await self.chat.note("Type what you want done below and press Enter.")

    def _theme_changed(self, _theme: object) -> None:
        if not self.deterministic:
            save_theme_choice(self.theme)

    # ----- the session worker

    def start_session(self, request: str) -> None:
        self.options.request = request
        self.chat_input.placeholder = "Message the model (sent with its next call)"
        self.engine = self.run_worker(self._run_session(), group="engine", exit_on_error=False)
        self.refresh_bindings()

    async def _run_session(self) -> None:
        try:
            prepared = self.prepared or await asyncio.to_thread(prepare, self.options)
            self.prepared = None  # run_prepared closes its model: the next session re-prepares
            result = await run_prepared(
                prepared,
                self.reviewer,
                event_poster(self.post_message),
                inbox=self.inbox,
                on_session=self._got_session,
            )
            self.status.phase = f"finished: {result.outcome} — {result.message}"
        except UserError as err:
            await self.chat.note(str(err), error=True)
            self.notify(str(err), title="Session stopped", severity="error", timeout=15)
            self.status.phase = "stopped"
        finally:
            self.session = None
            self.finished_sessions += 1
            self.status.busy = ""
            self.status.stop_clock()
            self.refresh_bindings()

    def _got_session(self, session: Session) -> None:
        self.session = session

    @property
    def in_flight(self) -> str | None:
        """What quitting would interrupt, or None."""
        if self._tests_running:
            return "A test run is going."
        if self.engine is not None and self.engine.is_running:
            return "A session is under way."
        return None

    async def stop_work(self) -> None:
        """Cancel the engine and any test run, and wait for their cleanup (the engine's
        finally-blocks kill test processes and remove the shadow worktree)."""
        workers = [w for w in (self.tests, self.engine) if w is not None and w.is_running]
        for worker in workers:
            worker.cancel()
        for worker in workers:
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await worker.wait()

    # ----- engine events

    async def on_engine_event(self, message: EngineEvent) -> None:
        handler = getattr(self, f"_on_{message.event.type}", None)
        if handler is not None:
            await handler(message.event)

    async def _on_session_started(self, event: ev.SessionStarted) -> None:
        self.status.model = event.model
        self.status.sandbox = event.sandbox
        self.status.phase = "planning" if self.options.plan else "working"
        self.status.start_clock()

    async def _on_notice(self, event: ev.Notice) -> None:
        await self.chat.note(event.message)

    async def _on_plan_ready(self, event: ev.PlanReady) -> None:
        known = set(self.plan_pane.rows)
        self.plan_pane.set_steps(event.steps)
        new = [(step.index, step.title) for step in event.steps if step.index not in known]
        await self.chat.show_plan(new)

    async def _on_step_started(self, event: ev.StepStarted) -> None:
        self.plan_pane.set_status(event.index, "proposing")
        self.status.phase = f"step {event.index}: {event.title}"

    async def _on_model_call_started(self, event: ev.ModelCallStarted) -> None:
        self.status.busy = f"model: {event.purpose}"
        where = f"step {event.step} · " if event.step is not None else ""
        # A plan arrives as JSON: "Planning…" while it streams, then the steps (PlanReady).
        quiet = "Planning…" if event.purpose == "plan" else ""
        await self.chat.begin_reply(f"{self.status.model} — {where}{event.purpose}", quiet=quiet)

    async def _on_token(self, event: ev.TokenStream) -> None:
        await self.chat.add_text(event.text)

    async def _on_model_exchange(self, event: ev.ModelExchange) -> None:
        await self.chat.end_reply()
        self.status.busy = ""

    async def _on_usage(self, event: ev.UsageUpdated) -> None:
        self.status.tokens = event.prompt_tokens + event.completion_tokens
        self.status.usd = event.usd
        self.status.max_tokens, self.status.max_usd = event.max_tokens, event.max_usd

    async def _on_feedback_delivered(self, event: ev.FeedbackDelivered) -> None:
        self.chat.delivered(event.text, event.purpose)

    async def _on_edit_refused(self, event: ev.EditRefused) -> None:
        await self.chat.note(f"Edit refused (step {event.step}): {event.reason}", error=True)

    async def _on_attempt_started(self, event: ev.AttemptStarted) -> None:
        if event.attempt > 0:
            detail = f"{event.attempt}/{event.max_attempts}"
            self.plan_pane.set_status(event.step, "fixing", detail)
            self.status.phase = f"step {event.step}: fixing ({detail})"
        else:
            self.plan_pane.set_status(event.step, "proposing")

    async def _on_edits_applied(self, event: ev.EditsApplied) -> None:
        """Work in progress: the step's diff so far, before its tests ran (a fix loop shows
        each attempt as it lands)."""
        if not event.diff.strip():
            return
        self.diff.show_diff(event.diff)
        self.diff.border_title = f"Diff — step {event.step}, in progress (not reviewed yet)"
        marks = {file.path: file.status for file in self.diff.files}
        self._changes = set(marks)
        self._tree_marks(marks)

    async def _on_tests_started(self, event: ev.TestsStarted) -> None:
        self._tests_running = True
        self.status.busy = "tests running"
        if event.step is not None:
            row = self.plan_pane.rows.get(event.step)
            detail = row.detail if row and row.status == "fixing" else ""
            self.plan_pane.set_status(event.step, "testing", detail)
        self.test_pane.begin(event.command)

    async def _on_test_output(self, event: ev.TestOutput) -> None:
        self.test_pane.write_line(self._scrub(event.line))

    def _scrub(self, line: str) -> str:
        """Snapshot mode: no temp paths or timings in the output (they change every run)."""
        if not self.deterministic:
            return line
        line = _ADDRESS.sub("0x…", _TEMP_PATH.sub("<tmp>", line))
        return _DURATION.sub("0.00s", line)

    async def _on_tests_finished(self, event: ev.TestsFinished) -> None:
        self._tests_running = False
        self.status.busy = ""
        self.test_pane.finish(
            ok=event.ok,
            summary=self._scrub(event.summary),
            passed=event.passed,
            failed=event.failed,
            errors=event.errors,
            skipped=event.skipped,
            duration=0.0 if self.deterministic else event.duration,
            failures=list(event.failures),
        )

    async def _on_stuck(self, event: ev.Stuck) -> None:
        await self.chat.note(f"Step {event.step} looks stuck: {event.reason}", error=True)

    async def _on_proposal_ready(self, event: ev.ProposalReady) -> None:
        self.proposals_seen += 1
        self.diff.show_diff(event.diff)
        self.diff.border_title = f"Diff — step {event.step}"
        marks = {path: letter[:1] for letter, path in event.changes}
        self._changes = set(marks)
        self._tree_marks(marks)
        self.plan_pane.set_status(event.step, "awaiting review")
        tests = "tests pass" if event.tests_ok else f"tests: {event.summary}"
        self.status.phase = f"review step {event.step} ({tests})"  # the keys are in the footer
        for note in event.notes:
            await self.chat.note(note)
        self._show_pane("diff")
        if not self.chat_input.value and self.focused is self.chat_input:
            self.diff.focus()  # the review keys work at once; a half-typed message keeps focus

    def _tree_marks(self, marks: dict[str, str]) -> None:
        if self.screen_stack:
            for tree in self.screen_stack[0].query(RepoTree):
                tree.mark_changes(marks)

    async def _on_decision(self, event: ev.DecisionMade) -> None:
        if event.decision == "reject":
            self.plan_pane.set_status(event.step, "rejected")
            await self.chat.note(f"Step {event.step} rejected: {event.reason}")
        self._changes = set()
        self._tree_marks({})
        self.diff.show_diff("")
        self.diff.border_title = "Diff"

    async def _on_step_committed(self, event: ev.StepCommitted) -> None:
        self.plan_pane.set_status(event.step, "accepted", event.sha[:7])
        sha = "" if self.deterministic else f" as {event.sha[:7]}"
        await self.chat.note(f"✓ Step {event.step} committed{sha}: {event.title}")

    async def _on_step_undone(self, event: ev.StepUndone) -> None:
        self.plan_pane.set_status(event.step, "undone")
        await self.chat.note(event.message)

    async def _on_step_skipped(self, event: ev.StepSkipped) -> None:
        self.plan_pane.set_status(event.step, "skipped")

    async def _on_budget_warning(self, event: ev.BudgetWarning) -> None:
        await self.chat.note(event.message, error=True)
        self.notify(event.message, title="Budget", severity="warning", timeout=10)

    async def _on_error(self, event: ev.ErrorEvent) -> None:
        await self.chat.note(event.message, error=True)
        self.notify(event.message, title="Error", severity="error", timeout=15)

    async def _on_verdict(self, event: ev.VerdictRecorded) -> None:
        level = "perfect" if event.perfect else "works" if event.worked else "ran"
        await self.chat.note(f"Verdict saved: {level if event.ran else 'did not run'}")

    async def _on_session_finished(self, event: ev.SessionFinished) -> None:
        await self.chat.note(f"Session {event.outcome}: {event.message}")
        await self.chat.note("Type a new request below to start again, or press q to quit.")

    # ----- the engine's questions

    async def on_asked(self, message: Asked) -> None:
        self.refresh_bindings()
        if message.question == "still_wrong":
            self.status.phase = "what is still wrong?"
            done = sum(1 for row in self.plan_pane.rows.values() if row.status == "accepted")
            summary = f"All steps are through: {done} committed."
            self.push_screen(StillWrongScreen(summary), self.reviewer.answer)
        elif message.question == "verdict":
            self.push_screen(VerdictScreen(), self.reviewer.answer)

    # ----- chat

    @on(ChatInput.Submitted, "#chat-input")
    async def _chat_submitted(self, event: ChatInput.Submitted) -> None:
        text = event.value.strip()
        event.input.clear()
        if not text:
            return
        if not self.ready:
            self.notify("Still starting up: send it again in a moment.", severity="warning")
            return
        running = self.engine is not None and self.engine.is_running
        await self.chat.user_message(text, queued=running)
        if running:
            self.inbox.put_nowait(text)
        else:
            self.start_session(text)

    # ----- keys

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in REVIEW_ACTIONS:
            reviewing = self.reviewer.question == "review" and len(self.screen_stack) == 1
            return True if reviewing else None
        if action == "run_tests":
            return True if self.reviewer.waiting and not self._tests_running else None
        return True

    def _answer(self, decision: Decision) -> None:
        if self.reviewer.question == "review":
            self.reviewer.answer(decision)
            self.refresh_bindings()

    def action_accept(self) -> None:
        self._answer(Decision.accept())

    def action_skip(self) -> None:
        self._answer(Decision("skip", "skipped by the human"))

    def action_reject(self) -> None:
        proposal = self.reviewer.proposal
        if proposal is None:
            return

        def done(reason: str | None) -> None:
            if reason is not None:
                self._answer(Decision.reject(reason))

        self.push_screen(RejectReasonScreen(proposal.step.title), done)

    def action_edit_plan(self) -> None:
        proposal = self.reviewer.proposal
        if proposal is None:
            return
        steps = [proposal.step] + [s for s in proposal.plan if s.status == "pending"]
        known = {s.title: s for s in steps}

        def done(titles: list[str] | None) -> None:
            if titles is not None:
                new = [_step_for(title, known.get(title)) for title in titles]
                self._answer(Decision("edit_plan", "plan edited by the human", new_steps=new))

        self.push_screen(EditPlanScreen([s.title for s in steps]), done)

    def action_undo(self) -> None:
        if self.reviewer.question == "review":
            self.notify(
                "Finish this review first (accept, reject or skip): undo takes back the last "
                "accepted commit between steps.",
                severity="warning",
            )
            return
        if self.engine is not None and self.engine.is_running and not self.reviewer.waiting:
            self.notify("Wait until the engine asks you something.", severity="warning")
            return
        self._undo()

    @work(group="undo", exclusive=True, exit_on_error=False)
    async def _undo(self) -> None:
        try:
            if self.session is not None:
                message = await self.session.undo_last()
            else:
                from tui_engineer.vcs import find_repo_root, undo_last

                root = await asyncio.to_thread(find_repo_root, self.options.repo)
                message = await asyncio.to_thread(undo_last, root)
                await self.chat.note(message)
        except UserError as err:
            self.notify(str(err), title="Cannot undo", severity="error", timeout=12)
            return
        self.notify(message, title="Undone")

    def action_run_tests(self) -> None:
        session = self.session
        if session is None or not self.reviewer.waiting or self._tests_running:
            return
        self._tests_running = True
        self.tests = self.run_worker(session.rerun_tests(), group="tests", exit_on_error=False)
        self.refresh_bindings()

    def action_toggle_split(self) -> None:
        self.diff.toggle_split()

    def action_focus_chat(self) -> None:
        self.chat_input.focus()
        if self.screen.has_class("-narrow"):
            self._show_pane("chat")

    async def action_quit(self) -> None:
        doing = self.in_flight
        if doing is None:
            await self.stop_work()
            self.exit(0)
            return
        if isinstance(self.screen, QuitScreen):
            return

        def answered(quit_now: bool | None) -> None:
            if quit_now:
                self._quit_now()

        self.push_screen(QuitScreen(doing), answered)

    @work(group="quit", exclusive=True)
    async def _quit_now(self) -> None:
        self.status.busy = "stopping: cleaning up the shadow worktree"
        await self.stop_work()
        self.exit(0)

    # ----- tree and plan selection

    @on(RepoTree.FileSelected)
    def _file_selected(self, event: RepoTree.FileSelected) -> None:
        self._show_pane("diff")
        if not self.diff.focus_file(event.path):
            self._show_file(event.path)

    @work(group="file", exclusive=True)
    async def _show_file(self, rel: str) -> None:
        root = self.screen_stack[0].query_one(RepoTree).root_path
        try:
            text = await asyncio.to_thread((root / rel).read_text, encoding="utf-8")
        except (OSError, UnicodeDecodeError) as err:
            self.notify(f"{rel}: cannot show ({err})", severity="warning")
            return
        self.diff.show_file(rel, text)

    @on(RepoTree.FilesChanged)
    async def _files_changed(self, event: RepoTree.FilesChanged) -> None:
        touched = sorted(self._changes.intersection(event.paths))
        proposal = self.reviewer.proposal
        if touched and proposal is not None:
            self.plan_pane.set_status(proposal.step.index, "stale")
            await self.chat.note(
                f"You edited {', '.join(touched)}, which this proposal also changes: it is "
                "stale. Reject it with a reason to get a fresh one, or press t to re-run tests."
            )

    @on(PlanPane.StepChosen)
    def _step_chosen(self, event: PlanPane.StepChosen) -> None:
        info = event.info
        files = f"\nFiles: {', '.join(info.files)}" if info.files else ""
        self.notify(f"{info.description or info.title}{files}", title=f"Step {info.index}")

    # ----- command palette

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        for binding in self.BINDINGS:
            if isinstance(binding, Binding) and binding.show and binding.action != "quit":
                yield SystemCommand(
                    binding.description,
                    f"{binding.description} (key: {binding.key})",
                    _runner(self, binding.action),
                )


def _runner(app: App[int], action: str):  # -> Callable[[], Awaitable[None]]
    async def run() -> None:
        await app.run_action(action)

    return run


def _step_for(title: str, old: Step | None) -> Step:
    """A step for the edited plan; a kept title keeps its description and files."""
    if old is None:
        return Step(index=0, title=title, description=title)
    return Step(index=0, title=title, description=old.description, files=list(old.files))
