"""Connecting to the Docker Engine, with an error that says which address was tried."""

from __future__ import annotations

import os

import docker
from docker.errors import DockerException

from tui_engineer.sandbox.docker.errors import DockerUnavailable

DEFAULT_SOCKET = "unix:///var/run/docker.sock"
CONNECT_TIMEOUT = 10  # seconds per API call while connecting; later calls use the SDK's own


def engine_address() -> str:
    """Where the SDK will look, in words for an error message."""
    host = os.environ.get("DOCKER_HOST")
    if host:
        return f"{host} (from DOCKER_HOST)"
    return f"{DEFAULT_SOCKET} (the default; DOCKER_HOST is not set)"


def connect() -> docker.DockerClient:
    """A client whose engine answered a ping. Raises DockerUnavailable otherwise."""
    try:
        client = docker.from_env(timeout=CONNECT_TIMEOUT)
        client.ping()
    except DockerException as err:
        raise DockerUnavailable(unreachable_message(err)) from None
    except Exception as err:  # requests' connection errors are not DockerException subclasses
        raise DockerUnavailable(unreachable_message(err)) from None
    client.api.timeout = 120  # image commits and archives can take a while on slow disks
    return client


def unreachable_message(err: BaseException) -> str:
    return (
        f"The docker sandbox cannot reach a Docker Engine at {engine_address()}: "
        f"{_short(err)}.\n"
        "Start the engine (`sudo systemctl start docker`, or open Docker Desktop), make sure your "
        "user may use it (`docker info` must work without sudo; e.g. join the `docker` group), "
        "or point DOCKER_HOST at a running engine. To run tests on this machine instead, use "
        '`--sandbox local` (or sandbox = "local" in .tui-engineer.toml).'
    )


def _short(err: BaseException) -> str:
    text = str(err).strip() or type(err).__name__
    return text if len(text) <= 300 else text[:297] + "..."
