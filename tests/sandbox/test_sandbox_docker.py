"""The docker sandbox against a real Docker Engine (tests needing it skip, saying why, where none
is reachable), plus its templates and actions, which need no engine."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import dataclasses
import hashlib
import signal
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import pytest

from tests.conftest import git, write_files
from tui_engineer.config.settings import Settings
from tui_engineer.sandbox.docker import (
    ActionResult,
    BadAction,
    DockerSandbox,
    DockerUnavailable,
    ImageUnavailable,
    InstallPackage,
    ResourceLimits,
    RunSetupCommand,
    SandboxFailure,
    action_from_dict,
    action_to_dict,
    cleanup_containers,
)
from tui_engineer.sandbox.docker.client import connect
from tui_engineer.sandbox.factory import make_sandbox as factory_make_sandbox
from tui_engineer.sandbox.local import LocalSandbox
from tui_engineer.sandbox.templates import TemplateError, load_templates, pick_template
from tui_engineer.verify.test_process import CommandNotFound

# Fixtures from tests/docker_support.py (registered in conftest): docker_client, docker_image,
# sandbox_template, make_sandbox — they skip with the reason when no engine is reachable.

PYTEST = "python -m pytest"
MIXED_TESTS = {
    "calc.py": "def add(a, b):\n    return a + b\n",
    "tests/test_calc.py": (
        "from calc import add\n\n\n"
        "def test_add():\n    assert add(2, 3) == 5\n\n\n"
        "def test_add_negative():\n    assert add(-1, -1) == -2\n\n\n"
        "def test_wrong():\n    assert add(2, 2) == 5\n"
    ),
}


def python_check(body: str) -> str:
    """A pytest file whose single test runs `body` (so a check happens inside the container)."""
    return "def test_check():\n" + textwrap.indent(textwrap.dedent(body), "    ")


# --- verification in the container -----------------------------------------------------------


async def test_pytest_repo_verified_in_docker(make_repo, make_sandbox) -> None:
    repo = make_repo(MIXED_TESTS)
    sandbox = make_sandbox(repo)
    lines: list[str] = []
    report = await sandbox.run_tests(repo, PYTEST, timeout=60, on_output=lines.append)
    assert (report.passed, report.failed, report.structured) == (2, 1, True)
    assert [f.test_id for f in report.failures] == ["tests/test_calc.py::test_wrong"]
    assert "assert 4 == 5" in report.failures[0].traceback
    assert any("test_calc.py" in line for line in lines)  # streamed line by line
    first_container = sandbox.container_name

    # The next run sees the host's current files: the copy is refreshed, the container reused.
    write_files(repo, {"calc.py": "def add(a, b):\n    return a + b + 0 * (a == b)\n"})
    (repo / "tests" / "test_calc.py").write_text("def test_only():\n    assert True\n")
    report = await sandbox.run_tests(repo, PYTEST, timeout=60)
    assert (report.passed, report.failed, report.ok) == (1, 0, True)
    assert sandbox.container_name == first_container
    # Nothing but the host's own edits: no report or cache files were written into the worktree.
    status = git(repo, "status", "--porcelain", "--untracked-files=all", "--ignored")
    assert sorted(line.strip() for line in status.splitlines()) == [
        "M calc.py",
        "M tests/test_calc.py",
    ]


async def test_container_has_no_network_and_runs_tests_as_non_root(make_repo, make_sandbox) -> None:
    check = """
        import os, socket
        assert os.getuid() != 0
        assert sorted(os.listdir("/sys/class/net")) == ["lo"]
        # An unroutable address: with no interface but lo the connect fails at once.
        s = socket.socket(); s.settimeout(1)
        try:
            s.connect(("10.255.255.1", 80))
        except OSError as err:
            print("no route:", err)
        else:
            raise AssertionError("connected without a network")
    """
    repo = make_repo({"test_net.py": python_check(check)})
    sandbox = make_sandbox(repo, limits=ResourceLimits(cpus=1, memory="256m", pids=100))
    report = await sandbox.run_tests(repo, PYTEST + " -s", timeout=60)
    assert report.ok, report.for_model()
    config = docker_client_inspect(sandbox)
    assert config["NetworkMode"] == "none"
    assert (config["PidsLimit"], config["Memory"], config["NanoCpus"]) == (100, 256 << 20, 10**9)


def docker_client_inspect(sandbox: DockerSandbox) -> dict:
    return connect().api.inspect_container(sandbox.container_name)["HostConfig"]


async def test_allow_network_gives_the_container_an_interface(make_repo, make_sandbox) -> None:
    check = """
        import os
        assert len(os.listdir("/sys/class/net")) > 1, os.listdir("/sys/class/net")
    """
    repo = make_repo({"test_net.py": python_check(check)})
    sandbox = make_sandbox(repo, allow_network=True)
    report = await sandbox.run_tests(repo, PYTEST, timeout=60)
    assert report.ok, report.for_model()


async def test_writes_outside_the_workspace_do_not_reach_the_host(make_repo, make_sandbox) -> None:
    check = """
        import os, pathlib
        pathlib.Path("calc.py").write_text("broken = (")
        pathlib.Path("/tmp/escaped").write_text("x")
        for target in ("../../x", "../x"):
            try:
                pathlib.Path(target).write_text("x")
            except PermissionError:
                pass
    """
    repo = make_repo({**MIXED_TESTS, "tests/test_calc.py": python_check(check)})
    sandbox = make_sandbox(repo)
    report = await sandbox.run_tests(repo, PYTEST, timeout=60)
    assert report.ok, report.for_model()
    assert git(repo, "status", "--porcelain", "--ignored") == ""
    assert (repo / "calc.py").read_text() == MIXED_TESTS["calc.py"]
    assert not (repo.parent / "x").exists() and not (repo.parent.parent / "x").exists()
    # The damage stayed in the container's copy, which the next run replaces.
    (repo / "tests" / "test_calc.py").write_text("from calc import add\ndef test_a(): add(1, 2)\n")
    assert (await sandbox.run_tests(repo, PYTEST, timeout=60)).ok


async def test_fork_bomb_is_contained_and_the_sandbox_recovers(make_repo, make_sandbox) -> None:
    bomb = """
        import os, time
        while True:
            try:
                os.fork()
            except OSError:
                time.sleep(0.01)
    """
    repo = make_repo({"test_bomb.py": python_check(bomb)})
    sandbox = make_sandbox(repo, limits=ResourceLimits(cpus=1, memory="512m", pids=64))
    report = await sandbox.run_tests(repo, PYTEST, timeout=3)
    assert report.timed_out and report.exit_code is None
    assert "timed out after" in report.summary() and "test_timeout" in report.note
    assert report.duration < 20

    (repo / "test_bomb.py").write_text("def test_fine():\n    pass\n")
    assert (await sandbox.run_tests(repo, PYTEST, timeout=30)).ok


async def test_background_processes_die_with_the_run(make_repo, make_sandbox) -> None:
    repo = make_repo({"x.txt": ""})
    sandbox = make_sandbox(repo)
    await sandbox.run_tests(repo, "(sleep 1000 &) ; exit 0", timeout=30)
    look = "grep -la '[s]leep.1000' /proc/[0-9]*/cmdline; echo done"
    report = await sandbox.run_tests(repo, look, timeout=30)
    assert report.output_tail.strip().splitlines() == ["done"]


async def test_memory_hog_is_reported_as_out_of_memory(make_repo, make_sandbox) -> None:
    hog = "blocks = [bytearray(16 << 20) for _ in range(64)]\n"
    repo = make_repo({"test_hog.py": python_check(hog)})
    sandbox = make_sandbox(repo, limits=ResourceLimits(memory="96m"))
    report = await sandbox.run_tests(repo, PYTEST, timeout=60)
    assert not report.ok
    assert "too much memory" in report.note and "96m" in report.note


async def test_missing_program_is_a_clear_error(make_repo, make_sandbox, docker_image) -> None:
    repo = make_repo()
    sandbox = make_sandbox(repo)
    with pytest.raises(CommandNotFound) as caught:
        await sandbox.run_tests(repo, "no-such-runner --all", timeout=30)
    assert "no-such-runner" in str(caught.value) and docker_image in str(caught.value)


# --- self-repair: actions layered into a cached environment ----------------------------------


def tiny_wheel(folder: Path) -> Path:
    """A real, installable wheel with no dependencies: pip installs it without any network."""
    files = {
        "tinypkg/__init__.py": b"VALUE = 42\n",
        "tinypkg-1.0.dist-info/METADATA": b"Metadata-Version: 2.1\nName: tinypkg\nVersion: 1.0\n",
        "tinypkg-1.0.dist-info/WHEEL": (
            b"Wheel-Version: 1.0\nGenerator: tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
        ),
    }
    record = []
    for name, data in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{name},sha256={digest},{len(data)}")
    record.append("tinypkg-1.0.dist-info/RECORD,,")
    path = folder / "tinypkg-1.0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as wheel:
        for name, data in files.items():
            wheel.writestr(name, data)
        wheel.writestr("tinypkg-1.0.dist-info/RECORD", "\n".join(record) + "\n")
    return path


async def test_install_action_is_cached_and_reused_by_the_next_session(
    make_repo, make_sandbox
) -> None:
    repo = make_repo(
        {"test_pkg.py": "import tinypkg\n\ndef test_value():\n    assert tinypkg.VALUE == 42\n"}
    )
    (repo / "vendor").mkdir()
    tiny_wheel(repo / "vendor")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "vendor a wheel")

    first = make_sandbox(repo)
    before = await first.run_tests(repo, PYTEST, timeout=60)
    assert before.errors == 1 and "No module named 'tinypkg'" in before.failures[0].traceback
    result = await first.apply_action(
        InstallPackage("./vendor/tinypkg-1.0-py3-none-any.whl", reason="tests import it"), repo
    )
    assert result.ok, result.output
    assert result.cached_image == first.environment.cache_tag
    assert (await first.run_tests(repo, PYTEST, timeout=60)).ok
    await first.close()

    second = make_sandbox(repo)  # a new session: starts from the cached environment
    environment = await second.start()
    assert environment.warm and environment.image == first.environment.cache_tag
    assert [layer["kind"] for layer in environment.layers] == ["install"]
    assert "tinypkg" in environment.layers[0]["command"]
    report = await second.run_tests(repo, PYTEST, timeout=60)
    assert report.ok, report.for_model()
    assert second.actions == []  # nothing was installed again


async def test_failed_action_says_why_and_caches_nothing(make_repo, make_sandbox) -> None:
    repo = make_repo()
    sandbox = make_sandbox(repo)
    result = await sandbox.apply_action(RunSetupCommand("echo cannot >&2; exit 3"), repo)
    assert (result.ok, result.exit_code, result.cached_image) == (False, 3, None)
    assert "cannot" in result.output and "allow_network" in result.note
    assert "failed with exit code 3" in result.summary()


async def test_action_reports_the_workspace_files_it_changed(make_repo, make_sandbox) -> None:
    repo = make_repo()
    sandbox = make_sandbox(repo, use_cache=False)
    result = await sandbox.apply_action(RunSetupCommand("echo x >> calc.py; touch new.cfg"), repo)
    assert result.ok and result.changed_files == ["calc.py", "new.cfg"]
    assert (repo / "calc.py").read_text().endswith("return a + b\n")  # the host copy untouched


# --- lifecycle: crashed sessions, close, unreachable engine, missing image -------------------

CRASHING_SESSION = """
import asyncio, os, signal, sys
from pathlib import Path
from tui_engineer.sandbox.docker import DockerSandbox
from tui_engineer.sandbox.templates import load_templates
import dataclasses
python = load_templates()["python"]
template = dataclasses.replace(python, name=sys.argv[2], images=(sys.argv[3],), setup=())
async def main():
    sandbox = DockerSandbox(Path(sys.argv[1]), template=template)
    await sandbox.start()
    print(sandbox.container_name, flush=True)
    os.kill(os.getpid(), signal.SIGKILL)  # crash: close() never runs
