"""unittest's report read test by test (verify/runners/unittest.py), from real runs of
`python -m unittest` in this machine's Python: counts, failing tests named as pytest would name
them, passing ones from `-v`, the exception's line as the message. And the same report printed
by a project's own script, which is read without knowing the script."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tui_engineer.sandbox.local import LocalSandbox
from tui_engineer.verify.runners import report_command, runner_name, unittest

SUITE = '''import unittest


class CalcTests(unittest.TestCase):
    def test_ok(self):
        print("chatty output")
        self.assertTrue(True)

    def test_documented(self):
        """Adds two numbers."""
        self.assertEqual(1 + 1, 3)

    def test_error(self):
        raise KeyError("nope")

    def test_subtests(self):
        for i in range(3):
            with self.subTest(i=i):
                self.assertLess(i, 1)

    @unittest.skip("not today")
    def test_skipped(self):
        pass

    @unittest.expectedFailure
    def test_known_bug(self):
        self.assertEqual(1, 2)
'''
ID = "tests/test_calc.py::CalcTests::"


def run(root: Path, *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "unittest", *args], cwd=root, capture_output=True, text=True,
        timeout=60, check=False,
    )  # fmt: skip
    return done.stdout + done.stderr


def project(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    return tmp_path


def test_every_outcome_of_a_verbose_run(tmp_path: Path) -> None:
    root = project(tmp_path, {"tests/__init__.py": "", "tests/test_calc.py": SUITE})
    result = unittest.read(run(root, "-v"), root)
    assert result is not None and result.runner == "unittest"
    assert (result.passed, result.failed, result.errors, result.skipped) == (2, 2, 1, 1)
    assert [f.test_id for f in result.failures] == [
        f"{ID}test_error",
        f"{ID}test_documented",
        f"{ID}test_subtests",  # two subtests failed: one test
    ]
    error, documented, _ = result.failures
    assert error.message == "KeyError: 'nope'"
    assert documented.message == "AssertionError: 2 != 3"
    assert "self.assertEqual(1 + 1, 3)" in documented.traceback
    assert sorted(result.passing) == [f"{ID}test_known_bug", f"{ID}test_ok"]


def test_a_quiet_run_still_names_its_failures(tmp_path: Path) -> None:
    root = project(tmp_path, {"tests/__init__.py": "", "tests/test_calc.py": SUITE})
    result = unittest.read(run(root), root)
    assert result is not None and (result.failed, result.errors) == (2, 1)
    assert {f.test_id for f in result.failures} == {
        f"{ID}test_error", f"{ID}test_documented", f"{ID}test_subtests"
    }  # fmt: skip
    assert result.passing == []  # dots name no test


def test_a_module_that_cannot_be_imported_is_an_error_of_that_file(tmp_path: Path) -> None:
    root = project(
        tmp_path,
        {"tests/__init__.py": "", "tests/test_broken.py": "import nothing_here\n"},
    )
    result = unittest.read(run(root, "-v"), root)
    assert result is not None and result.errors == 1
    (broken,) = result.failures
    assert broken.test_id == "tests/test_broken.py"
    assert broken.message == "ModuleNotFoundError: No module named 'nothing_here'"


def test_a_discovered_folder_that_is_no_package_gets_its_files_ids(tmp_path: Path) -> None:
    root = project(tmp_path, {"tests/test_calc.py": SUITE})
    result = unittest.read(run(root, "discover", "-s", "tests", "-v"), root)
    assert result is not None and f"{ID}test_ok" in result.passing


def test_a_projects_own_script_printing_the_report_is_read(tmp_path: Path) -> None:
    """Django's tests/runtests.py prints unittest's report (its runner is unittest's)."""
    root = project(tmp_path, {"tests/test_calc.py": SUITE, "tests/runtests.py": RUNTESTS})
    done = subprocess.run(
        [sys.executable, "tests/runtests.py"], cwd=root, capture_output=True, text=True, timeout=60
    )
    result = unittest.read(done.stdout + done.stderr, root)
    assert result is not None and result.failed == 2
    assert f"{ID}test_documented" in {f.test_id for f in result.failures}


RUNTESTS = """import os
import sys
import unittest

suite = unittest.defaultTestLoader.discover(os.path.dirname(os.path.abspath(__file__)))
outcome = unittest.TextTestRunner(verbosity=2).run(suite)
sys.exit(not outcome.wasSuccessful())
"""


def test_other_output_is_not_unittests() -> None:
    assert unittest.read("3 passed in 0.1s\n", None) is None
    assert unittest.read("Ran the build\nOK\n", None) is None


def test_the_command_gets_verbose_and_names_its_runner() -> None:
    assert report_command("python -m unittest") == "python -m unittest -v"
    assert report_command(".venv/bin/python -m unittest discover -s tests") == (
        ".venv/bin/python -m unittest discover -s tests -v"
    )
    assert report_command("python -m unittest -v") == "python -m unittest -v"
    assert report_command("python -m pytest") == "python -m pytest"
    assert runner_name("python -m unittest") == "unittest"
    assert runner_name(".venv/bin/python -m pytest -q") == "pytest"
    assert runner_name("cd tests && python runtests.py") == "runtests.py"
    assert runner_name("cargo test") == "cargo test"


async def test_a_sandbox_run_reads_it_test_by_test(tmp_path: Path) -> None:
    root = project(tmp_path, {"tests/__init__.py": "", "tests/test_calc.py": SUITE})
    report = await LocalSandbox().run_tests(root, f"{sys.executable} -m unittest", timeout=60)
    assert report.structured and not report.ok
    assert report.summary().startswith("2 passed, 2 failed, 1 error, 1 skipped")
    assert f"{ID}test_ok" in report.passing


@pytest.mark.parametrize(
    ("command", "files", "narrowed"),
    [
        ("python -m unittest", ["tests/test_calc.py"], "python -m unittest tests.test_calc"),
        (".venv/bin/python -m unittest -v", ["tests/test_a.py", "tests/b/test_c.py"],
         ".venv/bin/python -m unittest -v tests.b.test_c tests.test_a"),
        ("python -m unittest discover -s tests", ["tests/test_calc.py"],
         "python -m unittest discover -s tests -p test_calc.py"),
        ("python -m unittest discover -s tests", ["tests/test_a.py", "tests/test_b.py"], None),
        ("python -m unittest tests.test_calc", ["tests/test_calc.py"], None),  # the user's
        ("python -m unittest", [], None),
    ],
)  # fmt: skip
def test_a_unittest_command_narrowed_to_test_files(
    command: str, files: list[str], narrowed: str | None
) -> None:
    assert unittest.modules_command(command, files) == narrowed
