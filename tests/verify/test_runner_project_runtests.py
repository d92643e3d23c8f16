"""A project's own runtests.py that prints unittest's report from parallel workers (issue 48,
part 3): Django's. The outputs under tests/data/runner_output/django_runtests_*.txt are real
runs of Django 5.2.8's `cd tests && python runtests.py … --parallel 2` (its sdist, installed
editable in a venv with tblib), with the capfirst filter broken and one unrelated test
(utils_tests.test_text's test_get_text_list) red before the session:

- django_runtests_parallel.txt: `utils_tests template_tests.filter_tests`, dots (verbosity 1),
  two workers on cloned test databases;
- django_runtests_labels_{before,after}.txt: three module labels with `-v 2`, before and after
  the fix; `…_after_dots.txt` the same after the fix without `-v 2`.

tests/data/django/runtests.py.txt is that release's script, which the runner module reads to claim
the command."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from tui_engineer.verify.baseline import Baseline
from tui_engineer.verify.report import TestReport, apply_runner_result
from tui_engineer.verify.runners import project_runtests, read_output, report_command, runner_for

DATA = Path(__file__).resolve().parents[1] / "data"
OUTPUT = DATA / "runner_output"
TEXT = "tests/utils_tests/test_text.py::TestUtilsText::test_get_text_list"
CAPFIRST = "tests/template_tests/filter_tests/test_capfirst.py::"
MODULES = (
    "tests/utils_tests/test_text.py",
    "tests/template_tests/filter_tests/test_capfirst.py",
    "tests/template_tests/filter_tests/test_chaining.py",
    "tests/template_tests/filter_tests/test_autoescape.py",
)


def django_tree(root: Path, extra: dict[str, str] | None = None) -> Path:
    """The files the runs name, where Django's checkout has them, and its runtests.py."""
    files = dict.fromkeys(MODULES, "") | (extra or {})
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    shutil.copy(DATA / "django" / "runtests.py.txt", root / "tests" / "runtests.py")
    return root


def report(name: str, root: Path, command: str = "cd tests && python runtests.py") -> TestReport:
    found = read_output((OUTPUT / name).read_text(), root)
    assert found is not None, name
    made = TestReport(command, 1, 9.3, False)
    apply_runner_result(made, found)
    return made


def test_the_parallel_runners_report_is_read_test_by_test(tmp_path: Path) -> None:
    made = report("django_runtests_parallel.txt", django_tree(tmp_path))
    assert (made.passed, made.failed, made.errors, made.skipped) == (1057, 14, 0, 21)
    ids = [f.test_id for f in made.failures]
    assert ids[0] == TEXT and f"{CAPFIRST}FunctionTests::test_capfirst" in ids
    assert made.failures[0].message == "AssertionError: 'a or b' != 'a and b!'"
    assert 'test_text.py", line 17' in made.failures[0].traceback


def test_the_old_failure_is_told_apart_and_the_fixed_ones_named(tmp_path: Path) -> None:
    root = django_tree(tmp_path)
    baseline = Baseline.from_report(report("django_runtests_labels_before.txt", root))
    assert TEXT in baseline.failing and len(baseline.failing) == 10
    after = baseline.judge(report("django_runtests_labels_after.txt", root))
    assert after.ok and [f.test_id for f in after.old] == [TEXT] and not after.failures
    assert f"{CAPFIRST}CapfirstTests::test_capfirst01" in after.fixed and len(after.fixed) == 9
    assert "now passes" in after.summary() and "1 failing before this session" in after.summary()


def test_without_verbosity_the_fixed_ones_cannot_be_named(tmp_path: Path) -> None:
    """Why the runner asks for `-v 2`: dots name no passing test."""
    root = django_tree(tmp_path)
    baseline = Baseline.from_report(report("django_runtests_labels_before.txt", root))
    after = baseline.judge(report("django_runtests_labels_after_dots.txt", root))
    assert after.ok and after.fixed == []


def test_djangos_script_is_claimed_and_run_verbose(tmp_path: Path) -> None:
    root = django_tree(tmp_path)
    assert runner_for("cd tests && python runtests.py", root) is project_runtests
    assert report_command("cd tests && python runtests.py", None, root) == (
        "cd tests && python runtests.py -v 2"
    )
    assert report_command("python tests/runtests.py --parallel 4", None, root) == (
        "python tests/runtests.py --parallel 4 -v 2"
    )
    assert report_command("cd tests && python runtests.py -v 3", None, root) == (
        "cd tests && python runtests.py -v 3"
    )
    assert runner_for("cd tests && python runtests.py") is None  # no root: not read


