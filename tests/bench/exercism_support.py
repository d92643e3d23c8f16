"""Small exercise folders in Exercism's layout (as aider's polyglot benchmark holds them), written
by the tests: one Python exercise and one Rust exercise, each with its instructions, config,
stub, tests (the Rust ones skipped but the first, as Exercism ships them) and example."""

from __future__ import annotations

import json
from pathlib import Path

TWO_FER_TEST = '''import unittest

from two_fer import two_fer


class TwoFerTest(unittest.TestCase):
    def test_no_name_given(self):
        self.assertEqual(two_fer(), "One for you, one for me.")

    def test_a_name_given(self):
        self.assertEqual(two_fer("Alice"), "One for Alice, one for me.")
'''
TWO_FER_EXAMPLE = 'def two_fer(name="you"):\n    return f"One for {name}, one for me."\n'
TWO_FER_STUB = 'def two_fer(name="you"):\n    pass\n'

REVERSE_TEST = """use reverse_string::reverse;

#[test]
fn an_empty_string() {
    assert_eq!(reverse(""), "");
}

#[test]
#[ignore]
fn a_word() {
    assert_eq!(reverse("robot"), "tobor");
}
"""
REVERSE_STUB = 'pub fn reverse(input: &str) -> String {\n    todo!("reverse {input}")\n}\n'
REVERSE_EXAMPLE = "pub fn reverse(input: &str) -> String {\n    input.chars().rev().collect()\n}\n"
CARGO_TOML = '[package]\nname = "reverse_string"\nversion = "1.2.0"\nedition = "2021"\n'


def _write(folder: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(text, encoding="utf-8")


def _config(solution: list[str], test: list[str], example: list[str]) -> str:
    files = {"solution": solution, "test": test, "example": example}
    return json.dumps({"authors": ["someone"], "files": files, "blurb": "..."}, indent=2)


def python_exercise(track: Path) -> Path:
    folder = track / "exercises" / "practice" / "two-fer"
    _write(
        folder,
        {
            ".docs/instructions.md": "# Instructions\n\nTwo-fer: `One for X, one for me.`\n",
            ".docs/instructions.append.md": "# Append\n\nWith no name, X is `you`.\n",
            ".meta/config.json": _config(["two_fer.py"], ["two_fer_test.py"], [".meta/example.py"]),
            ".meta/example.py": TWO_FER_EXAMPLE,
            "two_fer.py": TWO_FER_STUB,
            "two_fer_test.py": TWO_FER_TEST,
        },
    )
    return folder


def rust_exercise(track: Path) -> Path:
    folder = track / "exercises" / "practice" / "reverse-string"
    _write(
        folder,
        {
            ".docs/instructions.md": "# Instructions\n\nReverse a string: `robot` → `tobor`.\n",
            ".meta/config.json": _config(
                ["src/lib.rs", "Cargo.toml"], ["tests/reverse-string.rs"], [".meta/example.rs"]
            ),
            ".meta/example.rs": REVERSE_EXAMPLE,
            # The example's own manifest (Exercism's, for examples that need crates).
            ".meta/Cargo-example.toml": CARGO_TOML + "\n[dependencies]\n",
            ".gitignore": "/target\nCargo.lock\n",
            "Cargo.toml": CARGO_TOML,
            "src/lib.rs": REVERSE_STUB,
            "tests/reverse-string.rs": REVERSE_TEST,
        },
    )
    return folder


def polyglot_checkout(root: Path, *, rust: bool = True) -> Path:
    """A checkout laid out like the polyglot benchmark: one folder per language track."""
    python_exercise(root / "python")
    if rust:
        rust_exercise(root / "rust")
    return root