asyncio.run(main())
"""


async def test_crashed_sessions_container_is_removed_on_next_start(
    make_repo, make_sandbox, sandbox_template, docker_client, docker_image
) -> None:
    repo = make_repo()
    live = make_sandbox(repo)
    await live.start()
    crashed = subprocess.run(
        [sys.executable, "-c", CRASHING_SESSION, str(repo), sandbox_template.name, docker_image],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert crashed.returncode == -signal.SIGKILL, crashed.stderr
    name = crashed.stdout.strip()
    assert docker_client.containers.get(name).status == "running"

    sentences = cleanup_containers()
    assert any(name in s and "no longer runs" in s for s in sentences), sentences
    assert name not in {c.name for c in docker_client.containers.list(all=True)}
    # A live session's container is left alone.
    assert docker_client.containers.get(live.container_name).status == "running"


async def test_close_removes_the_container(make_repo, make_sandbox, docker_client) -> None:
    repo = make_repo()
    sandbox = make_sandbox(repo)
    await sandbox.start()
    name = sandbox.container_name
    await sandbox.close()
    await sandbox.close()  # twice is fine
    assert name not in {c.name for c in docker_client.containers.list(all=True)}


async def test_missing_image_says_there_is_no_registry_and_how_to_build(
    make_repo, sandbox_template
) -> None:
    repo = make_repo()
    template = dataclasses.replace(sandbox_template, images=("tui-engineer-test/absent:none",))
    sandbox = DockerSandbox(repo, template=template)
    with pytest.raises(ImageUnavailable) as caught:
        await sandbox.start()
    message = str(caught.value)
    assert "tui-engineer-test/absent:none" in message and "registry" in message
    assert "build_test_image.sh" in message


async def test_unreachable_engine_names_the_socket_and_how_to_start_it(
    make_repo, tmp_path, monkeypatch
) -> None:
    socket_path = tmp_path / "no-engine.sock"
    monkeypatch.setenv("DOCKER_HOST", f"unix://{socket_path}")
    sandbox = DockerSandbox(make_repo())
    with pytest.raises(DockerUnavailable) as caught:
        await sandbox.run_tests(sandbox.repo_root, PYTEST, timeout=10)
    message = str(caught.value)
    assert str(socket_path) in message and "DOCKER_HOST" in message
    assert "systemctl start docker" in message and "--sandbox local" in message


# --- templates, actions and the factory (no engine needed) -----------------------------------


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        ({"tests/test_a.py": "", "calc.py": ""}, "python"),
        ({"package.json": "{}", "index.js": ""}, "node"),
        ({"Cargo.toml": "[package]\n", "src/main.rs": ""}, "rust"),
    ],
)
def test_template_is_picked_from_the_repo(tmp_path: Path, files, expected) -> None:
    write_files(tmp_path, files)
    assert pick_template(tmp_path).name == expected


def test_builtin_templates_say_how_to_test_and_install() -> None:
    templates = load_templates()
    assert (
        templates["python"].install_command("requests>=2") == "python -m pip install 'requests>=2'"
    )
    assert templates["node"].keep_paths == ("node_modules",)
    assert templates["rust"].test_command == "cargo test"


def test_template_override_and_unknown_name(tmp_path: Path) -> None:
    write_files(tmp_path, {"package.json": "{}", "tests/test_a.py": ""})
    assert pick_template(tmp_path, "python").name == "python"
    with pytest.raises(TemplateError, match="Known templates: node, python, rust"):
        pick_template(tmp_path, "haskell")


def test_no_fitting_template_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "README").write_text("hi")
    with pytest.raises(TemplateError, match="No sandbox template fits"):
        pick_template(tmp_path)


def test_repo_template_replaces_the_builtin_one(tmp_path: Path) -> None:
    write_files(
        tmp_path,
        {
            ".tui-engineer/templates/python.toml": (
                'name = "python"\nimages = ["my/python:1"]\ntest_command = "pytest"\n'
                'install = "uv pip install {package}"\ndetect = ["*.py"]\n'
            ),
            "a.py": "",
        },
    )
    template = pick_template(tmp_path)
    assert template.images == ("my/python:1",) and template.user == "1000:1000"


def test_broken_template_names_the_file_and_the_problem(tmp_path: Path) -> None:
    path = tmp_path / ".tui-engineer/templates/bad.toml"
    write_files(tmp_path, {str(path.relative_to(tmp_path)): 'name = "bad"\nimages = "x"\n'})
    with pytest.raises(TemplateError, match="bad.toml lacks test_command, install"):
        load_templates(tmp_path)


def test_environment_key_follows_the_dependency_files(tmp_path: Path) -> None:
    python = load_templates()["python"]
    write_files(tmp_path, {"requirements.txt": "requests\n", "app.py": ""})
    key = python.environment_key(tmp_path)
    (tmp_path / "app.py").write_text("changed = True\n")  # not a dependency file
    assert python.environment_key(tmp_path) == key
    (tmp_path / "requirements.txt").write_text("requests\nrich\n")
    assert python.environment_key(tmp_path) != key


def test_actions_round_trip_and_refuse_options_as_packages() -> None:
    action = InstallPackage("rich==13.7", reason="pretty output")
    assert action_from_dict(action_to_dict(action)) == action
    setup = RunSetupCommand("apt-get install -y libpq-dev")
    assert action_from_dict(action_to_dict(setup)) == setup
    with pytest.raises(BadAction):
        InstallPackage("--index-url=http://evil.invalid/ rich")
    result = ActionResult(action, "pip install rich==13.7", True, 0, False, 2.0, "ok")
    assert result.to_dict()["summary"] == "install rich==13.7: done in 2.0s"


def test_factory_picks_the_sandbox_without_connecting(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/none.sock")
    write_files(tmp_path, {"tests/test_a.py": ""})
    docker = factory_make_sandbox(Settings(sandbox="docker", allow_network=True), tmp_path)
    assert isinstance(docker, DockerSandbox) and docker.name == "docker" and docker.allow_network
    assert isinstance(factory_make_sandbox(Settings(), tmp_path), LocalSandbox)


async def test_cancelled_run_leaves_no_process_behind(make_repo, make_sandbox) -> None:
    repo = make_repo({"x.txt": ""})
    sandbox = make_sandbox(repo)
    await sandbox.start()
    run = asyncio.create_task(sandbox.run_tests(repo, "sleep 1000", timeout=600))
    await asyncio.sleep(1.0)
    run.cancel()
    with pytest.raises(asyncio.CancelledError):
        await run
    look = "grep -la '[s]leep.1000' /proc/[0-9]*/cmdline; echo done"
    report = await sandbox.run_tests(repo, look, timeout=30)
    assert report.output_tail.strip().splitlines() == ["done"]


async def test_template_setup_runs_once_per_environment(
    make_repo, make_sandbox, sandbox_template
) -> None:
    repo = make_repo()
    template = dataclasses.replace(sandbox_template, setup=("echo ready > /etc/prepared",))
    first = make_sandbox(repo, template=template)
    lines: list[str] = []
    cold = await first.start(on_output=lines.append)
    assert not cold.warm and [layer["kind"] for layer in cold.layers] == ["template-setup"]
    await first.close()

    second = make_sandbox(repo, template=template)
    warm = await second.start()
    assert warm.warm and warm.layers == cold.layers
    report = await second.run_tests(repo, "cat /etc/prepared", timeout=30)
    assert report.output_tail.strip() == "ready"


async def test_failing_template_setup_is_a_clear_error(
    make_repo, make_sandbox, sandbox_template
) -> None:
    repo = make_repo()
    template = dataclasses.replace(sandbox_template, setup=("echo no index >&2; exit 1",))
    with pytest.raises(SandboxFailure) as caught:
        await make_sandbox(repo, template=template).start()
    message = str(caught.value)
    assert "exit 1" in message and "no index" in message and "allow_network" in message


def test_sessions_cleaning_up_at_once_each_finish_and_remove_every_left_container(
    docker_client, docker_image
) -> None:
    """Sessions starting together each clean up what crashed sessions left: while one lists the
    containers, another removes some of them. Each cleanup finishes, with no error."""
    from concurrent.futures import ThreadPoolExecutor

    from tui_engineer.sandbox.docker.containers import session_labels

    left = [
        docker_client.containers.create(docker_image, "true", labels=session_labels(f"gone-{n}"))
        for n in range(24)
    ]
    try:
        with ThreadPoolExecutor(6) as pool:
            results = list(pool.map(lambda _: cleanup_containers(connect()), range(6)))
    finally:
        for container in left:
            with contextlib.suppress(Exception):
                container.remove(force=True)
    removed = [s for sentences in results for s in sentences if s.startswith("Removed")]
    names = {container.name for container in left}
    assert {name for name in names if any(name in s for s in removed)} == names
    assert not any(s.startswith("Could not") for sentences in results for s in sentences)


async def test_without_network_cargo_is_told_to_build_offline(make_repo, make_sandbox) -> None:
    """As under bubblewrap (issue 48): no network, so cargo builds from its cache alone instead
    of failing at the index; allowed the network, it is not told so."""
    check = """
        import os
        print("offline=" + os.environ.get("CARGO_NET_OFFLINE", ""))
    """
    repo = make_repo({"test_env.py": python_check(check)})
    report = await make_sandbox(repo).run_tests(repo, PYTEST + " -s", timeout=60)
    assert "offline=true" in report.output_tail, report.for_model()
    online = await make_sandbox(repo, allow_network=True).run_tests(
        repo, PYTEST + " -s", timeout=60
    )
    assert "offline=\n" in online.output_tail or "offline=." in online.output_tail, (
        online.output_tail
    )
