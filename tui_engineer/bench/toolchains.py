"""Which of the exercism suite's languages can run on this machine. A language whose tools are
missing is left out before any run, with the reason: each of its exercises would only fail the
same way (a problem of the machine, not of a model), and its failures would be counted as the
model's."""

from __future__ import annotations

import shutil

from tui_engineer.base.errors import UserError
from tui_engineer.bench.exercism import TRACKS
from tui_engineer.bench.task import Task


def language_of(task: Task) -> str:
    return task.name.split("-", 1)[0]  # exercism tasks are named LANGUAGE-EXERCISE


def why_not(language: str) -> str | None:
    """Why `language`'s exercises cannot run here, or None when they can."""
    track = TRACKS[language]
    if track.unsupported:
        return track.unsupported
    for need in track.needs:
        choices = need.split("|")
        if not any(shutil.which(program) for program in choices):
            return f"`{choices[0]}` was not found on PATH (install {track.install})"
    return None


def runnable(tasks: list[Task]) -> tuple[list[Task], dict[str, str]]:
    """The tasks that can run, and the languages left out with why."""
    left_out = {}
    for language in dict.fromkeys(map(language_of, tasks)):
        reason = why_not(language)
        if reason is not None:
            left_out[language] = reason
    return [t for t in tasks if language_of(t) not in left_out], left_out


def _exercises(count: int, language: str = "") -> str:
    kind = f"{language} exercise" if language else "exercise"
    return f"{count} {kind}" + ("" if count == 1 else "s")


def checked(tasks: list[Task]) -> tuple[list[Task], list[str]]:
    """The tasks that can run, and a line to print for each language left out. When none can
    run, a UserError says why for each language."""
    kept, left_out = runnable(tasks)
    counts = {lang: sum(language_of(t) == lang for t in tasks) for lang in left_out}
    if not kept:
        reasons = "".join(
            f"\n  {lang} ({_exercises(counts[lang])}): {why}" for lang, why in left_out.items()
        )
        raise UserError(
            f"exercism: none of the exercises can run here:{reasons}\n"
            "Install what is missing, or choose other languages with --languages."
        )
    can_run = ",".join(dict.fromkeys(map(language_of, kept)))
    lines = [
        f"exercism: left out the {_exercises(counts[lang], lang)}: {why}. "
        f"Running {can_run} only (choose with --languages)."
        for lang, why in left_out.items()
    ]
    return kept, lines
