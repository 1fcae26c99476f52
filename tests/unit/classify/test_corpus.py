"""The classifier on real outputs: the corpus of tests/data/corpus (replies copied from public bug reports and
real SWE-bench agent trajectories; docs/trust/classifier.md). Issue 30's bars: every corrupted reply of the
corpus detected, at most 0.5% of the clean turns flagged. The corpus is third-party text kept outside git
history (MANIFEST.jsonl is committed, pinned to shared/corpus/corpus-rebuilt.jsonl.gz): CI lays a copy of
shared/ beside its clone, so there the corpus must be found; a developer without it sees the tests skipped.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from eval.classify.corpus import find_corpus, load_corpus, score_corpus

REPO = Path(__file__).resolve().parents[3]
MANIFEST = REPO / "tests" / "data" / "corpus" / "MANIFEST.jsonl"
CORPUS = find_corpus(REPO)
# What the pinned copy holds (shared/corpus/README.md): 37 corrupted and 2 clean replies, 125 trajectories.
MIN_CORRUPT = 37
MIN_TRAJECTORY_TURNS = 9_700
IN_CI = bool(os.environ.get("CI"))


def require_corpus() -> Path:
    if CORPUS is None:
        if IN_CI:  # CI has shared/ beside its clone: a missing corpus is a broken pin, not an absent extra
            pytest.fail("corpus not found: ../shared/corpus/corpus-rebuilt.jsonl.gz beside the clone")
        pytest.skip("corpus not present (set SPECQUAL_CORPUS; see tests/data/corpus/README.md)")
    return CORPUS


def manifest() -> list[dict]:
    return [json.loads(line) for line in MANIFEST.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_the_manifest_describes_a_corpus_big_enough_to_measure():
    rows = manifest()
    corrupt = [r for r in rows if r["kind"] == "corrupt"]
    trajectory_turns = sum(r["turns"] for r in rows if r["kind"] == "trajectory")
    assert len(corrupt) >= MIN_CORRUPT and trajectory_turns >= MIN_TRAJECTORY_TURNS
    assert all(r["source"].startswith(("https://github.com/", "github:")) for r in rows)
    assert all(r["reason"] and r["split"] in ("dev", "test") for r in rows)
    assert len({r["id"] for r in rows}) == len(rows)


@pytest.fixture(scope="module")
def corpus() -> list[dict]:
    return load_corpus(require_corpus())


def test_the_corpus_is_the_one_the_manifest_describes(corpus):
    import sys

    sys.path.insert(0, str(MANIFEST.parent))
    from build_corpus import row_digest  # the digest the builder wrote

    assert {r["id"]: row_digest(r) for r in corpus} == {m["id"]: m["sha256"] for m in manifest()}


def test_thresholds_on_the_real_corpus(corpus):
    score = score_corpus(corpus)
    assert score.corrupt_turns >= MIN_CORRUPT and score.clean_turns >= MIN_TRAJECTORY_TURNS
    assert score.recall == 1.0, score.misses
    assert score.clean_flag_rate <= 0.005, score.false_alarms[:20]
