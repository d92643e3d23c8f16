"""Which image a session's container starts from: the cached environment of this template and
these dependency files when one exists (warm), else the template's base image (cold). Successful
setup commands and actions are committed into the cached environment, with a record of them."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any

from docker.errors import APIError, ImageNotFound, NotFound

from tui_engineer.sandbox.docker.errors import ImageUnavailable
from tui_engineer.sandbox.docker.workspace import read_single_file, single_file_tar
from tui_engineer.sandbox.templates import EnvTemplate

ENV_REPOSITORY = "tui-engineer-env"
LAYERS_DIR = "/etc/tui-engineer"
LAYERS_FILE = f"{LAYERS_DIR}/layers.json"
# Images under these names are only ever built locally: asking a registry for them is pointless.
LOCAL_ONLY_PREFIXES = ("tui-engineer-", "tui-engineer/")
BUILD_HINT = "scripts/build_test_image.sh"


@dataclass
class Environment:
    template: str
    key: str  # template recipe + dependency files
    image: str  # what the container was started from
    warm: bool  # True when started from a cached environment
    base_image: str
    layers: list[dict[str, Any]] = field(default_factory=list)  # what was layered, oldest first

    @property
    def cache_tag(self) -> str:
        return env_image_name(self.template, self.key)


def env_image_name(template: str, key: str) -> str:
    return f"{ENV_REPOSITORY}/{template}:{key}"


def has_image(client: Any, name: str) -> bool:
    try:
        client.images.get(name)
    except ImageNotFound:
        return False
    return True


def base_image(client: Any, template: EnvTemplate, override: str | None = None) -> str:
    """The first of the template's images present locally, else the first one that pulls."""
    candidates = [override] if override else list(template.images)
    for name in candidates:
        if has_image(client, name):
            return name
    failures: list[str] = []
    for name in candidates:
        if name.startswith(LOCAL_ONLY_PREFIXES):
            failures.append(f"{name} (built locally only, never in a registry)")
            continue
        try:
            client.images.pull(name)
            return name
        except (APIError, NotFound) as err:
            failures.append(f"{name} (pull failed: {_first_line(err)})")
    raise ImageUnavailable(_missing_message(template, failures))


def _missing_message(template: EnvTemplate, failures: list[str]) -> str:
    listed = "\n".join(f"  - {line}" for line in failures)
    return (
        f"The docker sandbox has no image for the {template.name!r} template: none of these is "
        f"in the local Docker Engine, and none could be pulled:\n{listed}\n"
        "There may be no registry reachable from this machine. Either build the local Python "
        f"test image with `sudo {BUILD_HINT}` (from the tui-engineer source tree; it uses "
        "debootstrap and needs no registry), load an image you saved elsewhere (`docker load`), "
        "or add a template naming an image you have (see `docker images`) as a TOML file in "
        ".tui-engineer/templates/ of your repository. `--sandbox local` runs the tests on this "
        "machine instead."
    )


def _first_line(err: BaseException) -> str:
    text = str(err).strip().splitlines()
    line = text[0] if text else type(err).__name__
    return line if len(line) <= 200 else line[:197] + "..."


def read_layers(container: Any) -> list[dict[str, Any]]:
    """The record of setup commands and actions layered into the container's image."""
    try:
        chunks, _ = container.get_archive(LAYERS_FILE)
        data = read_single_file(chunks)
    except NotFound:
        return []
    try:
        layers = json.loads(data or b"[]")
    except ValueError:
        return []
    return layers if isinstance(layers, list) else []


def write_layers(container: Any, layers: list[dict[str, Any]]) -> None:
    text = json.dumps(layers, indent=1).encode()
    container.exec_run(["mkdir", "-p", LAYERS_DIR], user="root")
    container.put_archive(LAYERS_DIR, single_file_tar("layers.json", text))


def layer_entry(kind: str, command: str, **extra: Any) -> dict[str, Any]:
    return {
        "kind": kind,
        "command": command,
        "at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        **extra,
    }


def commit_environment(container: Any, env: Environment) -> str:
    """Save the container's filesystem as the cached environment; returns the image name."""
    repository, tag = env.cache_tag.split(":")
    container.commit(
        repository=repository,
        tag=tag,
        message=f"tui-engineer environment for template {env.template}",
        changes=[
            "LABEL tui-engineer.environment=1",
            f"LABEL tui-engineer.template={env.template}",
            f"LABEL tui-engineer.base-image={env.base_image}",
        ],
    )
    return env.cache_tag
