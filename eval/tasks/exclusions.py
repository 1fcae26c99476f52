"""The exclusion list: instances left out of every cohort alike, each with a reason, under a version header.

File format (UTF-8 text):

    # specqual-exclusions v1 version=2026-12-02
    # comment lines and blank lines are ignored
    django__django-10097    gold patch fails: FAIL_TO_PASS test_x failed 3/3
    specqual__calc-1        flaky: PASS_TO_PASS results differ between runs

The first line is the header: format `v1` and a `version=` label that names this edition of the list (it is
recorded with the run, so two runs can be checked to have used the same list). Every entry is an instance id,
whitespace, and a non-empty reason.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path

from eval.spec.errors import SpecError

HEADER = re.compile(r"^# specqual-exclusions v1 version=(?P<version>\S+)\s*$")


class ExclusionError(SpecError):
    """The exclusion list is malformed; the message names the file and line."""


@dataclass(frozen=True)
class ExclusionList:
    version: str
    reasons: dict[str, str] = field(default_factory=dict)
    sha256: str = ""

    def __contains__(self, instance_id: object) -> bool:
        return instance_id in self.reasons


def parse(text: str, source: str = "<exclusions>") -> ExclusionList:
    lines = text.splitlines()
    match = HEADER.match(lines[0]) if lines else None
    if match is None:
        raise ExclusionError("line 1", "first line must be '# specqual-exclusions v1 version=<label>'", source)
    reasons: dict[str, str] = {}
    for number, line in enumerate(lines[1:], start=2):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        parts = stripped.split(None, 1)
        if len(parts) < 2 or not parts[1].strip():
            raise ExclusionError(f"line {number}", f"{parts[0]!r} has no reason (instance_id, then a reason)", source)
        if parts[0] in reasons:
            raise ExclusionError(f"line {number}", f"{parts[0]!r} is listed twice", source)
        reasons[parts[0]] = parts[1].strip()
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    return ExclusionList(match.group("version"), reasons, digest)


def read(path: Path) -> ExclusionList:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as e:
        raise ExclusionError("exclude", f"cannot read the exclusion list: {e.strerror or e}", str(path)) from e
    return parse(text, str(path))


def render(version: str, reasons: dict[str, str]) -> str:
    """The text of an exclusion list (sorted by instance id; reasons kept on one line)."""
    out = [f"# specqual-exclusions v1 version={version}"]
    for instance_id in sorted(reasons):
        reason = " ".join(reasons[instance_id].split())
        out.append(f"{instance_id}\t{reason}")
    return "\n".join(out) + "\n"
