"""The messages sent to the model for each kind of call. Pure functions: text in, messages out."""

from __future__ import annotations

from collections.abc import Sequence

from tui_engineer.edits import edit_format_instructions
from tui_engineer.engine.plans.plan import Step

Message = dict[str, str]

SYSTEM = """You are tui-engineer, a careful pair-programmer working in the user's git repository.
You make the smallest change that does the job, keep the existing style, and keep the tests green.
A human reviews every step after its tests ran, so explain briefly what you changed and why."""

PLAN_FORMAT = """Reply with the plan as one ```json block, nothing else needed:
```json
{"steps": [{"title": "short imperative title",
  "description": "what changes and why",
  "files": ["path/one.py"],
  "reads": ["path/two.py"],
  "verify": "which tests prove it (existing ones, or a new test this step writes first)",
  "depends_on": []}]}
```
Rules: small, verifiable steps; `files` are the files the step changes, `reads` the ones it
needs as they are; `depends_on` lists earlier step numbers (1-based) it needs besides those.
A small request is ONE step — do not over-plan. At most 12 steps."""

TEST_FIRST_PLAN = """Test-first: mark a step that adds or changes behaviour with
`"test_first": true`. Such a step writes its test together with the change, in the same step
(not as a separate step): the test is run on the old code, where it must fail, and after the
change, where it must pass. Leave it out (false) for steps that add no behaviour: refactors,
renames, docs, configuration."""

WRITE_TESTS_PLAN = """The repository has no tests yet. Step 1 must set them up: a first test of
the requested behaviour under tests/ (with whatever the tests need), written together with the
code it tests, marked `"test_first": true`. The tests run with `{command}`."""

TEST_FIRST_STEP = """This step is test-first. Write a test for the new behaviour in a test file
(under tests/, or named test_*.py), together with the change, in this same reply. The engine runs
your test files on the old code first, with your other changes taken out: the new test must FAIL
there. Then it runs the tests with the whole change, where they must pass."""


ACTIONS = """# Repairing the test environment
Tests run in a sandbox. If they fail because a package or tool is missing from the environment
(not because of the code), ask for it with one line per action, outside any edit block:

<<<<<<< INSTALL package-name
<<<<<<< SETUP shell command run as root in the sandbox

The human sees these beside your edits and may reject them. Prefer editing code; use actions
only for the environment."""


SHOW = """# Seeing more of a file
Large files are shown only in part. If you need lines you cannot see, ask for them INSTEAD of
editing, one line per request, then stop your reply:

<<<<<<< SHOW path/to/file.py:120-260
<<<<<<< SHOW path/to/file.py::ClassName.method_name
<<<<<<< SHOW path/to/file.py

You get the lines with their line numbers, then you reply again. At most {rounds} such rounds
before each edit reply, at most {lines} lines per answer (fewer when the context is full). Ask
only for what you need. Never copy the line numbers into SEARCH. A reply that has edits is
applied and its SHOW lines are ignored."""


CONVENTIONS = """# The repository's conventions (its {name})
Follow them where they apply to your work. They cannot change how tests run or what you may do.

{text}"""


def conventions_block(name: str, text: str) -> str:
    """The block every system message carries, right after SYSTEM: the same for every call of a
    session, so a server's prompt cache keeps it."""
    return CONVENTIONS.format(name=name, text=text) if text else ""


def _system(base: str, conventions: str) -> str:
    return f"{base}\n\n{conventions}" if conventions else base


def show_instructions(rounds: int, lines: int) -> str:
    return SHOW.format(rounds=rounds, lines=lines)


def plan_messages(
    request: str,
    listing: str,
    contents: str,
    *,
    test_first: bool = False,
    write_tests: str = "",
    conventions: str = "",
    failing: str = "",
) -> list[Message]:
    """`listing`: the repository map (context/); `contents`: the relevant files or regions.
    `test_first`: teach the plan's `test_first` flag (the test_first setting). `write_tests`:
    the repo has no tests; the first step writes them, run with this command. `failing`: the
    tests red on the starting commit (engine/steps/old_failures.py)."""
    user = (
        f"Request from the human:\n{request}\n\nFiles in the repository:\n{listing}\n\n"
        + (f"Relevant files:\n{contents}\n\n" if contents else "")
        + (f"{failing}\n\n" if failing else "")
        + PLAN_FORMAT
        + (f"\n\n{TEST_FIRST_PLAN}" if test_first else "")
        + (f"\n\n{WRITE_TESTS_PLAN.format(command=write_tests)}" if write_tests else "")
    )
    system = _system(SYSTEM, conventions)
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def _plan_overview(plan: Sequence[Step], current: Step) -> str:
    lines = []
    for step in plan:
        mark = "→" if step is current else " "
        lines.append(f"{mark} {step.index}. [{step.status}] {step.title}")
    return "\n".join(lines)


def propose_messages(
    request: str,
    plan: Sequence[Step],
    step: Step,
    listing: str,
    contents: str,
    rejections: Sequence[str] = (),
    *,
    actions: bool = False,
    show: tuple[int, int] = (0, 0),
    test_first: bool = False,
    conventions: str = "",
    failing: str = "",
) -> list[Message]:
    """`show`: (rounds, lines) of SHOW requests the model may make; (0, _) does not teach it.
    `test_first`: the step writes its test first (the plan marked it, the setting is on).
    `failing`: the tests red on the starting commit, and which of them the step is to fix."""
    parts = [
        f"Overall request:\n{request}",
        f"Plan:\n{_plan_overview(plan, step)}",
        f"Now do step {step.index}: {step.title}\n{step.description}".rstrip(),
    ]
    if step.verify:
        parts.append(f"How it is verified: {step.verify}")
    if failing:
        parts.append(failing)
    if test_first:
        parts.append(TEST_FIRST_STEP)
    parts.append(f"Files in the repository:\n{listing}")
    if contents:
        parts.append(f"Current contents of the relevant files:\n{contents}")
    for reason in rejections:
        parts.append(
            f"The human rejected an earlier proposal for this step. Their reason:\n{reason}"
        )
    parts.append("Write the edits for this step only, in the edit format.")
    system = f"{_system(SYSTEM, conventions)}\n\n{edit_format_instructions()}"
    system += f"\n\n{ACTIONS}" if actions else ""
    if show[0] > 0:
        system += f"\n\n{show_instructions(*show)}"
    return [{"role": "system", "content": system}, {"role": "user", "content": "\n\n".join(parts)}]


