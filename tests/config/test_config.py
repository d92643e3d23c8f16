"""Configuration: layer precedence, validation messages, test detection and the settings table."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tui_engineer.base.errors import UserError
from tui_engineer.config import (
    ConfigError,
    LoadedSettings,
    Settings,
    detect_test_command,
    format_settings,
    load_settings,
    user_config_path,
)

SECRET = "sk-proj-Zq8vT3xLm9WnR4kYp2Hs7Jd6Fb1Gc5Ae0abcd"


@pytest.fixture
def repo(make_repo: Callable[..., Path]) -> Path:
    return make_repo()


@pytest.fixture
def user_file(tmp_path: Path) -> Path:
    return tmp_path / "user" / "config.toml"


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def load(
    repo: Path | None,
    user_file: Path,
    flags: dict[str, object] | None = None,
    env: dict[str, str] | None = None,
) -> LoadedSettings:
    return load_settings(repo, flags, env or {}, user_config=user_file)


def error_of(call: Callable[[], object]) -> str:
    with pytest.raises(ConfigError) as info:
        call()
    return str(info.value)


# --- precedence -------------------------------------------------------------------------------

# Each layer sets max_fix_attempts to its own number; the setter returns the expected source.
Setter = Callable[[Path, Path, dict, dict, int], str]


def _flag(repo: Path, user: Path, flags: dict, env: dict, n: int) -> str:
    flags["max_fix_attempts"] = n
    return "flag --max-fix-attempts"


def _env(repo: Path, user: Path, flags: dict, env: dict, n: int) -> str:
    env["TUI_ENGINEER_MAX_FIX_ATTEMPTS"] = str(n)
    return "env TUI_ENGINEER_MAX_FIX_ATTEMPTS"


def _repo_file(repo: Path, user: Path, flags: dict, env: dict, n: int) -> str:
    return str(write(repo / ".tui-engineer.toml", f"max_fix_attempts = {n}\n"))


def _pyproject(repo: Path, user: Path, flags: dict, env: dict, n: int) -> str:
    path = write(repo / "pyproject.toml", f"[tool.tui-engineer]\nmax_fix_attempts = {n}\n")
    return f"{path} [tool.tui-engineer]"


def _user(repo: Path, user: Path, flags: dict, env: dict, n: int) -> str:
    path = write(user, f"max_fix_attempts = {n}\n")
    return f"user config {path}"


@pytest.mark.parametrize(
    ("higher", "lower"),
    [
        (_flag, _env),
        (_env, _repo_file),
        (_env, _pyproject),
        (_repo_file, _pyproject),
        (_repo_file, _user),
        (_pyproject, _user),
        (_user, None),
    ],
    ids=[
        "flag>env",
        "env>repo",
        "env>pyproject",
        "repo>pyproject",
        "repo>user",
        "pyproj>user",
        "user>default",
    ],
)
def test_each_layer_beats_the_next(
    repo: Path, user_file: Path, higher: Setter, lower: Setter | None
) -> None:
    flags: dict[str, object] = {}
    env: dict[str, str] = {}
    if lower is not None:
        lower(repo, user_file, flags, env, 1)
    source = higher(repo, user_file, flags, env, 7)
    loaded = load(repo, user_file, flags, env)
    assert loaded.settings.max_fix_attempts == 7
    assert loaded.sources["max_fix_attempts"] == source


def test_defaults_when_nothing_is_configured(repo: Path, user_file: Path) -> None:
    loaded = load(repo, user_file)
    assert loaded.settings.model == "gpt-4o-mini"
    assert loaded.settings.max_fix_attempts == 3
    assert loaded.sources["model"] == "default"
    assert loaded.files_read == []


def test_layers_merge_key_by_key(repo: Path, user_file: Path) -> None:
    write(user_file, 'model = "from-user"\ntheme = "user-theme"\n')
    write(repo / ".tui-engineer.toml", 'model = "from-repo"\n')
    loaded = load(repo, user_file, env={"TUI_ENGINEER_SANDBOX": "docker"})
    assert (loaded.settings.model, loaded.settings.theme) == ("from-repo", "user-theme")
    assert loaded.settings.sandbox == "docker"
    assert loaded.files_read == [repo / ".tui-engineer.toml", user_file]


def test_both_repo_files_merge_and_the_dedicated_file_wins(repo: Path, user_file: Path) -> None:
    write(repo / "pyproject.toml", '[tool.tui-engineer]\nmodel = "py"\ntest-timeout = 60\n')
    write(repo / ".tui-engineer.toml", 'model = "dedicated"\n')
    loaded = load(repo, user_file)
    assert loaded.settings.model == "dedicated"
    assert loaded.settings.test_timeout == 60.0  # hyphenated key accepted, int taken as seconds
    assert loaded.sources["test_timeout"] == f"{repo / 'pyproject.toml'} [tool.tui-engineer]"
    assert loaded.files_read == [repo / "pyproject.toml", repo / ".tui-engineer.toml"]


def test_pyproject_without_our_section_is_not_a_config_file(repo: Path, user_file: Path) -> None:
    write(repo / "pyproject.toml", '[project]\nname = "x"\n')
    assert load(repo, user_file).files_read == []


def test_env_strings_are_coerced(repo: Path, user_file: Path) -> None:
    write(user_file, "max_usd = 5\nrecord_runs = true\n")
    env = {
        "TUI_ENGINEER_RECORD_RUNS": "0",
        "TUI_ENGINEER_MAX_USD": "none",  # clears the user's budget
        "TUI_ENGINEER_MAX_TOKENS": "20000",
        "TUI_ENGINEER_ALLOW_NETWORK": "TRUE",
        "TUI_ENGINEER_TEST_COMMAND": "make test",
        "TUI_ENGINEER_MODEL": "",  # empty means "not set here"
    }
    s = load(repo, user_file, env=env).settings
    assert (s.record_runs, s.max_usd, s.max_tokens, s.allow_network) == (False, None, 20000, True)
    assert (s.test_command, s.model) == ("make test", "gpt-4o-mini")


def test_base_url_env_vars(repo: Path, user_file: Path) -> None:
    only_openai = load(repo, user_file, env={"OPENAI_BASE_URL": "http://127.0.0.1:9/v1"})
    assert only_openai.settings.base_url == "http://127.0.0.1:9/v1"
    assert only_openai.sources["base_url"] == "env OPENAI_BASE_URL"
    both = {"OPENAI_BASE_URL": "http://a.test/v1", "TUI_ENGINEER_BASE_URL": "http://b.test/v1"}
    assert load(repo, user_file, env=both).settings.base_url == "http://b.test/v1"


def test_without_a_repo_only_user_env_and_flags_count(tmp_path: Path, user_file: Path) -> None:
    write(tmp_path / ".tui-engineer.toml", 'model = "ignored"\n')
    loaded = load(None, user_file, flags={"model": "flagged"})
    assert loaded.settings.model == "flagged"
    assert loaded.settings.test_command is None


def test_default_paths_follow_platformdirs_and_os_environ(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not sys.platform.startswith("linux"):
        pytest.skip("only Linux honours XDG_CONFIG_HOME; elsewhere this would touch real config")
    # conftest points XDG_CONFIG_HOME at a temp folder, so the real default path is safe to use.
    assert user_config_path() == Path(os.environ["XDG_CONFIG_HOME"]) / "tui-engineer/config.toml"
    write(user_config_path(), 'theme = "mine"\n')
    monkeypatch.setenv("TUI_ENGINEER_MODEL", "env-model")
    s = load_settings(repo).settings
    assert (s.theme, s.model) == ("mine", "env-model")


# --- invalid input ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("where", "text", "expected"),
    [
        (
            "repo",
            'max_fix_attempts = "three"',
            "{path}: max_fix_attempts must be a whole number ≥ 0, got 'three'",
        ),
        ("repo", "max_fix_attempts = -1", "{path}: max_fix_attempts must be a whole number ≥ 0"),
        ("repo", "test_timeout = 0", "{path}: test_timeout must be a number of seconds > 0, got 0"),
        ("repo", 'sandbox = "podman"', "{path}: sandbox must be one of 'local', 'docker'"),
        ("repo", 'record_runs = "yes"', "{path}: record_runs must be true or false, got 'yes'"),
        ("user", 'base_url = "localhost:8000"', "{path}: base_url must be an http:// or https://"),
        ("user", "max_usd = -2.5", "{path}: max_usd must be a number of US dollars > 0"),
        ("user", 'api_key_env = "MY KEY"', "{path}: api_key_env must be the name of an env"),
        (
            "pyproject",
            "max_tokens = 1.5",
            "{path} [tool.tui-engineer]: max_tokens must be a whole number > 0",
        ),
        ("repo", "model = { name = 'x' }", "{path}: model must be a non-empty model name"),
    ],
)
def test_invalid_file_values_name_file_key_and_expectation(
    repo: Path, user_file: Path, where: str, text: str, expected: str
) -> None:
    if where == "repo":
        path = write(repo / ".tui-engineer.toml", text + "\n")
    elif where == "pyproject":
        path = write(repo / "pyproject.toml", "[tool.tui-engineer]\n" + text + "\n")
    else:
        path = write(user_file, text + "\n")
    assert expected.format(path=path) in error_of(lambda: load(repo, user_file))


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        (
            {"TUI_ENGINEER_MAX_FIX_ATTEMPTS": "three"},
            "environment variable TUI_ENGINEER_MAX_FIX_ATTEMPTS: max_fix_attempts must be a whole "
            "number ≥ 0, got 'three'",
        ),
        (
            {"TUI_ENGINEER_TEST_TIMEOUT": "-5"},
            "environment variable TUI_ENGINEER_TEST_TIMEOUT: test_timeout must be a number of "
            "seconds > 0, got '-5'",
        ),
        ({"TUI_ENGINEER_RECORD_RUNS": "maybe"}, "record_runs must be true or false, got 'maybe'"),
        ({"TUI_ENGINEER_TEST_TIMEOUT": "inf"}, "test_timeout must be a number of seconds > 0"),
        (
            {"OPENAI_BASE_URL": "api.example.com"},
            "environment variable OPENAI_BASE_URL: base_url must be an http:// or https:// URL",
        ),
        (
            {"TUI_ENGINEER_MODLE": "x"},
            "unknown variable 'TUI_ENGINEER_MODLE' — did you mean 'TUI_ENGINEER_MODEL'?",
        ),
        ({"TUI_ENGINEER_API_KEY": SECRET}, "put the key in OPENAI_API_KEY"),
    ],
)
def test_invalid_env_values_name_the_variable(
    repo: Path, user_file: Path, env: dict[str, str], expected: str
) -> None:
    message = error_of(lambda: load(repo, user_file, env=env))
    assert expected in message
    assert SECRET not in message


@pytest.mark.parametrize(
    ("flags", "expected"),
    [
        ({"max_fix_attempts": -1}, "flag --max-fix-attempts: max_fix_attempts must be a whole"),
        ({"max_wall_seconds": -60.0}, "flag --max-minutes: max_wall_seconds must be a number"),
        ({"test_command": "  "}, "flag --test-cmd: test_command must be a non-empty command"),
    ],
)
def test_invalid_flags_name_the_flag(
    repo: Path, user_file: Path, flags: dict[str, object], expected: str
) -> None:
    assert expected in error_of(lambda: load(repo, user_file, flags=flags))


def test_unknown_key_suggests_the_closest(repo: Path, user_file: Path) -> None:
    path = write(repo / ".tui-engineer.toml", 'modle = "x"\n')
    assert error_of(lambda: load(repo, user_file)) == (
        f"{path}: unknown key 'modle' — did you mean 'model'?"
    )
    write(repo / ".tui-engineer.toml", "max-fix-attempt = 2\n")
    assert "did you mean 'max_fix_attempts'?" in error_of(lambda: load(repo, user_file))


def test_unknown_key_without_a_close_match_lists_the_known_ones(
    repo: Path, user_file: Path
) -> None:
    write(user_file, "colour = 1\n")
    message = error_of(lambda: load(repo, user_file))
    assert "unknown key 'colour'. Known keys: model, base_url," in message


def test_toml_syntax_error_names_file_and_line(repo: Path, user_file: Path) -> None:
    path = write(repo / ".tui-engineer.toml", 'model = "a"\n\ntest_command = \n')
    message = error_of(lambda: load(repo, user_file))
    assert message.startswith(f"{path}, line 3: invalid TOML")


def test_broken_pyproject_is_reported(repo: Path, user_file: Path) -> None:
    path = write(repo / "pyproject.toml", "[tool.tui-engineer\n")
    assert error_of(lambda: load(repo, user_file)).startswith(f"{path}, line 1: invalid TOML")


def test_config_error_is_a_user_error() -> None:
    assert issubclass(ConfigError, UserError)


# --- the API key ------------------------------------------------------------------------------


@pytest.mark.parametrize("where", [".tui-engineer.toml", "pyproject.toml"])
def test_api_key_in_a_repo_file_is_refused(repo: Path, user_file: Path, where: str) -> None:
    table = "[tool.tui-engineer]\n" if where == "pyproject.toml" else ""
    path = write(repo / where, f'{table}api_key = "{SECRET}"\n')
    message = error_of(lambda: load(repo, user_file, env={"OPENAI_API_KEY": "sk-other"}))
    assert message.startswith(str(path))
    assert "committed" in message and str(user_file) in message
    assert SECRET not in message


@pytest.mark.parametrize(
    ("line", "key"),
    [
        ('base_url = "https://evil.example.invalid/v1"', "base_url"),
        ('api_key_env = "GH_TOKEN"', "api_key_env"),
    ],
)
def test_a_repo_file_cannot_choose_where_the_key_goes(
    repo: Path, user_file: Path, line: str, key: str
) -> None:
    path = write(repo / ".tui-engineer.toml", line + "\n")
    message = error_of(lambda: load(repo, user_file, env={"OPENAI_API_KEY": "sk-mine"}))
    assert message.startswith(f"{path}: {key} must not be set in a repository's config file")
    assert str(user_file) in message


def test_only_the_user_widens_the_test_environment(repo: Path, user_file: Path) -> None:
    path = write(repo / ".tui-engineer.toml", 'test_env = "AWS_*"\n')
    message = error_of(lambda: load(repo, user_file))
    assert message.startswith(f"{path}: test_env must not be set in a repository's config file")
    path.unlink()
    write(user_file, 'test_env = "DATABASE_URL, MY_APP_*"\n')
    assert load(repo, user_file).settings.test_env == "DATABASE_URL, MY_APP_*"
    write(user_file, 'test_env = "DATABASE URL=x"\n')
    assert "test_env must be variable names" in error_of(lambda: load(repo, user_file))


def test_only_the_user_gives_tests_the_network(repo: Path, user_file: Path) -> None:
    # A cloned repository asking for the network is refused, naming who may allow it.
    path = write(repo / ".tui-engineer.toml", "allow_network = true\n")
    message = error_of(lambda: load(repo, user_file))
    assert message.startswith(f"{path}: allow_network must not be set in a repository's config")
    assert "--allow-network" in message and str(user_file) in message
    write(path, "allow_network = false\n")  # narrowing is always fine
    assert load(repo, user_file).settings.allow_network is False
    path.unlink()
    write(user_file, "allow_network = true\n")
    assert load(repo, user_file).settings.allow_network is True
    user_file.unlink()
    assert load(repo, user_file, flags={"allow_network": True}).settings.allow_network is True


def test_only_the_user_shows_ignored_files_to_tests(repo: Path, user_file: Path) -> None:
    # A repository naming `.env` would hand its tests your local secrets.
    path = write(repo / ".tui-engineer.toml", 'show_ignored = ".env"\n')
    message = error_of(lambda: load(repo, user_file))
    assert message.startswith(f"{path}: show_ignored must not be set in a repository's config")
    path.unlink()
    write(user_file, 'show_ignored = "generated, proto_out/"\n')
    assert load(repo, user_file).settings.show_ignored == "generated, proto_out/"
    write(user_file, 'show_ignored = "../elsewhere"\n')
    assert "show_ignored must be paths inside the repository" in error_of(
        lambda: load(repo, user_file)
    )


def test_api_key_comes_from_the_named_env_var_then_user_config(repo: Path, user_file: Path) -> None:
    write(user_file, 'api_key = "sk-user-file-key"\n')
    assert load(repo, user_file).settings.api_key == "sk-user-file-key"
    assert load(repo, user_file).sources["api_key"] == f"user config {user_file}"

    write(user_file, 'api_key_env = "LOCAL_LLM_KEY"\n')
    env = {"OPENAI_API_KEY": "sk-not-this-one", "LOCAL_LLM_KEY": "sk-local"}
    loaded = load(repo, user_file, env=env)
    assert loaded.settings.api_key == "sk-local"
    assert loaded.sources["api_key"] == "env LOCAL_LLM_KEY"


def test_a_malformed_api_key_is_not_echoed(repo: Path, user_file: Path) -> None:
    write(user_file, "api_key = 84711932650017\n")
    message = error_of(lambda: load(repo, user_file))
    assert message == f"{user_file}: api_key must be a non-empty string, got a number"
    assert "84711932650017" not in message


def test_no_api_key_anywhere(repo: Path, user_file: Path) -> None:
    loaded = load(repo, user_file, env={"OPENAI_API_KEY": "  "})
    assert loaded.settings.api_key is None


# --- test command detection -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("files", "reason"),
    [
        ({"calc.py": "", "tests/test_calc.py": ""}, "tests/ folder"),
        ({"test/helpers.py": ""}, "test/ folder"),
        ({"pytest.ini": "[pytest]\n"}, "pytest.ini"),
        ({"conftest.py": ""}, "conftest.py"),
        (
            {"pyproject.toml": "[tool.pytest.ini_options]\naddopts = '-q'\n"},
            "[tool.pytest.ini_options] in pyproject.toml",
        ),
        ({"tox.ini": "[tox]\n\n[pytest]\naddopts = -q\n"}, "[pytest] in tox.ini"),
        ({"setup.cfg": "[metadata]\nname = x\n[tool:pytest]\n"}, "[tool:pytest] in setup.cfg"),
        ({"src/pkg/check_test.py": ""}, "test files such as src/pkg/check_test.py"),
    ],
)
def test_detects_pytest(make_repo: Callable[..., Path], files: dict[str, str], reason: str) -> None:
    assert detect_test_command(make_repo(files)) == ("python -m pytest", reason)


@pytest.mark.parametrize(
    "files",
    [
        {"main.py": "print('hi')\n"},
        {"package.json": "{}", "test/app.test.js": ""},  # a JavaScript test folder
        {"node_modules/lib/test_lib.py": "", "README.md": ""},  # vendored code is not ours
        {"a/b/c/d/e/test_deep.py": ""},  # beyond the bounded scan
        {"setup.cfg": "[metadata]\nname = x\n", "pyproject.toml": "[project]\nname = 'x'\n"},
    ],
)
def test_detects_nothing(make_repo: Callable[..., Path], files: dict[str, str]) -> None:
    assert detect_test_command(make_repo(files)) is None


NPM_INIT = '{"scripts": {"test": "echo \\"Error: no test specified\\" && exit 1"}}'


@pytest.mark.parametrize(
    ("files", "found"),
    [
        ({"Cargo.toml": "[package]\n", "src/lib.rs": ""}, ("cargo test", "Cargo.toml")),
        ({"go.mod": "module x\n"}, ("go test ./...", "go.mod")),
        (
            {"package.json": '{"scripts": {"test": "node --test"}}'},
            ("npm test", "scripts.test in package.json"),
        ),
        (
            {"package.json": '{"scripts": {"test": "jest"}}', "yarn.lock": ""},
            ("yarn test", "scripts.test in package.json, yarn.lock"),
        ),
        (
            {"package.json": '{"scripts": {"test": "vitest"}}', "pnpm-lock.yaml": ""},
            ("pnpm test", "scripts.test in package.json, pnpm-lock.yaml"),
        ),
        (
            {"Makefile": "all: build\n\ncheck test: build\n\tgo vet\n"},
            ("make test", "a test target in Makefile"),
        ),
        # pytest's own config wins over a Makefile test target run whole or package.json.
        (
            {
                "pytest.ini": "[pytest]\n",
                "Makefile": "test: deps\n\tpytest\n",
                "package.json": '{"scripts": {"test": "jest"}}',
            },
            ("python -m pytest", "pytest.ini"),
        ),
        # The one command of a Makefile's test target is what the project runs.
        (
            {
                "pytest.ini": "[pytest]\n",
                "Makefile": "PY ?= python3\ntest:\n\t@$(PY) -m pytest -q\n",
            },
            ("python3 -m pytest -q", "the test target of Makefile"),
        ),
        # npm's placeholder is no test script; the JavaScript test folder is not pytest's.
        ({"package.json": NPM_INIT, "test/a.test.js": ""}, None),
        ({"Makefile": "TEST := 1\nbuild:\n\tcc x.c\n"}, None),  # a variable, not a target
    ],
)
def test_detects_other_runners(
    make_repo: Callable[..., Path], files: dict[str, str], found: tuple[str, str] | None
) -> None:
    assert detect_test_command(make_repo(files)) == found


def test_detection_fills_test_command_with_its_reason(repo: Path, user_file: Path) -> None:
    loaded = load(repo, user_file)
    assert loaded.settings.test_command == "python -m pytest"
    assert loaded.sources["test_command"] == "auto-detected (tests/ folder)"


def test_configured_test_command_beats_detection(repo: Path, user_file: Path) -> None:
    write(repo / ".tui-engineer.toml", 'test_command = "make check"\n')
    assert load(repo, user_file).settings.test_command == "make check"


def test_undetected_test_command_is_explained(
    make_repo: Callable[..., Path], user_file: Path
) -> None:
    loaded = load(make_repo({"main.py": ""}), user_file)
    assert loaded.settings.test_command is None
    assert "not detected — set test_command in .tui-engineer.toml or pass --test-cmd" in (
        format_settings(loaded)
    )


# --- the settings table -----------------------------------------------------------------------


def test_format_masks_the_key_and_shows_sources(repo: Path, user_file: Path) -> None:
    write(repo / ".tui-engineer.toml", 'model = "gpt-4.1"\n')
    loaded = load(repo, user_file, {"max_wall_seconds": 600}, {"OPENAI_API_KEY": SECRET})
    text = format_settings(loaded)
    assert "set (sk-…abcd, from env OPENAI_API_KEY)" in text
    # No stretch of the secret longer than the shown tail leaks.
    assert not any(SECRET[i : i + 5] in text for i in range(len(SECRET) - 4))
    model_line = next(line for line in text.splitlines() if line.startswith("model "))
    assert "gpt-4.1" in model_line and str(repo / ".tui-engineer.toml") in model_line
    assert "flag --max-minutes" in text
    assert f"Files read:\n  {repo / '.tui-engineer.toml'}" in text


def test_format_hides_short_keys_whole(repo: Path, user_file: Path) -> None:
    text = format_settings(load(repo, user_file, env={"OPENAI_API_KEY": "sk-tiny9"}))
    assert "sk-tiny9" not in text and "tiny" not in text
    assert "set (hidden, from env OPENAI_API_KEY)" in text


def test_format_says_how_to_set_a_missing_key(repo: Path, user_file: Path) -> None:
    write(user_file, 'api_key_env = "GROQ_API_KEY"\n')
    text = format_settings(load(repo, user_file))
    assert "not set — export GROQ_API_KEY=…" in text
    assert f"Files read:\n  {user_file}" in text


def test_format_points_at_a_missing_user_config(repo: Path, user_file: Path) -> None:
    text = format_settings(load(repo, user_file))
    assert "Files read:\n  none" in text
    assert f"User config (not found; create it to set personal defaults): {user_file}" in text


def test_settings_are_immutable() -> None:
    with pytest.raises(AttributeError):
        Settings().model = "x"  # type: ignore[misc]


def test_cli_config_prints_the_table_and_reports_errors(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("tui_engineer.vcs.repo", reason="git layer not built yet")
    from tui_engineer.cli.main import main

    assert main(["config", "-C", str(repo), "--model", "m-from-flag"]) == 0
    assert "m-from-flag" in capsys.readouterr().out
    write(repo / ".tui-engineer.toml", "max_fix_attempts = 'three'\n")
    assert main(["config", "-C", str(repo)]) == 2
    assert "max_fix_attempts must be a whole number ≥ 0, got 'three'" in capsys.readouterr().err


def test_unittest_tests_beside_a_package_of_thousands_of_modules_are_found(
    make_repo: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The bounded search from the root spends its budget in a big package (issue 47): the
    tests/ folder is read first, so a unittest suite in a venv without pytest still runs with
    unittest (it was taken for pytest's), and the package is not read whole."""
    monkeypatch.delenv("VIRTUAL_ENV", raising=False)
    modules = {f"pkg/mod_{n:05}.py": "" for n in range(6000)}
    test = "import unittest\n\nclass T(unittest.TestCase):\n    def test_x(self):\n        pass\n"
    repo = make_repo({**modules, "pkg/__init__.py": "", "tests/test_x.py": test})
    venv = repo / ".venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    command, reason = detect_test_command(repo)  # type: ignore[misc]
    assert command == ".venv/bin/python -m unittest discover -s tests", reason
    assert reason.endswith("unittest tests, no pytest in the repository's own .venv/")
