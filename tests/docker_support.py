"""Fixtures for tests against a real Docker Engine: the local test base image (built once per
machine with scripts/build_test_image.sh: there is no registry to pull from) and sandboxes that
are always closed, with their cached environment images removed afterwards."""

from __future__ import annotations

import dataclasses
import fcntl
import os
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from tui_engineer.sandbox.docker import DockerSandbox, DockerUnavailable
from tui_engineer.sandbox.docker.client import connect
from tui_engineer.sandbox.docker.environment import ENV_REPOSITORY
from tui_engineer.sandbox.templates import EnvTemplate, load_templates

TEST_IMAGE = "tui-engineer-test/python:bookworm"
BUILD_SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "build_test_image.sh"


def _engine_or_reason() -> tuple[object | None, str]:
    try:
        return connect(), ""
    except DockerUnavailable as err:
        return None, f"no Docker Engine reachable: {str(err).splitlines()[0]}"


def _build_or_reason(client: object) -> str:
    """Build the test image if it is missing; '' when it exists afterwards, else why not."""
    if _has_image(client, TEST_IMAGE):
        return ""
    if os.geteuid() != 0 or shutil.which("debootstrap") is None:
        return (
            f"the test image {TEST_IMAGE} is missing and cannot be built here (needs root and "
            f"debootstrap): run `sudo {BUILD_SCRIPT}`"
        )
    # One build at a time on this machine: pytest-xdist's workers (and other runs) each get here.
    lock = Path(tempfile.gettempdir()) / "tui-engineer-test-image.lock"
    with lock.open("a") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        if _has_image(client, TEST_IMAGE):  # another process built it while this one waited
            return ""
        done = subprocess.run(
            ["bash", str(BUILD_SCRIPT), TEST_IMAGE], capture_output=True, text=True
        )
    if done.returncode != 0:
        return f"building {TEST_IMAGE} failed: {done.stderr.strip()[-500:]}"
    return ""


def _has_image(client: object, name: str) -> bool:
    try:
        client.images.get(name)  # type: ignore[attr-defined]
    except Exception:
        return False
    return True


@pytest.fixture(scope="session")
def docker_client() -> object:
    client, reason = _engine_or_reason()
    if client is None:
        pytest.skip(reason)
    return client


@pytest.fixture(scope="session")
def docker_image(docker_client: object) -> str:
    reason = _build_or_reason(docker_client)
    if reason:
        pytest.skip(reason)
    return TEST_IMAGE


def remove_env_images(client: object, template_name: str) -> None:
    images = client.images.list(name=f"{ENV_REPOSITORY}/{template_name}")  # type: ignore[attr-defined]
    for image in images:
        for tag in image.tags:
            client.images.remove(tag, force=True)  # type: ignore[attr-defined]


@pytest.fixture
def sandbox_template(docker_client: object, docker_image: str) -> EnvTemplate:
    """The built-in python template on the test image, renamed per test so cached environments
    from earlier tests (or earlier runs) are never picked up; no setup commands (faster)."""
    name = f"test-{uuid.uuid4().hex[:10]}"
    base = load_templates()["python"]
    template = dataclasses.replace(base, name=name, images=(docker_image,), setup=())
    yield template
    remove_env_images(docker_client, name)


@pytest.fixture
async def make_sandbox(
    sandbox_template: EnvTemplate,
) -> AsyncIterator[Callable[..., DockerSandbox]]:
    """DockerSandbox(repo, template=<test template>, **options); all closed at the end."""
    made: list[DockerSandbox] = []

    def _make(repo: Path, **options: object) -> DockerSandbox:
        options.setdefault("template", sandbox_template)
        sandbox = DockerSandbox(repo, **options)  # type: ignore[arg-type]
        made.append(sandbox)
        return sandbox

    yield _make
    for sandbox in made:
        await sandbox.close()
