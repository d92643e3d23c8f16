"""Small exercise folders in Exercism's layout (as aider's polyglot benchmark holds them), written
by the tests: one Python exercise and one Rust exercise, each with its instructions, config,
stub, tests (the Rust ones skipped but the first, as Exercism ships them) and example."""

from __future__ import annotations

import json
from pathlib import Path

TWO_FER_TEST = """import unittest

from two_fer import two_fer


class TwoFerTest(unittest.TestCase):
    def test_no_name_given(self):
        self.assertEqual(two_fer(), "One for you, one for me.")

    def test_a_name_given(self):
        self.assertEqual(two_fer("Alice"), "One for Alice, one for me.")
"""
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


# --- Go: a stub, its test over cases in an "editor" file (shown, not the student's), go.mod ---

GO_STUB = 'package reverse\n\nfunc Reverse(input string) string {\n\tpanic("Please implement")\n}\n'
GO_EXAMPLE = """package reverse

func Reverse(input string) string {
\tr := []rune(input)
\tfor i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
\t\tr[i], r[j] = r[j], r[i]
\t}
\treturn string(r)
}
"""
GO_TEST = """package reverse

import "testing"

func TestReverse(t *testing.T) {
\tfor _, tc := range testCases {
\t\tt.Run(tc.description, func(t *testing.T) {
\t\t\tif got := Reverse(tc.input); got != tc.expected {
\t\t\t\tt.Fatalf("Reverse(%q) = %q, want %q", tc.input, got, tc.expected)
\t\t\t}
\t\t})
\t}
}
"""
GO_CASES = """package reverse

var testCases = []struct {
\tdescription string
\tinput       string
\texpected    string
}{
\t{"an empty string", "", ""},
\t{"a word", "robot", "tobor"},
}
"""


def go_exercise(track: Path) -> Path:
    folder = track / "exercises" / "practice" / "reverse-string"
    config = json.loads(
        _config(["reverse_string.go"], ["reverse_string_test.go"], [".meta/example.go"])
    )
    config["files"] |= {"editor": ["cases_test.go"], "invalidator": ["go.mod"]}
    _write(
        folder,
        {
            ".docs/instructions.md": "# Instructions\n\nReverse a string: `robot` → `tobor`.\n",
            ".meta/config.json": json.dumps(config, indent=2),
            ".meta/example.go": GO_EXAMPLE,
            "go.mod": "module reverse\n\ngo 1.18\n",
            "reverse_string.go": GO_STUB,
            "reverse_string_test.go": GO_TEST,
            "cases_test.go": GO_CASES,
        },
    )
    return folder


# --- C++: Exercism's CMakeLists.txt (it names the program after the exercise's folder), a
# stand-in for Catch2 that prints Catch2's summary lines, tests past the first behind
# EXERCISM_RUN_ALL_TESTS ---

