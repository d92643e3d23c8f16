"""A calc repository whose proposals have hunks far enough apart to keep or drop one by one
(tests of a review done as a pair: tests/tui/test_pair_review.py, the headless `p` answer,
scripts/screenshots.py). Edits in the model's SEARCH/REPLACE format."""

from __future__ import annotations

from tests.engine_support import edit

CALC = '''"""A calculator."""


def add(a, b):
    return a + b


def neg(a):
    return -a


def double(a):
    return 2 * a
'''
# Each run of the suite writes what it saw of calc.py into seen.log (ignored by git, so it
# stays in the shadow): which tree the tests really ran on.
CONFTEST = """import pathlib


def pytest_sessionstart(session):
    root = pathlib.Path(__file__).parent.parent
    seen = "stray" if "debug" in (root / "calc.py").read_text() else "clean"
    with open(root / "seen.log", "a") as log:
        log.write(seen + "\\n")
"""
FILES = {
    "calc.py": CALC,
    ".gitignore": "seen.log\n",
    "tests/conftest.py": CONFTEST,
    "tests/test_calc.py": "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n",
}
STRAY = edit("calc.py", '"""A calculator."""\n', '"""A calculator."""\nprint("debug")\n')
SUB_CODE = edit(
    "calc.py",
    "def double(a):\n    return 2 * a\n",
    "def double(a):\n    return 2 * a\n\n\ndef sub(a, b):\n    return a - b\n",
)
SUB_TEST = edit(
    "tests/test_calc.py",
    "    assert add(2, 3) == 5\n",
    "    assert add(2, 3) == 5\n\n\ndef test_sub():\n    from calc import sub\n\n"
    "    assert sub(5, 3) == 2\n",
)
MUL = edit(
    "calc.py",
    "def neg(a):\n    return -a\n",
    "def neg(a):\n    return -a\n\n\ndef mul(a, b):\n    return a * b\n",
)
