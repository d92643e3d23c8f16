"""Creating the session's container (limits, labels, no network) and removing containers that a
crashed session left behind."""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass
from typing import Any

from docker.errors import APIError, NotFound

from tui_engineer.base.processes import is_running
from tui_engineer.sandbox.docker.client import connect

LABEL = "tui-engineer.sandbox"  # every sandbox container carries it; cleanup looks for it
LABEL_SESSION = "tui-engineer.session"
LABEL_PID = "tui-engineer.owner-pid"
LABEL_HOST = "tui-engineer.host"
KEEPALIVE_PIDFILE = "/.tui-engineer-keepalive"
# PID 1 is docker's init (it reaps orphans, so a fork bomb's zombies do not eat the pid limit);
# its child just waits and writes its pid so a root run's cleanup can spare it.
KEEPALIVE = f"echo $$ > {KEEPALIVE_PIDFILE}; exec sleep 2147483647"
# Enough for root setup commands (pip, npm, apt's privilege drop); no raw network, no mounts.
CAPABILITIES = ["CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "SETUID", "SETGID"]
# Kills every process but PID 1 (docker's init) and the keepalive, a few rounds in case
# something forks while we go; used after root runs (`kill -1` would end the keepalive).
KILL_AS_ROOT = (
    f"keep=$(cat {KEEPALIVE_PIDFILE} 2>/dev/null); for r in 1 2 3 4 5 6 7 8; do found=; "
    'for d in /proc/[0-9]*; do p=${d#/proc/}; case "$p" in 1|"$keep"|"$$") continue;; esac; '
    'kill -9 "$p" 2>/dev/null && found=1; done; [ -n "$found" ] || break; done; true'
)
# As the test user, kill(-1) reaches exactly that user's processes, atomically (no fork escapes).
KILL_AS_USER = "kill -9 -1 2>/dev/null; kill -9 -1 2>/dev/null; true"


@dataclass(frozen=True)
class ResourceLimits:
    cpus: float = 2.0
    memory: str = "2g"  # docker's syntax: "512m", "2g"; no swap on top
    pids: int = 512


def create_container(
    client: Any,
    image: str,
    *,
    session_id: str,
    limits: ResourceLimits,
    allow_network: bool,
    env: dict[str, str],
) -> Any:
    """Start a container that idles until runs are exec'd into it."""
    return client.containers.run(
        image,
        ["sh", "-c", KEEPALIVE],
        name=f"tui-engineer-{session_id}",
        detach=True,
        init=True,
        labels=session_labels(session_id),
        network_mode="bridge" if allow_network else "none",
        mem_limit=limits.memory,
        memswap_limit=limits.memory,
        nano_cpus=int(min(limits.cpus, os.cpu_count() or 1) * 1e9),
        pids_limit=limits.pids,
        cap_drop=["ALL"],
        cap_add=CAPABILITIES,
        security_opt=["no-new-privileges"],
        environment=env,
        working_dir="/",
    )


def session_labels(session_id: str) -> dict[str, str]:
    return {
        LABEL: "1",
        LABEL_SESSION: session_id,
        LABEL_PID: str(os.getpid()),
        LABEL_HOST: socket.gethostname(),
    }


def cleanup_containers(client: Any | None = None) -> list[str]:
    """Remove sandbox containers whose session is gone (its process no longer runs on this
    machine, or the container already stopped). One sentence per container removed."""
    client = client or connect()
    sentences: list[str] = []
    # Sessions starting at once clean up side by side: a container another one removes between
    # the list and its inspection is passed over (docker-py raises NotFound otherwise).
    listed = client.containers.list(all=True, filters={"label": LABEL}, ignore_removed=True)
    for container in listed:
        reason = _abandoned(container)
        if reason is None:
            continue
        try:
            container.remove(force=True)
        except NotFound:
            continue  # another session's cleanup got there first
        except APIError as err:
            if err.status_code == 409 and "already in progress" in str(err):
                continue  # another session's cleanup is removing it now
            sentences.append(f"Could not remove the sandbox container {container.name}: {err}.")
            continue
        sentences.append(f"Removed the docker sandbox container {container.name} ({reason}).")
    return sentences


def _abandoned(container: Any) -> str | None:
    """Why the container belongs to no live session, or None when it may still be in use."""
    labels = container.labels or {}
    session = labels.get(LABEL_SESSION, "?")
    if container.status in ("exited", "dead", "created"):
        return f"left stopped by session {session}"
    if labels.get(LABEL_HOST) != socket.gethostname():
        return None  # another machine's session on a shared engine: cannot tell, leave it
    pid = labels.get(LABEL_PID, "")
    if pid.isdigit() and not is_running(int(pid)):
        return f"left by session {session}, whose process {pid} no longer runs"
    return None