CPP_CMAKELISTS = """# Get the exercise name from the current directory
get_filename_component(exercise ${CMAKE_CURRENT_SOURCE_DIR} NAME)

cmake_minimum_required(VERSION 3.5.1)
project(${exercise} CXX)
string(REPLACE "-" "_" file ${exercise})
if(EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/${file}.cpp)
    set(exercise_cpp ${file}.cpp)
else()
    set(exercise_cpp "")
endif()
add_executable(${exercise} ${file}_test.cpp ${exercise_cpp} ${file}.h test/tests-main.cpp)
set_target_properties(${exercise} PROPERTIES CXX_STANDARD 17)
if(${EXERCISM_RUN_ALL_TESTS})
    target_compile_definitions(${exercise} PRIVATE EXERCISM_RUN_ALL_TESTS)
endif()
# Run the tests on every build
add_custom_target(test_${exercise} ALL DEPENDS ${exercise} COMMAND ${exercise})
"""
CATCH_HPP = r"""#pragma once
#include <cstdio>
#include <vector>
namespace mini {
struct Case { const char* name; void (*run)(); };
inline std::vector<Case>& cases() { static std::vector<Case> all; return all; }
struct Add { Add(const char* name, void (*run)()) { cases().push_back({name, run}); } };
struct Failed {};
inline char failure[1024];
}
#define MINI_CAT2(a, b) a##b
#define MINI_CAT(a, b) MINI_CAT2(a, b)
#define TEST_CASE(name, ...) \
    static void MINI_CAT(test_, __LINE__)(); \
    static mini::Add MINI_CAT(add_, __LINE__)(name, MINI_CAT(test_, __LINE__)); \
    static void MINI_CAT(test_, __LINE__)()
#define REQUIRE(expr) do { if (!(expr)) { \
    std::snprintf(mini::failure, sizeof mini::failure, \
        "%s:%d: FAILED:\n  REQUIRE( %s )\n", __FILE__, __LINE__, #expr); \
    throw mini::Failed{}; } } while (0)
"""
CATCH_MAIN = r"""#include "catch.hpp"
#include <string>
int main() {
    int passed = 0, failed = 0;
    std::string rule(79, '-');
    for (auto& c : mini::cases()) {
        try { c.run(); ++passed; } catch (mini::Failed&) {
            ++failed;  // Catch2 prints a block per failing test case
            std::printf("%s\n%s\n%s\n%s\n", rule.c_str(), c.name, rule.c_str(), mini::failure);
        }
    }
    std::printf("===============================================================================\n");
    if (failed == 0) {
        std::printf("All tests passed (%d assertions in %d test cases)\n", passed, passed);
    } else {
        std::printf("test cases: %d | %d passed | %d failed\n", passed + failed, passed, failed);
    }
    return failed;
}
"""
CPP_HEADER = """#pragma once
#include <string>
namespace reverse_string {
std::string reverse_string(const std::string& s);
}
"""
CPP_SOURCE = """#include "reverse_string.h"
namespace reverse_string {
std::string reverse_string(const std::string& s) { return %s; }
}
"""
CPP_STUB = CPP_SOURCE % "s"
CPP_EXAMPLE = CPP_SOURCE % "{s.rbegin(), s.rend()}"
CPP_TEST = """#include "reverse_string.h"
#ifdef EXERCISM_TEST_SUITE
#include <catch2/catch.hpp>
#else
#include "test/catch.hpp"
#endif

TEST_CASE("an empty string", "[uuid]") { REQUIRE(reverse_string::reverse_string("") == ""); }

#if defined(EXERCISM_RUN_ALL_TESTS)
TEST_CASE("a word", "[uuid]") { REQUIRE(reverse_string::reverse_string("robot") == "tobor"); }
#endif
"""


def cpp_exercise(track: Path) -> Path:
    folder = track / "exercises" / "practice" / "reverse-string"
    _write(
        folder,
        {
            ".docs/instructions.md": "# Instructions\n\nReverse a string: `robot` → `tobor`.\n",
            ".meta/config.json": _config(
                ["reverse_string.cpp", "reverse_string.h"],
                ["reverse_string_test.cpp"],
                [".meta/example.cpp", ".meta/example.h"],
            ),
            ".meta/example.cpp": CPP_EXAMPLE,
            ".meta/example.h": CPP_HEADER,
            ".approaches/introduction.md": "# Approaches\n\nReverse iterators.\n",
            "CMakeLists.txt": CPP_CMAKELISTS,
            "reverse_string.cpp": CPP_STUB,
            "reverse_string.h": CPP_HEADER,
            "reverse_string_test.cpp": CPP_TEST,
            "test/catch.hpp": CATCH_HPP,
            "test/tests-main.cpp": CATCH_MAIN,
        },
    )
    return folder


# --- JavaScript: jest and babel from the npm registry, named in package.json ---

JS_PACKAGE = {
    "name": "@exercism/javascript-reverse-string",
    "private": True,
    "devDependencies": {"@babel/core": "^7.25.2", "babel-jest": "^29.6.4", "jest": "^29.7.0"},
    "scripts": {"test": "jest ./*"},
}
JS_STUB = "export const reverseString = () => {\n  throw new Error('Remove this statement');\n};\n"
JS_TEST = """import { reverseString } from './reverse-string';

describe('ReverseString', () => {
  test('an empty string', () => {
    expect(reverseString('')).toEqual('');
  });

  xtest('a word', () => {
    expect(reverseString('robot')).toEqual('tobor');
  });
});
"""


def javascript_exercise(track: Path) -> Path:
    folder = track / "exercises" / "practice" / "reverse-string"
    _write(
        folder,
        {
            ".docs/instructions.md": "# Instructions\n\nReverse a string: `robot` → `tobor`.\n",
            ".meta/config.json": _config(
                ["reverse-string.js"], ["reverse-string.spec.js"], [".meta/proof.ci.js"]
            ),
            ".meta/proof.ci.js": "export const reverseString = (s) => [...s].reverse().join('');\n",
            "package.json": json.dumps(JS_PACKAGE, indent=2),
            "babel.config.js": "module.exports = { presets: [], plugins: [] };\n",
            "reverse-string.js": JS_STUB,
            "reverse-string.spec.js": JS_TEST,
        },
    )
    return folder
