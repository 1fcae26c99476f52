"""The classifier on real outputs: the corpus of tests/data/corpus (replies copied from public bug reports and
real SWE-bench agent trajectories; docs/trust/classifier.md). Thresholds of issue 18: at least 90% of the corrupted
turns detected, at most 1% of the clean turns flagged. The corpus is third-party text kept outside git history
(MANIFEST.jsonl is committed): the test runs where the corpus is present and checks it is the one the
manifest describes.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from eval.classify.corpus import find_corpus, load_corpus, score_corpus

REPO = Path(__file__).resolve().parents[3]
MANIFEST = REPO / "tests" / "data" / "corpus" / "MANIFEST.jsonl"
CORPUS = find_corpus(REPO)
needs_corpus = pytest.mark.skipif(
    CORPUS is None, reason="corpus.jsonl.gz not present (set SPECQUAL_CORPUS; see tests/data/corpus/README.md)"
)


def manifest() -> list[dict]:
    return [json.loads(line) for line in MANIFEST.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_the_manifest_describes_a_corpus_big_enough_to_measure():
    rows = manifest()
    corrupt = [r for r in rows if r["kind"] == "corrupt"]
    trajectory_turns = sum(r["turns"] for r in rows if r["kind"] == "trajectory")
    assert len(corrupt) >= 40 and trajectory_turns >= 1000
    assert all(r["source"].startswith(("https://github.com/", "github:")) for r in rows)
    assert all(r["reason"] and r["split"] in ("dev", "test") for r in rows)
    assert len({r["id"] for r in rows}) == len(rows)


@pytest.fixture(scope="module")
def corpus() -> list[dict]:
    assert CORPUS is not None
    return load_corpus(CORPUS)


@needs_corpus
def test_the_corpus_is_the_one_the_manifest_describes(corpus):
    import sys

    sys.path.insert(0, str(MANIFEST.parent))
    from build_corpus import row_digest  # the digest the builder wrote

    assert {r["id"]: row_digest(r) for r in corpus} == {m["id"]: m["sha256"] for m in manifest()}


@needs_corpus
def test_thresholds_on_the_real_corpus(corpus):
    score = score_corpus(corpus)
    assert score.corrupt_turns >= 40 and score.clean_turns >= 1000
    assert score.recall >= 0.90, score.misses
    assert score.clean_flag_rate <= 0.01, score.false_alarms[:20]
