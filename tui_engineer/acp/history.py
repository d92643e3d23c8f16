"""A recorded session told again (`session/load`): its run record's events as the updates a
client shows, the user's words as user message chunks. A proposal's files are no longer in a
shadow, so its diff is shown as the recorded unified diff; what was cut off when the session
stopped is closed as such."""

from __future__ import annotations

from acp import start_tool_call, text_block, tool_content

from tui_engineer.acp.tool_content import hunk_locations, nothing_proposed, proposal_text
from tui_engineer.acp.updates import (
    SHOWN_REPLIES,
    Translator,
    Update,
    say_text,
    titled,
    user_said,
)
from tui_engineer.base.names import readable
from tui_engineer.edits.prose import EditBlockFilter
from tui_engineer.engine import events as ev


class HistoryTranslator(Translator):
    _request = ""
    _asked: set[str]

    def told(self, events: list[ev.Event]) -> list[Update]:
        self._asked = set()
        updates = [u for event in events for u in self.updates(event)]
        return updates + self.cut_off("the session stopped here")

    def _on_session_started(self, event: ev.SessionStarted) -> list[Update]:
        if event.request == self._request:  # a resumed run starts with the same request
            return []
        self._request = event.request
        self.new_plan()
        return [titled(event.request), user_said(event.request)]

    def _on_session_resumed(self, event: ev.SessionResumed) -> list[Update]:
        return [say_text(event.message)]

    def _on_session_finished(self, event: ev.SessionFinished) -> list[Update]:
        said = f"Session ended ({event.outcome})" + (f": {event.message}" if event.message else "")
        return [say_text(readable(said))]

    def _on_plan_ready(self, event: ev.PlanReady) -> list[Update]:
        asked = [s.asked for s in event.steps if s.asked and s.asked not in self._asked]
        self._asked.update(asked)
        return [*(user_said(a) for a in dict.fromkeys(asked)), *super()._on_plan_ready(event)]

    def _on_model_call_started(self, event: ev.ModelCallStarted) -> list[Update]:
        return []

    def _on_token(self, event: ev.TokenStream) -> list[Update]:
        return []

    def _on_model_exchange(self, event: ev.ModelExchange) -> list[Update]:
        if event.background or event.purpose not in SHOWN_REPLIES:
            return []
        prose = EditBlockFilter()
        text = (prose.feed(event.reply) + prose.finish()).strip()
        return [say_text(text)] if text else []

    def _on_feedback_delivered(self, event: ev.FeedbackDelivered) -> list[Update]:
        return [user_said(event.text)]

    def _on_proposal_ready(self, event: ev.ProposalReady) -> list[Update]:
        call = self._new_id("step")
        self._proposals[event.step] = call
        if not event.diff.strip():
            return [nothing_proposed(call, event)]
        diff = tool_content(text_block(f"```diff\n{readable(event.diff)}\n```"))
        summary = tool_content(text_block(proposal_text(event)))
        title = f"Step {event.step}: {event.title} ({event.summary})"
        return [
            start_tool_call(
                call,
                readable(title),
                kind="edit",
                status="pending",
                content=[diff, summary],
                locations=hunk_locations(self.root, event),
                raw_input={"step": event.step, "diff": event.diff},
            )  # fmt: skip
        ]
