"""Which old failures a step's change runs through (engine/steps/reach.py), read from real diffs of
real git repositories: by the code, never by the request's words."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tui_engineer.engine.steps.reach import changed_code, judge, reach, unknown
from tui_engineer.verify.report import FailingTest, TestReport

CALC = {
    "calc.py": "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n\n\n"
    "def total(xs):\n    return _sum(xs)\n\n\ndef _sum(xs):\n    return 0\n",
    "tests/test_calc.py": "from calc import add, mul, total\n\n\ndef test_add():\n"
    "    assert add(2, 3) == 5\n\n\ndef test_mul():\n    assert mul(4, 3) == 11\n\n\n"
    "def test_total():\n    assert total([1, 2]) == 3\n",
    "tests/test_other.py": "def test_unrelated():\n    assert False\n",
}
ADD, MUL = "tests/test_calc.py::test_add", "tests/test_calc.py::test_mul"
TOTAL, OTHER = "tests/test_calc.py::test_total", "tests/test_other.py::test_unrelated"


def _changed(make_repo, files: dict[str, str], edits: dict[str, str]) -> tuple[Path, str]:
    repo = make_repo(files)
    for path, text in edits.items():
        (repo / path).write_text(text)
    done = subprocess.run(["git", "diff"], cwd=repo, capture_output=True, text=True, check=True)
    return repo, done.stdout  # as the shadow gives it: not stripped


def _reached(repo: Path, diff: str, ids: tuple[str, ...]) -> dict[str, str]:
    return reach(repo, ids, changed_code(repo, diff))


def test_a_comment_inside_add_runs_through_test_add_only(make_repo) -> None:
    text = CALC["calc.py"].replace("    return a - b\n", "    # the sum\n    return a - b\n")
    repo, diff = _changed(make_repo, CALC, {"calc.py": text})
    found = _reached(repo, diff, (ADD, MUL, OTHER))
    assert set(found) == {ADD}
    assert found[ADD] == "it calls add(), which the step changed in calc.py"


def test_a_helper_reaches_the_tests_of_the_functions_calling_it(make_repo) -> None:
    text = CALC["calc.py"].replace("    return 0\n", "    return sum(xs)\n")
    repo, diff = _changed(make_repo, CALC, {"calc.py": text})
    assert set(_reached(repo, diff, (ADD, MUL, TOTAL))) == {TOTAL}


def test_a_change_at_module_level_reaches_every_test_of_a_file_importing_it(make_repo) -> None:
    text = "import os\n" + CALC["calc.py"]
    repo, diff = _changed(make_repo, CALC, {"calc.py": text})
    assert set(_reached(repo, diff, (ADD, MUL, OTHER))) == {ADD, MUL}


def test_a_changed_test_file_is_reached(make_repo) -> None:
    repo, diff = _changed(make_repo, CALC, {"tests/test_other.py": "def test_unrelated():\n"
                                            "    assert False, 'still'\n"})  # fmt: skip
    assert _reached(repo, diff, (OTHER, ADD)) == {OTHER: "the step changed tests/test_other.py"}


def test_unittest_methods_in_a_class(make_repo) -> None:
    files = {
        "shapes/__init__.py": "def area(w, h):\n    return w + h\n\n\ndef side(s):\n    return s\n",
        "tests/test_shapes.py": "import unittest\n\nfrom shapes import area, side\n\n\n"
        "class ShapeTests(unittest.TestCase):\n    def test_area(self):\n"
        "        self.assertEqual(area(2, 3), 6)\n\n    def test_side(self):\n"
        "        self.assertEqual(side(2), 3)\n",
    }
    text = files["shapes/__init__.py"].replace("w + h", "w ** h")
    repo, diff = _changed(make_repo, files, {"shapes/__init__.py": text})
    area = "tests/test_shapes.py::ShapeTests::test_area"
    side = "tests/test_shapes.py::ShapeTests::test_side"
    assert set(_reached(repo, diff, (area, side))) == {area}


def test_a_rust_test_in_the_changed_crate_that_calls_the_changed_function(make_repo) -> None:
    lib = (
        "pub fn add(a: i64, b: i64) -> i64 {\n    a - b\n}\n\npub fn neg(a: i64) -> i64 {\n"
        "    a\n}\n\n#[cfg(test)]\nmod tests {\n    use super::*;\n\n    #[test]\n"
        "    fn adds() {\n        assert_eq!(add(2, 3), 5);\n    }\n\n    #[test]\n"
        "    fn negates() {\n        assert_eq!(neg(2), -2);\n    }\n}\n"
    )
    files = {"Cargo.toml": '[package]\nname = "calc"\nversion = "0.1.0"\n', "src/lib.rs": lib}
    repo, diff = _changed(
        make_repo, files, {"src/lib.rs": lib.replace("    a - b\n", "    b - a\n")}
    )
    assert set(_reached(repo, diff, ("tests::adds", "tests::negates"))) == {"tests::adds"}


def test_a_node_test_file_that_imports_the_changed_module(make_repo) -> None:
    files = {
        "calc.js": "exports.add = (a, b) => a - b;\n",
        "other.js": "exports.name = 'x';\n",
        "test/calc.test.js": "const { add } = require('../calc');\ntest('add', () => {});\n",
        "test/other.test.js": "const o = require('../other');\ntest('name', () => {});\n",
    }
    repo, diff = _changed(make_repo, files, {"calc.js": "exports.add = (a, b) => b - a;\n"})
    ids = ("test/calc.test.js > add", "test/other.test.js > name")
    assert set(_reached(repo, diff, ids)) == {"test/calc.test.js > add"}


def test_a_go_test_in_the_changed_package(make_repo) -> None:
    files = {
        "go.mod": "module example.com/calc\n\ngo 1.21\n",
        "calc.go": "package calc\n\nfunc Add(a, b int) int {\n\treturn a - b\n}\n\n"
        "func Mul(a, b int) int {\n\treturn a * b\n}\n",
        "calc_test.go": 'package calc\n\nimport "testing"\n\nfunc TestAdd(t *testing.T) {\n'
        "\tif Add(2, 3) != 5 {\n\t\tt.Fatal()\n\t}\n}\n\nfunc TestMul(t *testing.T) {\n"
        "\tif Mul(2, 3) != 7 {\n\t\tt.Fatal()\n\t}\n}\n",
    }
    text = files["calc.go"].replace("a - b", "b - a")
    repo, diff = _changed(make_repo, files, {"calc.go": text})
    ids = ("example.com/calc::TestAdd", "example.com/calc::TestMul")
    assert set(_reached(repo, diff, ids)) == {"example.com/calc::TestAdd"}


def test_judge_gives_a_reached_old_failure_back_to_the_step_and_keeps_a_disowned_one_apart(
    make_repo,
) -> None:
    text = CALC["calc.py"].replace("    return a - b\n", '    """Add."""\n    return a - b\n')
    repo, diff = _changed(make_repo, CALC, {"calc.py": text})

    def report() -> TestReport:
        old = [FailingTest(ADD, "assert -1 == 5", ""), FailingTest(OTHER, "assert False", "")]
        return TestReport("pytest", 1, 0.1, False, passed=1, failed=2, structured=True, old=old)

    judged = report()
    judge(judged, (ADD, OTHER), repo, diff, {})
    assert [f.test_id for f in judged.failures] == [ADD] and not judged.ok
    assert "still failing, and the change runs through it: " + ADD in judged.summary()
    assert [f.test_id for f in judged.old] == [OTHER]

    disowned = report()
    judge(disowned, (ADD, OTHER), repo, diff, {ADD: "the step only documents add"})
    assert disowned.ok and disowned.disowned == {ADD: "the step only documents add"}
    assert "tests passed" not in disowned.summary()
    assert f"not this step's says the model: {ADD}" in disowned.summary()


def test_reach_is_unknown_only_where_no_rule_can_find_the_test(make_repo) -> None:
    repo = make_repo({**CALC, "test/calc.test.js": "test('add', () => {});\n"})
    ids = (ADD, "test/calc.test.js > add", "example.com/calc::TestAdd", "calc adds", "tests::adds")
    assert unknown(repo, ids) == ["calc adds", "tests::adds"]  # a Catch2 case; cargo, no crate


def test_a_test_importing_the_package_that_re_exports_the_module_is_reached(make_repo) -> None:
    """more-itertools: `import more_itertools as mi` then `mi.take(…)` tests recipes.py's take."""
    files = {
        "more_itertools/__init__.py": "from .recipes import *\n",
        "more_itertools/recipes.py": 'def take(n, it):\n    """Return first n items."""\n'
        "    return list(it)[:n]\n\n\ndef tail(n, it):\n    return list(it)[-n:]\n",
        "tests/test_recipes.py": "import more_itertools as mi\n\n\ndef test_take():\n"
        "    assert mi.take(2, [1, 2, 3]) == [1]\n\n\ndef test_tail():\n"
        "    assert mi.tail(1, [1, 2]) == [1]\n",
    }
    text = files["more_itertools/recipes.py"].replace("Return first", "Return the first")
    repo, diff = _changed(make_repo, files, {"more_itertools/recipes.py": text})
    ids = ("tests/test_recipes.py::test_take", "tests/test_recipes.py::test_tail")
    assert set(_reached(repo, diff, ids)) == {"tests/test_recipes.py::test_take"}


def test_a_new_test_beside_a_red_one_does_not_reach_it(make_repo) -> None:
    """The step adds test_sub to the file where test_unrelated is red: that file changed, but
    not the red test nor anything outside a function."""
    text = CALC["tests/test_other.py"] + "\n\ndef test_sub():\n    assert 1 - 1 == 0\n"
    repo, diff = _changed(make_repo, CALC, {"tests/test_other.py": text})
    assert _reached(repo, diff, (OTHER,)) == {}
