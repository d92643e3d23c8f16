"""Who wrote a shadow's changes: the step's authors, or its test runs (DESIGN.md invariant 9).

A test run may write in its working folder: a snapshot, coverage data, a lock file `cargo test`
rewrites. Those files are not the step's: the commit holds the model's edits and the human's
own. Test runs are the only writers the engine does not choose, so each run is bracketed
(engine/steps/test_writes.py): a path that changes between two runs was written by an author (the
model's edits, a hand edit, the user's edits taken in, a sandbox action, a proposal put back);
a path that changes only during runs was written by the tests. A path an author wrote since the
shadow was last reset stays the step's, whatever a test did to it afterwards.

This module holds that record; `Shadow` (vcs/shadow.py) keeps it up to date and splits its
changes by it.
"""

from __future__ import annotations

from collections.abc import Set
from dataclasses import dataclass, field


@dataclass
class Written:
    """One shadow's record since its last reset."""

    # Paths an author wrote (both names of a rename).
    authored: set[str] = field(default_factory=set)
    # The tree up to which writes were attributed (a tree id); None: the baseline's.
    counted: str | None = None
    # A test run ended since the reset: until then nothing can be the tests'.
    tests_ran: bool = False

    def copy(self) -> Written:
        return Written(set(self.authored), self.counted, self.tests_ran)

    def by_tests(self, changed: Set[str]) -> set[str]:
        """Of the paths `changed` against the baseline, those only the tests wrote."""
        return set(changed - self.authored) if self.tests_ran else set()
