"""Verification time of the same step in the docker sandbox (warm container) vs the local one,
and the docker sandbox's cold start (new container from the base image, template setup, cached
environment commit) vs its warm start (from the cached environment). Prints numbers; no asserts.

    python benchmarks/sandbox_docker.py [--runs 5] [--tests 60] [--image IMAGE]

Needs a reachable Docker Engine and the image (default: the local test image built by
scripts/build_test_image.sh).
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import statistics
import subprocess
import tempfile
import time
import uuid
from pathlib import Path

from tui_engineer.sandbox.docker import DockerSandbox
from tui_engineer.sandbox.docker.client import connect
from tui_engineer.sandbox.docker.environment import ENV_REPOSITORY
from tui_engineer.sandbox.local import LocalSandbox
from tui_engineer.sandbox.templates import EnvTemplate, load_templates

COMMAND = "python -m pytest -q"


def make_repo(root: Path, tests: int) -> Path:
    """A small project: a module and `tests` test functions, one of them failing."""
    (root / "tests").mkdir(parents=True)
    (root / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    body = "from calc import add\n\n"
    for n in range(tests):
        expected = n + 1 if n else 2  # test_0 fails: a realistic "step under repair"
        body += f"\ndef test_{n}():\n    assert add({n}, 1) == {expected}\n"
    (root / "tests" / "test_calc.py").write_text(body)
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    return root


async def timed_runs(sandbox: object, repo: Path, runs: int) -> list[float]:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        report = await sandbox.run_tests(repo, COMMAND, timeout=120)  # type: ignore[attr-defined]
        times.append(time.perf_counter() - started)
        assert report.structured, report.for_model()
    return times


async def start_time(repo: Path, template: EnvTemplate) -> tuple[float, float, DockerSandbox]:
    """(seconds to start, seconds for the first run, the started sandbox)."""
    sandbox = DockerSandbox(repo, template=template)
    started = time.perf_counter()
    await sandbox.start()
    ready = time.perf_counter()
    await sandbox.run_tests(repo, COMMAND, timeout=120)
    return ready - started, time.perf_counter() - ready, sandbox


def describe(label: str, times: list[float]) -> str:
    median = statistics.median(times)
    return (
        f"{label:<34} median {median * 1000:7.0f} ms  (min {min(times) * 1000:.0f}, n={len(times)})"
    )


async def main(runs: int, tests: int, image: str) -> None:
    base = load_templates()["python"]
    # A fresh template name: the cold start really is cold (no cached environment exists yet).
    template = dataclasses.replace(base, name=f"bench-{uuid.uuid4().hex[:8]}", images=(image,))
    with tempfile.TemporaryDirectory() as tmp:
        repo = make_repo(Path(tmp) / "repo", tests)
        cold_start, cold_first, cold = await start_time(repo, template)
        await cold.close()
        warm_start, warm_first, docker = await start_time(repo, template)
        try:
            docker_times = await timed_runs(docker, repo, runs)
        finally:
            await docker.close()
        local_times = await timed_runs(LocalSandbox(), repo, runs)
    remove_images(template.name)
    print(f"step: {COMMAND} on {tests} tests; docker image {image}")
    print(start_line("docker cold start (base image)", cold_start, cold_first))
    print(start_line("docker warm start (cached env)", warm_start, warm_first))
    print(describe("docker verification (warm)", docker_times))
    print(describe("local verification", local_times))
    overhead = statistics.median(docker_times) - statistics.median(local_times)
    print(f"{'docker overhead per verification':<34} {overhead * 1000:7.0f} ms")


def start_line(label: str, start: float, first_run: float) -> str:
    return f"{label:<34} {start * 1000:7.0f} ms  + first run {first_run * 1000:.0f} ms"


def remove_images(template_name: str) -> None:
    client = connect()
    for found in client.images.list(name=f"{ENV_REPOSITORY}/{template_name}"):
        for tag in found.tags:
            client.images.remove(tag, force=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--tests", type=int, default=60)
    parser.add_argument("--image", default="tui-engineer-test/python:bookworm")
    args = parser.parse_args()
    asyncio.run(main(args.runs, args.tests, args.image))