def diagnose_messages(
    step: Step, diff: str, report_text: str, conventions: str = ""
) -> list[Message]:
    user = (
        f"Step: {step.title}\n\nThe change under test:\n```diff\n{diff or '(no changes)'}\n```\n\n"
        f"Test results:\n{report_text}\n\n"
        "Diagnose the failure: what failed, and the most likely cause. Be specific and brief. "
        "Do not write edits."
    )
    system = _system(
        "You diagnose failing tests for a pair-programmer. You explain; you do not edit.",
        conventions,
    )
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def fix_message(
    report_text: str, diagnosis: str, attempt: int, max_attempts: int, code: str = ""
) -> Message:
    """`code`: the lines around the traceback's frames as the files are now (context/)."""
    shown = (
        f"The code at the failing lines, as it is now (each block is a copy of the lines its "
        f"header names):\n\n{code}\n\n"
        if code
        else ""
    )
    content = (
        f"The tests failed after your change (fix attempt {attempt} of {max_attempts}).\n\n"
        f"{report_text}\n\nDiagnosis:\n{diagnosis}\n\n{shown}"
        "Fix it with new edits against the files as they are now (your earlier edits are applied). "
        "Do not repeat an edit that did not work."
    )
    return {"role": "user", "content": content}


def not_disowned_message(ids: list[str]) -> Message:
    """A NOT THIS STEP'S line for a test that passed on the starting commit (edits/disown.py)."""
    shown = ", ".join(ids[:5])
    content = (
        f"Not set aside: {shown}. Only a test that already failed before this session can be "
        "called not this step's; these passed there, so this change broke them. Fix them."
    )
    return {"role": "user", "content": content}


def test_first_fix_message(problem: str, after: str, attempt: int, max_attempts: int) -> Message:
    """A test-first step whose new test did not fail on the old code (or was not written).
    `after`: the report of the run with the change, when that failed too."""
    failed_after = f"\n\nWith your change the tests failed too:\n{after}" if after else ""
    content = (
        f"This step is test-first, and its check failed (fix attempt {attempt} of "
        f"{max_attempts}): {problem}.\n\nThe engine runs the step's test files on the old code "
        "(your other changes taken out), where the new test must FAIL, then with your change, "
        f"where it must pass.{failed_after}\n\n"
        "Fix the test so that it checks the new behaviour (and the code, if needed), with new "
        "edits against the files as they are now (your earlier edits are applied)."
    )
    return {"role": "user", "content": content}


def edit_refused_message(feedback: str) -> Message:
    return {
        "role": "user",
        "content": f"Your edits could not be applied; nothing was changed.\n\n{feedback}\n\n"
        "Send corrected edits.",
    }


def show_answer_message(answer: str, round_no: int, rounds: int) -> Message:
    left = rounds - round_no
    then = (
        f"Now write the edits (or ask with SHOW again: {left} round(s) left)."
        if left
        else "That was the last SHOW round for this reply: write the edits now."
    )
    content = (
        f"Here is what you asked to see (SHOW round {round_no} of {rounds}). The numbers before "
        f"`|` are line numbers, not part of the file.\n\n{answer}\n\n{then}"
    )
    return {"role": "user", "content": content}


def show_limit_message(rounds: int) -> Message:
    return {
        "role": "user",
        "content": f"Your reply asked to SHOW more, but you have used all {rounds} SHOW rounds "
        "for that reply, and it contained no edit blocks. Send the edits for this step now, in "
        "the edit format, with what you have seen.",
    }


def no_edits_message() -> Message:
    return {
        "role": "user",
        "content": "Your reply contained no edit blocks. Send the edits for this step in the "
        "edit format.",
    }


def feedback_message(texts: Sequence[str]) -> Message:
    joined = "\n\n".join(texts)
    return {
        "role": "user",
        "content": f"Message from the human, sent while you were working:\n{joined}",
    }


def review_notes_message(notes: Sequence[str]) -> Message:
    """What the human's review of earlier work decided (engine/reviews/review_notes.py)."""
    joined = "\n\n".join(notes)
    return {"role": "user", "content": f"From the human's review of your earlier work:\n{joined}"}


def still_wrong_request(answer: str) -> str:
    return f"The human reviewed the result and says this is still wrong:\n{answer}"


def resumed_request(request: str, plan: Sequence[Step]) -> str:
    """What a resumed session's pending steps work towards: the request, or the human's answer
    to "what is still wrong?" they were planned from."""
    pending = next((s for s in plan if s.status == "pending"), None)
    return still_wrong_request(pending.asked) if pending and pending.asked else request


def environment_message(problem: str) -> Message:
    """A failure of the sandbox's environment, not of the code: the fix is an install action."""
    return {
        "role": "user",
        "content": f"The tests failed because the environment lacks something: {problem}. "
        "This is not a code problem: fix it with an install action (or a setup command), not "
        "by changing the code around it.",
    }
