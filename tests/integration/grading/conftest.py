from __future__ import annotations

from pathlib import Path


def edited_patch(repo: Path, tmp: Path, edits: list[tuple[str, str, str]]) -> str:
    """A patch made the way an agent makes one: edit files in a clone of the base commit, `git diff`."""
    import subprocess

    clone = tmp / f"clone-{len(list(tmp.iterdir()))}"
    subprocess.run(["git", "clone", "-q", str(repo), str(clone)], check=True)
    for rel, old, new in edits:
        path = clone / rel
        text = path.read_text()
        assert old in text, (rel, old)
        path.write_text(text.replace(old, new))
    return subprocess.run(["git", "-C", str(clone), "diff"], check=True, capture_output=True, text=True).stdout
