"""A prepared step moved onto new files (engine/ahead/stacked.py) where git has no
`merge-tree --merge-base` (older than 2.40: Debian 12's 2.39, Ubuntu 22.04's 2.34): the step's
own diff is applied to the new tree instead. The README pass in a Debian 12 image found every
moved step proposed again there. Real git, both ways compared."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from tests.conftest import git
from tui_engineer.engine.ahead.stacked import applied_tree, merged_tree

CALC = "".join(f"def f{n}(a):\n    return a + {n}\n\n\n" for n in range(12))


def commit(repo: Path, files: dict[str, str], parent: str) -> str:
    git(repo, "checkout", "-q", "--detach", parent)
    for name, text in files.items():
        (repo / name).write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "x")
    return git(repo, "rev-parse", "HEAD").strip()


def shapes(make_repo) -> tuple[SimpleNamespace, str, str, str]:
    """A base; step 1's proposal (the new base) changes the top of calc.py; step 2, prepared
    on the old base, changes its bottom and adds a file."""
    repo = make_repo({"calc.py": CALC})
    base = git(repo, "rev-parse", "HEAD").strip()
    top = CALC.replace("return a + 0", "return a + 100")
    new_base = commit(repo, {"calc.py": top}, base)
    bottom = CALC.replace("return a + 11", "return a + 111")
    tip = commit(repo, {"calc.py": bottom, "mul.py": "def mul(a, b):\n    return a * b\n"}, base)
    return SimpleNamespace(path=repo), base, new_base, tip


def test_the_older_gits_way_gives_the_same_tree_as_the_three_way_merge(make_repo) -> None:
    shadow, base, new_base, tip = shapes(make_repo)
    three_way = merged_tree(shadow, base, new_base, tip)
    applied = applied_tree(shadow, base, new_base, tip)
    assert three_way is not None and applied == three_way
    shown = git(shadow.path, "show", f"{applied}:calc.py")
    assert "a + 100" in shown and "a + 111" in shown


def test_a_step_whose_lines_changed_under_it_conflicts_both_ways(make_repo) -> None:
    shadow, base, new_base, _ = shapes(make_repo)
    clash = commit(shadow.path, {"calc.py": CALC.replace("return a + 0", "return a - 0")}, base)
    assert merged_tree(shadow, base, new_base, clash) is None
    assert applied_tree(shadow, base, new_base, clash) is None
