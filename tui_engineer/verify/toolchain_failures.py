"""A run that failed before any test ran because the toolchain could not get what the build
needs: a download with no network in the sandbox (cargo's index, npm's registry, Go's module
proxy, pip's index), or a lock file that must be updated. No edit fixes it, so it is said to the
human with the fix in their words (`cargo fetch`, `npm ci`, allow_network) and never sent to the
model as a code failure. Recognised per toolchain by the words it prints (plain text)."""

from __future__ import annotations

import re
from dataclasses import dataclass

ALLOW_NETWORK = "or let the tests reach the network: allow_network = true (--allow-network)"


@dataclass(frozen=True)
class ToolchainProblem:
    what: str  # "cargo needs the network …": the problem, for the message's first line
    fix: str  # what the user runs: "run `cargo fetch` in the repository, …"
    line: str  # the output's line that shows it


_SIGNS: tuple[tuple[re.Pattern[str], str, str], ...] = (
    (
        re.compile(r"cannot create the lock file .* because --(?:locked|frozen) was passed"),
        "cargo has no Cargo.lock and the command forbids making one",
        "run `cargo generate-lockfile` in the repository (the tests see your git-ignored "
        "Cargo.lock read-only), or drop --locked from test_command",
    ),
    (
        re.compile(r"failed to write .*Cargo\.lock"),
        "cargo must change Cargo.lock, which the tests see read-only (it is git-ignored)",
        "run `cargo fetch` in the repository so that your Cargo.lock holds what the change needs",
    ),
    (
        re.compile(r"lock file .* needs to be updated but --(?:locked|frozen) was passed"),
        "cargo's Cargo.lock must be updated and the command forbids it",
        "run `cargo update` in the repository (and commit Cargo.lock if you keep it), or drop "
        "--locked from test_command",
    ),
    (
        re.compile(
            r"failed to download from `?https?://[^\s`]*crates\.io"
            r"|you're using offline mode \(--offline\)"
            r"|attempting to make an HTTP request, but --offline was specified"
            r"|failed to (?:load source for dependency|get `[^`]+` as a dependency)"
        ),
        "cargo needs a crate that is not in its cache, and the tests run without network",
        f"run `cargo fetch` in the repository once (cargo's cache is shown to the tests), "
        f"{ALLOW_NETWORK}",
    ),
    (
        re.compile(
            r"npm (?:ERR!|error) code (?:ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ETIMEDOUT)"
            r"|ERR_PNPM_(?:META_FETCH_FAIL|FETCH_\w+)|getaddrinfo (?:ENOTFOUND|EAI_AGAIN) registry"
        ),
        "the package manager needs the registry, and the tests run without network",
        f"run `npm ci` (or `pnpm install`, `yarn install`) in the repository: the tests see its "
        f"node_modules read-only; {ALLOW_NETWORK}",
    ),
    (
        re.compile(
            r"dial tcp: lookup proxy\.golang\.org|missing go\.sum entry"
            r"|go: \S+: .*(?:Get \"https://proxy\.golang\.org|dial tcp)"
        ),
        "go needs a module that is not in its cache, and the tests run without network",
        f"run `go mod download` in the repository (the module cache is shown to the tests), "
        f"{ALLOW_NETWORK}",
    ),
    (
        re.compile(
            r"pip.*(?:Failed to establish a new connection|Temporary failure in name resolution)"
            r"|Could not find a version that satisfies the requirement"
        ),
        "pip needs its package index, and the tests run without network",
        f"install the packages in the project's environment before starting, {ALLOW_NETWORK}",
    ),
)


def toolchain_problem(output: str) -> ToolchainProblem | None:
    """The toolchain's problem `output` shows, or None (it is not one of these)."""
    for line in output.splitlines():
        for sign, what, fix in _SIGNS:
            if sign.search(line):
                return ToolchainProblem(what, fix, line.strip())
    return None