def test_a_script_that_takes_no_labels_is_not_claimed(tmp_path: Path) -> None:
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "runtests.py").write_text(
        "import unittest\nunittest.main(module=None, argv=['x', 'discover'])\n"
    )
    assert runner_for("cd tests && python runtests.py", tmp_path) is None
    assert runner_for("cd tests && python runtests.py | tee log", tmp_path) is None


def test_affected_tests_run_by_the_scripts_own_labels(tmp_path: Path) -> None:
    imports = "from django.template.defaultfilters import capfirst\n"
    root = django_tree(
        tmp_path,
        {
            "django/template/defaultfilters.py": "def capfirst(v):\n    return v\n",
            "tests/template_tests/filter_tests/test_capfirst.py": imports,
            "tests/basic/tests.py": "from django.db import models\n",
            "tests/basic/models.py": "",
        },
    )
    files = lambda: [str(p.relative_to(root)) for p in root.rglob("*.py")]  # noqa: E731
    command = "cd tests && python runtests.py"
    changed = {"django/template/defaultfilters.py"}
    assert project_runtests.narrowed(command, changed, root, files) == (
        f"{command} template_tests.filter_tests.test_capfirst"
    )
    both = {"django/template/defaultfilters.py", "tests/basic/tests.py"}
    assert project_runtests.narrowed(command, both, root, files) == (
        f"{command} basic.tests template_tests.filter_tests.test_capfirst"
    )
    assert project_runtests.narrowed(command, {"docs/index.txt"}, root, files) is None
    assert project_runtests.narrowed(f"{command} basic", changed, root, files) is None
    # A test-first step's new test modules run alone, by their labels.
    new = ["tests/template_tests/filter_tests/test_title.py"]
    assert project_runtests.files_command(command, root, new) == (
        f"{command} template_tests.filter_tests.test_title"
    )
    assert project_runtests.files_command(command, root, ["docs/test_x.py"]) is None


def test_a_small_project_runner_with_parallel_workers_is_read(tmp_path: Path) -> None:
    """tests/data/project_runtests/runtests.py: unittest's TextTestRunner fed by two worker
    processes, as Django's is; run for real, by labels, verbose."""
    (tmp_path / "tests").mkdir()
    shutil.copy(DATA / "project_runtests" / "runtests.py", tmp_path / "tests" / "runtests.py")
    (tmp_path / "text.py").write_text("def capfirst(word):\n    return word\n")
    (tmp_path / "tests" / "test_text.py").write_text(
        "import unittest\n\nfrom text import capfirst\n\n\n"
        "class CapfirstTests(unittest.TestCase):\n"
        "    def test_capfirst(self):\n        self.assertEqual(capfirst('hello'), 'Hello')\n\n"
        "    def test_empty(self):\n        self.assertEqual(capfirst(''), '')\n"
    )
    command = report_command("cd tests && python runtests.py test_text", None, tmp_path)
    assert command.endswith("-v 2")
    done = subprocess.run(
        [sys.executable, "runtests.py", "test_text", "-v", "2"], cwd=tmp_path / "tests",
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    found = read_output(done.stdout + done.stderr, tmp_path)
    assert found is not None and (found.passed, found.failed) == (1, 1)
    assert found.passing == ["tests/test_text.py::CapfirstTests::test_empty"]
    assert found.failures[0].test_id == "tests/test_text.py::CapfirstTests::test_capfirst"


def test_a_django_apps_runtests_handing_argv_to_the_runner_is_narrowed_too(
    tmp_path: Path,
) -> None:
    """The shape of Django apps' own runtests.py at the root: sys.argv[1:] are the labels."""
    files = {
        "runtests.py": (
            "import sys\n\nimport django\nfrom django.conf import settings\n"
            "from django.test.utils import get_runner\n\n"
            "django.setup()\nTestRunner = get_runner(settings)\n"
            "failures = TestRunner().run_tests(sys.argv[1:] or ['tests'])\n"
            "sys.exit(bool(failures))\n"
        ),
        "shop/models.py": "",
        "tests/__init__.py": "",
        "tests/test_models.py": "from shop.models import Order\n",
        "tests/test_views.py": "from shop import views\n",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    listed = lambda: list(files)  # noqa: E731
    assert runner_for("python runtests.py", tmp_path) is project_runtests
    assert report_command("python runtests.py", None, tmp_path) == "python runtests.py"  # no -v
    assert project_runtests.narrowed(
        "python runtests.py", {"shop/models.py"}, tmp_path, listed
    ) == ("python runtests.py tests.test_models")
