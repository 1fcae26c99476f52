"""Build the real-world classifier corpus (corpus.jsonl.gz) from its two kinds of sources.

1. Single replies copied from public issue and pull-request threads (a JSONL of rows, one per reply, each with
   its source URL, expected labels and the reason).
2. Real SWE-bench agent trajectories (mini-swe-agent with deepseek-chat, tool calling), read with `git show`
   from a local git mirror of github.com/SWE-agent/mini-swe-agent at the commits named in TRAJECTORY_SOURCES,
   and, given a mirror of github.com/princeton-nlp/SWE-agent, the GPT-4 trajectories of its test data (text
   commands, no tools). They are the hard negatives: every turn is expected clean.

    python tests/data/corpus/build_corpus.py ISSUE_ROWS.jsonl MIRROR_GIT_DIR OUT.jsonl.gz [SWE_AGENT_MIRROR]

Each trajectory row keeps its provenance (repo, commit, path) and the OpenAI request context (tools, prompt).
Next to OUT it writes MANIFEST.jsonl: per row its id, source, split, kind, expected labels, reason, number of
turns and the SHA-256 of the row as written, and no copied text. The manifest is what the repository
carries (tests/data/corpus/MANIFEST.jsonl); the corpus itself is third-party text and is kept outside the
repository's history (docs/trust/classifier.md says where the tests look for it).
"""

from __future__ import annotations

import gzip
import hashlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO = "SWE-agent/mini-swe-agent"
# (commit, directory of *.traj.json): two deepseek-chat evaluation runs stored in the repository's history.
TRAJECTORY_SOURCES = (
    ("ec0e8e849fea5b1619deb1753007201000904672", "output/deepseek_chat_dev/"),
    ("3c7d1d7f8fb8630b187744215f67470b6755f60c", "output/deepseek_bench1/"),
)
BASH_TOOL = {
    "type": "function",
    "function": {
        "name": "bash",
        "parameters": {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]},
    },
}


def git(mirror: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(mirror), *args], check=True, capture_output=True, text=True).stdout


def split_of(key: str) -> str:
    """A fixed, content-independent split: about one third of the sources are the test part."""
    return "test" if int(hashlib.sha256(key.encode()).hexdigest(), 16) % 3 == 0 else "dev"


def trajectory_row(mirror: Path, commit: str, path: str) -> dict[str, Any]:
    data = json.loads(git(mirror, "show", f"{commit}:{path}"))
    messages = data["messages"]
    first_assistant = next(i for i, m in enumerate(messages) if m["role"] == "assistant")
    prompt = [{"role": m["role"], "content": m["content"]} for m in messages[:first_assistant]]
    turns: list[dict[str, Any]] = []
    for m in messages[first_assistant:]:
        if m["role"] == "assistant":
            choice = (((m.get("extra") or {}).get("response") or {}).get("choices") or [{}])[0]
            turns.append(
                {
                    "content": m.get("content"),
                    "tool_calls": m.get("tool_calls") or [],
                    "finish_reason": choice.get("finish_reason"),
                    "observation": "",
                }
            )
        elif turns:  # tool results and user feedback go to the turn they answer
            turns[-1]["observation"] += str(m.get("content") or "")
    instance = data.get("instance_id") or Path(path).parent.name
    return {
        "id": f"traj:{commit[:8]}:{instance}",
        "source": f"github:{REPO}@{commit}:{path}",
        "split": split_of(instance),
        "kind": "trajectory",
        "labels": [],
        "reason": "real SWE-bench agent trajectory (deepseek-chat, mini-swe-agent): hard negative",
        "request": {"tools": [BASH_TOOL], "messages": prompt},
        "turns": turns,
    }


# SWE-agent's own test data: GPT-4 trajectories of its text-command agent (commands in a fenced block, no tools).
SWE_AGENT_REPO = "princeton-nlp/SWE-agent"
SWE_AGENT_FOLDER = "tests/test_data/trajectories/"


def swe_agent_row(mirror: Path, commit: str, path: str) -> dict[str, Any]:
    history = json.loads(git(mirror, "show", f"{commit}:{path}"))["history"]
    first = next(i for i, m in enumerate(history) if m.get("role") == "assistant")
    prompt = [{"role": m["role"], "content": m.get("content") or ""} for m in history[:first]]
    turns: list[dict[str, Any]] = []
    for m in history[first:]:
        if m.get("role") == "assistant":
            turns.append({"content": m.get("content"), "tool_calls": [], "finish_reason": "stop", "observation": ""})
        elif turns:
            turns[-1]["observation"] += str(m.get("content") or "")
    key = Path(path).stem
    return {
        "id": f"traj:swe-agent:{key}",
        "source": f"github:{SWE_AGENT_REPO}@{commit}:{path}",
        "split": split_of(key),
        "kind": "trajectory",
        "labels": [],
        "reason": "real agent trajectory (GPT-4, SWE-agent text commands, no tools): hard negative",
        "request": {"messages": prompt},
        "turns": turns,
    }


def swe_agent_rows(mirror: Path) -> list[dict[str, Any]]:
    commit = git(mirror, "rev-parse", "HEAD").strip()
    listing = git(mirror, "ls-tree", "-r", "--name-only", commit, SWE_AGENT_FOLDER).split("\n")
    paths = sorted(p for p in listing if p.endswith(".traj") and "/gpt4__" in p)
    return [swe_agent_row(mirror, commit, p) for p in paths]


def trajectory_rows(mirror: Path) -> list[dict[str, Any]]:
    rows = []
    for commit, folder in TRAJECTORY_SOURCES:
        listing = git(mirror, "ls-tree", "-r", "--name-only", commit, folder).split("\n")
        for path in sorted(p for p in listing if p.endswith(".traj.json")):
            try:
                rows.append(trajectory_row(mirror, commit, path))
            except subprocess.CalledProcessError:
                print(f"skipped {commit[:8]}:{path} (not in the mirror: snapshots lack files of 4 MiB and more)")
    return rows


def row_digest(row: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(row, ensure_ascii=False, sort_keys=True).encode()).hexdigest()


def manifest_entry(row: dict[str, Any]) -> dict[str, Any]:
    keys = ("id", "source", "split", "kind", "labels", "reason")
    return {**{k: row.get(k) for k in keys}, "turns": len(row.get("turns", [])) or 1, "sha256": row_digest(row)}


def main(issue_rows: Path, mirror: Path, out: Path, swe_agent_mirror: Path | None = None) -> None:
    rows = [json.loads(line) for line in issue_rows.read_text(encoding="utf-8").splitlines() if line.strip()]
    rows += trajectory_rows(mirror)
    if swe_agent_mirror is not None:
        rows += swe_agent_rows(swe_agent_mirror)
    with gzip.open(out, "wt", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    manifest = out.parent / "MANIFEST.jsonl"
    manifest.write_text("".join(json.dumps(manifest_entry(r), ensure_ascii=False) + "\n" for r in rows))
    turns = sum(len(r.get("turns", [])) or 1 for r in rows)
    print(f"{len(rows)} rows, {turns} assistant turns -> {out} (+ {manifest.name})")


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3]), Path(sys.argv[4]) if len(sys.argv) > 4 else None)
