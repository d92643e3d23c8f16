"""The engine with the docker sandbox, end to end: scripted model over real HTTP, real git, a real
container on the local Docker Engine (skipped with the reason where none is reachable)."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest

from tests.conftest import git
from tests.docker_support import remove_env_images
from tests.engine_support import edit, run_headless
from tests.sandbox.test_sandbox_docker import tiny_wheel
from tests.scripted_server import Reply
from tui_engineer.engine import events as ev

IN_CONTAINER_TEST = (
    "import os\n\n\ndef test_runs_in_the_container():\n"
    "    assert os.getcwd() == '/workspace' and os.getuid() == 1000\n"
)


pytestmark = pytest.mark.usefixtures("api_key")


@pytest.fixture
def template_name(docker_client, docker_image: str):
    """A throwaway copy of the python template on the local test image, so cached environments
    of other tests are never reused by accident."""
    name = f"e2e-{uuid.uuid4().hex[:8]}"
    yield name
    remove_env_images(docker_client, name)


def add_template(repo: Path, name: str, image: str) -> None:
    folder = repo / ".tui-engineer" / "templates"
    folder.mkdir(parents=True)
    (folder / f"{name}.toml").write_text(
        f'name = "{name}"\nimages = ["{image}"]\nuser = "1000:1000"\n'
        'test_command = "python -m pytest"\ninstall = "python -m pip install {package}"\n'
        'dependency_files = ["pyproject.toml"]\ndetect = ["test_*.py"]\n'
        '[env]\nPIP_BREAK_SYSTEM_PACKAGES = "1"\nPYTHONDONTWRITEBYTECODE = "1"\n'
        'PYTHONPATH = "/workspace"\n'
    )
    git(repo, "add", ".tui-engineer")  # a team may commit its templates
    git(repo, "commit", "-qm", "sandbox template")


@pytest.fixture
def docker_repo(make_repo, template_name: str, docker_image: str) -> Path:
    """The calc sample repo with the test's throwaway template committed (`add_template`)."""
    repo = make_repo()
    add_template(repo, template_name, docker_image)
    return repo


async def in_docker(repo: Path, server, request: str, template: str, **flags: object):
    """The session asked `request` (no plan) with its tests run in a container from the
    sandbox template `template`; it must end well."""
    result, seen = await run_headless(
        repo, request, server.base_url, plan=False, sandbox="docker", sandbox_template=template,
        **flags,
    )  # fmt: skip
    assert result.exit_code == 0, result.message
    return seen


async def test_step_verified_in_docker_is_committed(
    docker_repo: Path, scripted_server, template_name
) -> None:
    repo = docker_repo
    scripted_server.script(Reply(text=edit("tests/test_box.py", "", IN_CONTAINER_TEST)))
    seen = await in_docker(repo, scripted_server, "prove the tests run in docker", template_name)
    (started,) = seen.of(ev.SessionStarted)
    assert started.sandbox == "docker"
    (finished,) = seen.of(ev.TestsFinished)
    assert finished.ok and finished.passed == 2
    assert git(repo, "log", "-1", "--format=%s") == "prove the tests run in docker"


async def test_install_action_is_shown_recorded_cached_and_reused(
    docker_repo: Path, scripted_server, template_name
) -> None:
    repo = docker_repo
    (repo / "vendor").mkdir()
    tiny_wheel(repo / "vendor")
    git(repo, "add", "vendor")
    git(repo, "commit", "-qm", "vendor a wheel")
    wheel = "./vendor/tinypkg-1.0-py3-none-any.whl"
    uses_pkg = "import tinypkg\n\n\ndef test_value():\n    assert tinypkg.VALUE == 42\n"
    scripted_server.script(
        Reply(text=edit("tests/test_pkg.py", "", uses_pkg)),
        Reply(text="tinypkg is not installed in the environment."),
        Reply(
            text=f"The code is fine; the environment lacks tinypkg.\n\n<<<<<<< INSTALL {wheel}\n"
        ),
    )
    seen = await in_docker(repo, scripted_server, "use tinypkg", template_name)
    (applied,) = seen.of(ev.ActionApplied)
    assert applied.ok and applied.action == f"install {wheel}"
    # An environment failure (issue 18): the fix call says so and asks for an install action.
    fix_call = str(scripted_server.chat_requests[2].messages)
    assert "the module `tinypkg` is not installed" in fix_call and "install action" in fix_call
    (proposal,) = seen.of(ev.ProposalReady)
    assert proposal.actions == (f"install {wheel}",)  # shown in the review beside the edits
    record = next((repo / ".tui-engineer" / "runs").glob("*.jsonl")).read_text()
    assert any(json.loads(line)["type"] == "action_applied" for line in record.splitlines())

    # The next session starts from the cached environment: the committed test passes untouched.
    scripted_server.script(Reply(text=edit("calc.py", "    return a + b\n", "    return b + a\n")))
    seen2 = await in_docker(repo, scripted_server, "swap operands", template_name)
    assert seen2.of(ev.ActionApplied) == []
    assert all(f.ok for f in seen2.of(ev.TestsFinished))


async def test_the_container_is_labelled_with_the_runs_session_id(
    docker_repo: Path, scripted_server, template_name, docker_client
) -> None:
    repo = docker_repo
    scripted_server.script(Reply(text=edit("tests/test_box.py", "", IN_CONTAINER_TEST)))
    labels: list[str] = []

    def look(event: ev.Event) -> None:
        if isinstance(event, ev.TestsFinished):  # the session's container is up now
            for container in docker_client.containers.list(
                filters={"label": "tui-engineer.session"}
            ):
                labels.append(container.labels["tui-engineer.session"])

    request = "prove the tests run in docker"
    seen = await in_docker(repo, scripted_server, request, template_name, sink=look)
    (started,) = seen.of(ev.SessionStarted)
    assert started.session_id in labels  # `docker ps` names the run you can find in `runs`


async def test_a_test_red_before_the_session_is_old_in_docker_too(
    make_repo, scripted_server, template_name, docker_image
) -> None:
    """Issue 18: the baseline runs in the container like every run; the step's fix of `add`
    commits while `test_mul`, red from the start, is named as old."""
    from tests.engine.test_baseline import FILES, FIX_ADD, MUL_ID

    repo = make_repo({k: v for k, v in FILES.items() if k != ".gitignore"})
    add_template(repo, template_name, docker_image)
    scripted_server.script(Reply(text=FIX_ADD))
    seen = await in_docker(repo, scripted_server, "fix add", template_name)
    (baseline,) = seen.of(ev.BaselineReady)
    assert MUL_ID in baseline.failing
    (proposal,) = seen.of(ev.ProposalReady)
    assert proposal.tests_ok and proposal.old_failures == (MUL_ID,)
    assert len(scripted_server.chat_requests) == 1
