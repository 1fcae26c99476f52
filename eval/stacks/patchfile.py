"""Apply unified diffs (forward or reverse) in pure Python, exactly: no fuzz, a rejected hunk is an error.

Patches in cohort files are `-p1` style (`a/vllm/...`, paths relative to site-packages). Applying them here
instead of shelling out to `patch` means the same behaviour everywhere, and a hunk that does not apply is
reported with its text, so the operator sees which change no longer matches the installed vLLM.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


class PatchError(Exception):
    """A patch is malformed, names a missing file, or has a hunk that does not apply."""


@dataclass
class Hunk:
    old_start: int
    new_start: int
    header: str
    lines: list[str] = field(default_factory=list)  # each starts with ' ', '-' or '+'

    def sides(self, reverse: bool) -> tuple[list[str], list[str]]:
        """(lines expected in the file, lines that replace them)."""
        old = [ln[1:] for ln in self.lines if ln[0] in " -"]
        new = [ln[1:] for ln in self.lines if ln[0] in " +"]
        return (new, old) if reverse else (old, new)

    def text(self) -> str:
        return "\n".join([self.header, *self.lines])


@dataclass
class FilePatch:
    old_path: str
    new_path: str
    hunks: list[Hunk] = field(default_factory=list)

    def target(self, strip: int = 1) -> str:
        """The path the patch edits, after removing `strip` leading components (like `patch -p1`)."""
        path = self.new_path if self.new_path != "/dev/null" else self.old_path
        parts = path.split("/")
        return "/".join(parts[strip:])


def parse(text: str) -> list[FilePatch]:
    """Parse a unified diff; text before the first `---` line (a description) is ignored."""
    files: list[FilePatch] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("--- ") and i + 1 < len(lines) and lines[i + 1].startswith("+++ "):
            files.append(FilePatch(_path(line), _path(lines[i + 1])))
            i += 2
            continue
        m = _HUNK.match(line)
        if m:
            if not files:
                raise PatchError(f"hunk before any file header: {line}")
            hunk, i = _read_hunk(lines, i, m)
            files[-1].hunks.append(hunk)
            continue
        i += 1
    if not files or not any(f.hunks for f in files):
        raise PatchError("no file changes found (is this a unified diff?)")
    return files


def _path(header: str) -> str:
    return header[4:].split("\t")[0].strip()


def _read_hunk(lines: list[str], i: int, m: re.Match[str]) -> tuple[Hunk, int]:
    old_len = int(m.group(2) or 1)
    new_len = int(m.group(4) or 1)
    hunk = Hunk(old_start=int(m.group(1)), new_start=int(m.group(3)), header=lines[i])
    i += 1
    seen_old = seen_new = 0
    while i < len(lines) and (seen_old < old_len or seen_new < new_len):
        ln = lines[i] or " "  # some tools strip the space of an empty context line
        if ln.startswith("\\"):
            i += 1
            continue
        if ln[0] not in " -+":
            raise PatchError(f"malformed hunk line {i + 1}: {ln!r}")
        hunk.lines.append(ln)
        seen_old += ln[0] in " -"
        seen_new += ln[0] in " +"
        i += 1
    if seen_old != old_len or seen_new != new_len:
        raise PatchError(f"truncated hunk {hunk.header}")
    return hunk, i


def _find(content: list[str], expected: list[str], hint: int) -> int | None:
    """Index where `expected` matches exactly, nearest to `hint` (hunks may move by an offset)."""
    n = len(expected)
    limit = len(content) - n
    for delta in range(len(content) + 1):
        for pos in (hint - delta, hint + delta) if delta else (hint,):
            if 0 <= pos <= limit and content[pos : pos + n] == expected:
                return pos
    return None


def apply_file(content: str, fp: FilePatch, reverse: bool, label: str) -> str:
    """The file content after applying every hunk of `fp`; raise PatchError naming the rejected hunk."""
    lines = content.splitlines()
    trailing_newline = content.endswith("\n")
    offset = 0
    for hunk in fp.hunks:
        expected, replacement = hunk.sides(reverse)
        start = hunk.new_start if reverse else hunk.old_start
        hint = max(start - 1 + offset, 0)
        pos = _find(lines, expected, hint)
        if pos is None:
            direction = "reverse" if reverse else "forward"
            raise PatchError(f"{label}: hunk does not apply ({direction}) to {fp.target()}:\n{hunk.text()}")
        lines[pos : pos + len(expected)] = replacement
        offset += (pos - hint) + len(replacement) - len(expected)
    return "\n".join(lines) + ("\n" if trailing_newline else "")


def apply_patch(root: Path, patch_text: str, reverse: bool, label: str, strip: int = 1) -> list[str]:
    """Apply a patch under `root` (every file's hunks checked before any write); return edited paths.

    Files are replaced (write to a new inode), never edited in place, so a hard-linked overlay never
    changes the installation it links to.
    """
    planned: dict[str, str] = {}
    for fp in parse(patch_text):
        rel = fp.target(strip)
        if ".." in Path(rel).parts or Path(rel).is_absolute():
            raise PatchError(f"{label}: refuses path outside the tree: {rel}")
        path = root / rel
        current = planned.get(rel)
        if current is None:
            if not path.is_file():
                raise PatchError(f"{label}: file to patch not found: {rel}")
            current = path.read_text(encoding="utf-8")
        planned[rel] = apply_file(current, fp, reverse, label)
    for rel, text in planned.items():
        path = root / rel
        tmp = path.with_name(path.name + ".specqual-tmp")
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(path)
    return sorted(planned)
