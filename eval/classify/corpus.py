"""Score the classifier on a labelled corpus of real outputs (tests/data/corpus, docs/trust/classifier.md).

A corpus is JSONL (optionally gzipped), one row per source item:
  - a reply: `{"id", "source", "split", "kind": "corrupt"|"clean", "labels": [expected], "reason",
    "request": {"tools", "tool_choice", "messages"}, "response": {assistant message}}`;
  - a trajectory: `{"id", "source", "split", "kind": "trajectory", "labels": [], "request": {...},
    "turns": [trajectory.jsonl records]}`: every turn is expected clean (real agent runs, hard negatives).
Each reply is classified with the tools its request offered (none given: nothing assumed); each trajectory
with its tools and prompt, turn by turn. A turn is *flagged* when it gets any label but `truncated` (a fact
about the reply, not a finding).
"""

from __future__ import annotations

import gzip
import json
import os
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from eval.classify.context import Context, History
from eval.classify.messages import Exchange, classify_exchange, parse_exchange
from eval.classify.trajectory import classify_trajectory

NOT_A_FLAG = frozenset({"truncated"})
CORPUS_NAME = "corpus.jsonl.gz"
# The copy the manifest is pinned to: shared/corpus/ beside the checkout (CI lays a copy of shared/ beside its
# fresh clone; third-party text stays out of the repository).
SHARED_CORPUS = ("shared", "corpus", "corpus-rebuilt.jsonl.gz")


def find_corpus(repo: Path) -> Path | None:
    """Where the real-world corpus is: $SPECQUAL_CORPUS, tests/data/corpus/corpus.jsonl.gz of the checkout, or
    shared/corpus/corpus-rebuilt.jsonl.gz beside the checkout (CI's copy). The corpus is third-party text kept
    outside git history; the repository carries its MANIFEST.jsonl (ids, sources, labels, digests)."""
    env = os.environ.get("SPECQUAL_CORPUS")
    candidates = [Path(env)] if env else []
    candidates += [repo / "tests" / "data" / "corpus" / CORPUS_NAME, repo.parent.joinpath(*SHARED_CORPUS)]
    return next((p for p in candidates if p.is_file()), None)


def load_corpus(path: Path) -> list[dict[str, Any]]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def flags(labels: Iterable[str]) -> list[str]:
    return [label for label in labels if label not in NOT_A_FLAG]


@dataclass
class Score:
    """Counts over the rows scored; `misses` and `false_alarms` name the rows for the report."""

    corrupt_turns: int = 0
    detected: int = 0
    label_total: Counter[str] = field(default_factory=Counter)
    label_found: Counter[str] = field(default_factory=Counter)
    clean_turns: int = 0
    clean_flagged: int = 0
    trajectories: int = 0
    trajectories_flagged: int = 0
    flagged_labels: Counter[str] = field(default_factory=Counter)
    misses: list[str] = field(default_factory=list)
    false_alarms: list[str] = field(default_factory=list)

    @property
    def recall(self) -> float:
        return self.detected / self.corrupt_turns if self.corrupt_turns else 1.0

    @property
    def clean_flag_rate(self) -> float:
        return self.clean_flagged / self.clean_turns if self.clean_turns else 0.0

    @property
    def trajectory_flag_rate(self) -> float:
        return self.trajectories_flagged / self.trajectories if self.trajectories else 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "corrupt_turns": self.corrupt_turns,
            "detected": self.detected,
            "recall": round(self.recall, 4),
            "recall_per_label": {k: f"{self.label_found[k]}/{n}" for k, n in sorted(self.label_total.items())},
            "clean_turns": self.clean_turns,
            "clean_turns_flagged": self.clean_flagged,
            "clean_flag_rate": round(self.clean_flag_rate, 5),
            "clean_trajectories": self.trajectories,
            "clean_trajectories_flagged": self.trajectories_flagged,
            "trajectory_flag_rate": round(self.trajectory_flag_rate, 4),
            "labels_on_clean": dict(self.flagged_labels),
            "misses": self.misses,
            "false_alarms": self.false_alarms,
        }


def _exchange(row: dict[str, Any]) -> Exchange:
    return parse_exchange({"request": row.get("request") or {}, "response": row.get("response")})


def score_reply(row: dict[str, Any], score: Score) -> None:
    got = flags(classify_exchange(_exchange(row), Context.build(tools_known=False))["labels"])
    expected = row.get("labels") or []
    if row.get("kind") == "corrupt":
        score.corrupt_turns += 1
        score.detected += bool(got)
        for label in expected:
            score.label_total[label] += 1
            score.label_found[label] += label in got
        if not got or not set(expected) <= set(got):
            score.misses.append(f"{row['id']}: expected {expected}, got {got}")
    else:
        score.clean_turns += 1
        score.clean_flagged += bool(got)
        score.flagged_labels.update(got)
        if got:
            score.false_alarms.append(f"{row['id']}: {got}")


def score_trajectory(row: dict[str, Any], score: Score) -> None:
    exchange = _exchange(row)
    ctx = Context.build(tools=exchange.tools, tools_known=exchange.tools is not None)
    ctx.tool_choice = exchange.tool_choice
    result = classify_trajectory(row.get("turns") or [], ctx, prompt=exchange.prompt)
    ctx.history = History()
    flagged = 0
    for turn in result.turns:
        got = flags(turn.labels)
        flagged += bool(got)
        score.flagged_labels.update(got)
        if got:
            score.false_alarms.append(f"{row['id']} turn {turn.turn}: {got}")
    score.clean_turns += result.n_turns
    score.clean_flagged += flagged
    score.trajectories += 1
    score.trajectories_flagged += bool(flagged)


def score_corpus(rows: Iterable[dict[str, Any]], split: str | None = None) -> Score:
    """Score the rows of one split (`dev`, `test`) or all of them."""
    score = Score()
    for row in rows:
        if split is not None and row.get("split") != split:
            continue
        if row.get("kind") == "trajectory":
            score_trajectory(row, score)
        else:
            score_reply(row, score)
    return score
