"""`--ray ADDRESS` / `--ray local`: each run is a Ray task. The worker runs the very same
`run_one` and sends back the result and the record's text, so the driver writes the results
folder exactly as the local executor does (the workers need no shared disk)."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Sequence

from tui_engineer.base.errors import UserError
from tui_engineer.bench.runner import RunOutput, RunSpec, run_one


def _run_in_worker(spec: RunSpec) -> RunOutput | str:
    """In a Ray worker process. A setup problem comes back as its message, not a Ray traceback."""
    try:
        return asyncio.run(run_one(spec))
    except UserError as err:
        return str(err)


def _init(address: str) -> bool:
    """Connect to (or start) Ray. True when this process started a local cluster."""
    try:
        import ray
    except ImportError:
        raise UserError('--ray needs Ray: pip install "tui-engineer[bench]"') from None
    if ray.is_initialized():
        return False
    options: dict[str, object] = {"log_to_driver": False, "configure_logging": False}
    if address == "local":
        # A small local cluster: no dashboard, a modest object store (results are small).
        ray.init(include_dashboard=False, object_store_memory=100 * 2**20, **options)
        return True
    # A remote cluster's workers do not have this shell's environment: send the API key along.
    env = {
        k: v
        for k, v in os.environ.items()
        if k == "OPENAI_API_KEY" or k.startswith("TUI_ENGINEER_")
    }
    try:
        ray.init(address=address, runtime_env={"env_vars": env}, **options)
    except (ConnectionError, RuntimeError, ValueError) as err:
        raise UserError(f"--ray {address}: cannot connect to the Ray cluster: {err}") from None
    return True


def ray_executor(address: str):
    async def execute(specs: Sequence[RunSpec], done: Callable[[RunOutput], None]) -> None:
        import ray

        started = await asyncio.to_thread(_init, address)
        try:
            task = ray.remote(num_cpus=1, max_retries=0)(_run_in_worker)
            pending = [task.remote(spec) for spec in specs]
            while pending:
                ready, pending = await asyncio.to_thread(ray.wait, pending, num_returns=1)
                for ref in ready:
                    output = await asyncio.to_thread(ray.get, ref)
                    if isinstance(output, str):
                        for ref in pending:
                            ray.cancel(ref, force=True)
                        raise UserError(output)
                    done(output)
        finally:
            if started:
                await asyncio.to_thread(ray.shutdown)

    return execute
