"""The README stays a README for users: short, its two commands the ones CI runs, and every
relative link in it, in docs/ and in CONTRIBUTING.md leads somewhere (a file, and its heading
when the link names one). Facts moved out of the README live behind those links, so a broken
link is a fact lost."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

# The checkout: the first folder above this file holding pyproject.toml (wherever tests/ puts it).
ROOT = next(p for p in Path(__file__).resolve().parents if (p / "pyproject.toml").exists())
README = ROOT / "README.md"
MAX_README_LINES = 260

FENCE = re.compile(r"^\s*(```|~~~)")
# [text](target) and ![alt](target); the target ends at whitespace or ")".
LINK = re.compile(r"!?\[(?:[^\]\[]|\[[^\]]*\])*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
INLINE_CODE = re.compile(r"`+[^`]*`+")


def documents() -> list[Path]:
    return [README, ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").glob("*.md"))]


def prose_lines(text: str) -> list[str]:
    """The lines outside fenced code blocks (a `# comment` in a shell block is no heading)."""
    lines, fenced = [], False
    for line in text.splitlines():
        if FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            lines.append(line)
    return lines


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[`*_]|<[^>]+>", "", heading).strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    found: set[str] = set()
    for line in prose_lines(path.read_text(encoding="utf-8")):
        match = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if match:
            base = slug(match.group(1))
            name, n = base, 0
            while name in found:  # GitHub numbers repeated headings: name, name-1, name-2
                n += 1
                name = f"{base}-{n}"
            found.add(name)
    return found


def relative_links(path: Path) -> list[str]:
    links = []
    for line in prose_lines(path.read_text(encoding="utf-8")):
        for target in LINK.findall(INLINE_CODE.sub("", line)):
            if not re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:
                links.append(target)
    return links


def broken_links(path: Path, root: Path = ROOT) -> list[str]:
    broken = []
    for target in relative_links(path):
        file_part, _, anchor = target.partition("#")
        linked = (path.parent / file_part).resolve() if file_part else path
        if not linked.exists():
            broken.append(f"{target}: no file {linked.relative_to(root)}")
        elif anchor and linked.suffix == ".md" and anchor not in anchors(linked):
            broken.append(f"{target}: no heading #{anchor} in {linked.relative_to(root)}")
    return broken


def test_the_readme_is_at_most_260_lines():
    lines = README.read_text(encoding="utf-8").count("\n")
    assert lines <= MAX_README_LINES, (
        f"README.md has {lines} lines (at most {MAX_README_LINES}): move the detail to docs/"
    )


@pytest.mark.parametrize("path", documents(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_leads_to_a_file_and_heading(path: Path):
    assert relative_links(path) or path != README, "the README links to its docs"
    assert broken_links(path) == []


def test_every_doc_is_reachable_from_the_readme():
    linked = {
        (README.parent / target.partition("#")[0]).resolve()
        for target in relative_links(README)
        if target.partition("#")[0]
    }
    unlinked = [p.name for p in documents()[1:] if p.resolve() not in linked]
    assert unlinked == []


def ci_command(name: str) -> str:
    script = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    match = re.search(rf"^{name}='([^']*)'$", script, re.MULTILINE)
    assert match, f".ci/run no longer sets {name}"
    return match.group(1)


def readme_shell_lines() -> list[str]:
    """The lines of the README's ```bash blocks: what a user copies."""
    lines, in_bash = [], False
    for line in README.read_text(encoding="utf-8").splitlines():
        if FENCE.match(line):
            in_bash = not in_bash and line.strip() == "```bash"
            continue
        if in_bash:
            lines.append(line.strip())
    return lines


def test_the_readme_install_command_is_the_one_ci_runs():
    install = ci_command("readme_install")
    assert any(line == install or line.startswith(install + " ") for line in readme_shell_lines())


def test_the_readme_test_command_is_the_one_ci_runs():
    assert ci_command("readme_tests") in readme_shell_lines()


def test_a_broken_link_or_heading_is_found(tmp_path: Path):
    (tmp_path / "other.md").write_text("# Which bwrap\n\n```sh\n# not a heading\n```\n")
    page = tmp_path / "page.md"
    page.write_text(
        "[ok](other.md#which-bwrap) [gone](missing.md) [no heading](other.md#not-a-heading)\n"
        "`[in code](nowhere.md)` [web](https://example.org/x.md)\n"
    )
    assert broken_links(page, root=tmp_path) == [
        "missing.md: no file missing.md",
        "other.md#not-a-heading: no heading #not-a-heading in other.md",
    ]


# A path of this checkout named in backticks (`tests/sandbox/test_containment.py`), not a pattern.
FOLDERS = "tests|benchmarks|scripts|tui_engineer|docs|screenshots|\\.ci"
NAMED_PATH = re.compile(rf"`((?:{FOLDERS})/[^`\s]*)`")


@pytest.mark.parametrize("path", documents(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_file_of_the_checkout_a_document_names_exists(path: Path):
    named = {m.group(1).split("::")[0] for m in NAMED_PATH.finditer(path.read_text("utf-8"))}
    missing = sorted(p for p in named if not re.search(r"[*<>{}…]", p) and not (ROOT / p).exists())
    assert missing == [], f"{path.name} names files that are not there (moved?)"
