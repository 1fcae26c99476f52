"""README.md is the front door: the first two commands stay first (CI runs the second), it stays short, and no
relative link in it or in docs/ points at nothing."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
MAX_LINES = 300
# [text](target) outside code spans; the target ends at whitespace or the closing parenthesis.
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
HEADING = re.compile(r"^#+\s+(.*)$")


def _prose(text: str) -> str:
    """The text without fenced code blocks and inline code, where a bracket is not a link."""
    text = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)
    return re.sub(r"`[^`\n]*`", "", text)


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    heading = re.sub(r"[`*_]", "", heading.strip().lower())
    return re.sub(r"[^\w\- ]", "", heading).replace(" ", "-")


def _anchors(path: Path) -> set[str]:
    return {_slug(m.group(1)) for line in _prose(path.read_text()).splitlines() if (m := HEADING.match(line))}


def _broken_links(path: Path, root: Path = ROOT) -> list[str]:
    broken = []
    for target in LINK.findall(_prose(path.read_text())):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto: ... are not checked here
            continue
        file_part, _, anchor = target.partition("#")
        dest = (path.parent / file_part).resolve() if file_part else path
        if not dest.exists():
            broken.append(f"{path.relative_to(root)}: {target} (no such file)")
        elif anchor and dest.suffix == ".md" and anchor not in _anchors(dest):
            broken.append(f"{path.relative_to(root)}: {target} (no such heading)")
    return broken


def test_readme_starts_with_setup_and_test_commands() -> None:
    first_block = README.read_text().split("```bash", 1)[1].split("```", 1)[0]
    commands = [line.split("#")[0].strip() for line in first_block.splitlines()]
    assert [c for c in commands if c][:2] == ["bash scripts/demo.sh", "bash scripts/test.sh"]


def test_readme_is_short() -> None:
    lines = len(README.read_text().splitlines())
    assert lines <= MAX_LINES, f"README.md has {lines} lines (at most {MAX_LINES}): move reference material to docs/"


def test_relative_links_in_readme_and_docs_resolve() -> None:
    pages = [README, *sorted((ROOT / "docs").rglob("*.md"))]
    broken = [b for page in pages for b in _broken_links(page)]
    assert not broken, "\n".join(broken)


def test_link_checker_sees_a_broken_link(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("# Top\n[ok](#top) [gone](missing.md) [bad](#nowhere) `[code](x.md)`\n")
    assert _broken_links(page, tmp_path) == [
        "page.md: missing.md (no such file)",
        "page.md: #nowhere (no such heading)",
    ]
