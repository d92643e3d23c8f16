"""Watching a propose or fix reply for edits (issue 21 §3): a model that cannot do the work —
too small, or served without its chat template — answers an edit request with prose or code
that runs to the end of its window, for minutes a reply on a slow local server. Such a reply is
stopped once EDIT_SIGN_TOKENS came with no sign of an edit (llm/reply_watch.py), the model is
told why, and a second reply in a row with no edit (stopped or not) ends the session with one
sentence.

Any edit shape's opening line counts as a sign: a marker line (`<<<<<<< SEARCH`, FILE, DELETE,
RENAME, INSTALL, SETUP, SHOW), a unified diff's `+++ ` or `@@ ` line, a bare SHOW request. Only
at the start of a line: gemma3-270m echoed our "stopped" message, `<<<<<<< SEARCH` in its
prose, for 2,400 tokens. A fence alone does not count: rambling code is fenced too. No echo
check: a SEARCH block copies the prompt's lines by design."""

from __future__ import annotations

from tui_engineer.edits.shapes import unmarked_file_feedback
from tui_engineer.engine import prompts
from tui_engineer.llm.reply_watch import Expected, OffTrackReply, without_sign

# Real models open their first edit block after a sentence or a short paragraph (a few dozen
# tokens; a long analysis runs to 200-300). 400 tokens is ~25 lines of prose; past it without
# a sign the reply is something else. Thinking (<think>…</think>) does not count.
EDIT_SIGN_TOKENS = 400
EDIT_SHOWS = Expected(
    "an edit",
    (),
    EDIT_SIGN_TOKENS,
    echo=False,
    sign_line=r"^[ \t]*(?:<{5,9}[ \t]*[A-Z]|\+\+\+ |@@ |SHOW\b)",
)
WATCHED_PURPOSES = frozenset({"propose", "fix"})


def expect_for(purpose: str) -> Expected | None:
    """What a reply for `purpose` is watched for, if anything."""
    return EDIT_SHOWS if purpose in WATCHED_PURPOSES else None


def stopped_messages(off: OffTrackReply) -> list[prompts.Message]:
    """The stopped reply as the model wrote it, then why it was stopped and what to send: for
    a file shown in a bare fence, how to send a file (as had the reply run to its end)."""
    how = unmarked_file_feedback(off.partial) or (
        "Begin with the edits, in the edit format: the file's path on its own line, then "
        "`<<<<<<< SEARCH`, the lines as they are now, `=======`, the new lines, "
        "`>>>>>>> REPLACE`. Explain in a sentence at most."
    )
    return [
        {"role": "assistant", "content": off.partial},
        {
            "role": "user",
            "content": f"Your reply was stopped after {off.tokens} tokens: it held no edit. {how}",
        },
    ]


def shows_an_edit(reply: str) -> bool:
    """Whether a whole reply holds any sign of an edit (it may still be refused)."""
    return EDIT_SHOWS.shown_in(reply)


def no_edit(reply: str) -> OffTrackReply:
    """A whole reply with no edit in it, as the stopped ones are described."""
    return without_sign(EDIT_SHOWS, reply)
