"""Benchmark: the classifier's error rates on the real-world corpus (tests/data/corpus, docs/trust/classifier.md).

    .venv/bin/python benchmarks/bench_corpus.py                          # corpus found as the tests find it
    .venv/bin/python benchmarks/bench_corpus.py --corpus PATH --misses   # a given corpus; list misses and alarms
    .venv/bin/python benchmarks/bench_corpus.py --real-text [DIR ...]   # false alarms on real code and languages
    .venv/bin/python benchmarks/bench_corpus.py --wild FILE [--split dev]  # held-out real replies (outside the repo)
    .venv/bin/python benchmarks/bench_corpus.py --markers-in-code DIR ...  # code that handles template markers
    .venv/bin/python benchmarks/bench_corpus.py --short-pieces          # the function-word salad score on short text

Prints, per split (dev: what the detectors were developed on; test: looked at once at the end; all), the
corrupted replies detected (any label but `truncated`) with each label's recall, the clean turns flagged, and
the share of clean real trajectories with at least one flagged turn.

`--real-text` measures false alarms on real text that legitimately holds the characters the detectors look for
(byte-level letters such as Ġ, Ċ, ł, ħ; `▁`; `<0x..>`; markup; repetition), classified as replies (format `auto`,
no tools), in pieces of 3,000 characters: the Python standard library's sources (code), the Python reference
of `pydoc_data.topics` (English prose) and every gettext catalog (`*.mo`: translated messages, country and
language names in over a hundred languages) under /usr/share/locale and the DIRs given.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from eval.classify.corpus import find_corpus, flags, load_corpus, score_corpus

REPO = Path(__file__).resolve().parents[1]


def report(rows: list[dict[str, Any]], misses: bool) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for split in ("dev", "test", None):
        t0 = time.process_time()
        score = score_corpus(rows, split).to_json()
        score["cpu_s"] = round(time.process_time() - t0, 2)
        if not misses:
            score.pop("misses")
            score.pop("false_alarms")
        out[split or "all"] = score
    return out


CHUNK = 3000


def _chunks(text: str) -> list[str]:
    return [text[i : i + CHUNK] for i in range(0, len(text), CHUNK)]


def _catalog_text(path: Path) -> str:
    import gettext

    try:
        with path.open("rb") as f:
            catalog = gettext.GNUTranslations(f)
    except (OSError, UnicodeDecodeError, ValueError, KeyError, IndexError):  # a catalog gettext cannot read
        return ""
    return "\n".join(v for v in catalog._catalog.values() if isinstance(v, str))  # type: ignore[attr-defined]


def real_text(dirs: list[Path]) -> dict[str, Any]:
    """Pieces of real code, prose and translations classified as replies; flagged pieces per source."""
    import sysconfig
    from pydoc_data.topics import topics

    from eval.classify.context import Context
    from eval.classify.messages import classify_exchange, parse_exchange

    stdlib = Path(sysconfig.get_paths()["stdlib"])
    sources: dict[str, list[str]] = {"python stdlib sources": [], "pydoc_data.topics": [], "gettext catalogs": []}
    for f in sorted(stdlib.rglob("*.py")):
        sources["python stdlib sources"] += _chunks(f.read_text(encoding="utf-8", errors="replace"))
    sources["pydoc_data.topics"] = _chunks("\n\n".join(topics[k] for k in sorted(topics)))
    catalogs = sorted({p for d in [Path("/usr/share/locale"), *dirs] if d.is_dir() for p in d.rglob("*.mo")})
    for path in catalogs:
        sources["gettext catalogs"] += _chunks(_catalog_text(path))
    out: dict[str, Any] = {"gettext catalog files": len(catalogs)}
    for name, pieces in sources.items():
        flagged: list[str] = []
        labels: dict[str, int] = {}
        for piece in pieces:
            exchange = parse_exchange({"role": "assistant", "content": piece})
            got = flags(classify_exchange(exchange, Context.build(tools_known=False))["labels"])
            for label in got:
                labels[label] = labels.get(label, 0) + 1
            if got:
                flagged.append(f"{got}: {piece[:80]!r}")
        out[name] = {"pieces": len(pieces), "flagged": len(flagged), "labels": labels, "examples": flagged[:10]}
    return out


SHORT = 600


def short_pieces() -> dict[str, Any]:
    """False alarms of the function-word salad score (eval/classify/wordpairs.py), which reads only fields with
    fewer than 64 tokens of prose (few of --real-text's pieces of 3,000 characters), on pieces of 600 characters of
    real text it was neither built nor calibrated on: the `*.py` files under the standard library's directory (code
    and comments read as a reply) and the plain-text files of /usr/share/doc (READMEs, changelogs, licences, logs)."""
    import gzip
    import sysconfig

    from eval.classify.salad import thresholds
    from eval.classify.wordpairs import implausible_pairs

    def text_of(path: Path) -> str:
        if path.suffix == ".py":
            return path.read_text(encoding="utf-8", errors="replace")
        raw = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
        return "" if b"\0" in raw[:4096] else raw.decode("utf-8")  # binary files are not text

    limit = thresholds()["implausible_pairs"]
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    docs = [p for p in sorted(Path("/usr/share/doc").rglob("*")) if p.is_file() and p.stat().st_size < 2_000_000]
    out: dict[str, Any] = {"threshold": limit}
    for name, files in (("python *.py", sorted(stdlib.rglob("*.py"))), ("/usr/share/doc", docs)):
        pieces = flagged = 0
        examples: list[str] = []
        for path in files:
            try:
                text = text_of(path)
            except (OSError, UnicodeDecodeError, EOFError, gzip.BadGzipFile):
                continue
            for at in range(0, len(text), SHORT):
                pieces += 1
                if (score := implausible_pairs(text[at : at + SHORT])) < limit:
                    flagged += 1
                    examples.append(f"{score:.1f} {path}: {text[at : at + SHORT][-120:]!r}")
        out[name] = {"pieces": pieces, "flagged": flagged, "examples": examples[:10]}
    return out


def markers_in_code(dirs: list[Path]) -> dict[str, Any]:
    """Hard negatives for the template markers of classifier 1.4 (`[INST]`, `<<SYS>>`, `[AVAILABLE_TOOLS]`,
    `<extra_id_0>`, ...): the pieces of 3,000 characters of the `*.py`, `*.jinja` and `*.md` files under DIRs (a
    vLLM environment: transformers, mistral_common, vLLM's parsers) that hold one, classified as replies, unfenced;
    a piece counts as flagged when a `leaked_special_token` span is one of these markers."""
    import re

    from eval.classify.context import Context
    from eval.classify.messages import classify_exchange, parse_exchange
    from eval.classify.special import CUT_MARKER, TEMPLATE

    marker = re.compile(f"{TEMPLATE}|{CUT_MARKER}")
    files = sorted({f for d in dirs for ext in ("py", "jinja", "md") for f in d.rglob(f"*.{ext}") if f.is_file()})
    pieces = 0
    flagged: list[str] = []
    for f in files:
        if f.stat().st_size > 2_000_000:
            continue
        for piece in _chunks(f.read_text(encoding="utf-8", errors="replace")):
            if not marker.search(piece):
                continue
            pieces += 1
            out = classify_exchange(
                parse_exchange({"role": "assistant", "content": piece}), Context.build(tools_known=False)
            )
            hits = [
                e
                for e in out["evidence"]
                if e["label"] == "leaked_special_token" and marker.fullmatch(e["text"].strip())
            ]
            if hits:
                flagged.append(
                    f"{f.name}: {hits[0]['text']!r} in {piece[max(0, hits[0]['start'] - 60) : hits[0]['end'] + 30]!r}"
                )
    return {"files": len(files), "pieces_with_a_marker": pieces, "flagged": len(flagged), "examples": flagged[:20]}


def wild(path: Path, split: str | None) -> dict[str, Any]:
    """Replies of real corruption and real clean text kept outside the repository (third-party text), one JSON
    object a line: `id`, `source` (URL), `split` (`dev` or `heldout`, fixed when the row was collected),
    `expect` (labels; [] for a clean reply) and `message` (a `classify-messages` line: the assistant message
    with its request context). A corrupted reply is found when it gets any error label; a clean one is flagged
    when it gets any label but `truncated`."""
    from eval.classify.context import Context
    from eval.classify.messages import classify_message
    from eval.classify.table import SEVERITY

    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    rows = [r for r in rows if split is None or r["split"] == split]
    found = expected = clean_flagged = 0
    per_label: dict[str, list[int]] = {}
    misses: list[str] = []
    alarms: list[str] = []
    for row in rows:
        labels = classify_message(row["message"], Context.build(tools_known=False))["labels"]
        if row["expect"]:
            hit = any(SEVERITY[label] == "error" for label in labels)
            found += hit
            expected += all(label in labels for label in row["expect"])
            for label in row["expect"]:
                per_label.setdefault(label, [0, 0])[1] += 1
                per_label[label][0] += label in labels
            if not hit:
                misses.append(f"{row['id']} ({row['source']}): got {labels}")
        elif flags(labels):
            clean_flagged += 1
            alarms.append(f"{row['id']} ({row['source']}): {labels}")
    corrupt = sum(1 for r in rows if r["expect"])
    return {
        "split": split or "all",
        "corrupted_found": f"{found}/{corrupt}",
        "corrupted_with_expected_labels": f"{expected}/{corrupt}",
        "clean_flagged": f"{clean_flagged}/{len(rows) - corrupt}",
        "recall_per_label": {k: f"{v[0]}/{v[1]}" for k, v in sorted(per_label.items())},
        "misses": misses,
        "false_alarms": alarms,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, default=None, help="corpus.jsonl(.gz); default: as the tests find it")
    parser.add_argument("--misses", action="store_true", help="list the missed rows and the flagged clean turns")
    parser.add_argument("--real-text", nargs="*", type=Path, default=None, metavar="DIR", help=real_text.__doc__)
    parser.add_argument("--wild", type=Path, default=None, metavar="FILE", help=wild.__doc__)
    parser.add_argument(
        "--markers-in-code", nargs="+", type=Path, default=None, metavar="DIR", help=markers_in_code.__doc__
    )
    parser.add_argument("--short-pieces", action="store_true", help=short_pieces.__doc__)
    parser.add_argument("--split", default=None, help="with --wild: only this split (dev, heldout)")
    args = parser.parse_args()
    if args.short_pieces:
        print(json.dumps(short_pieces(), indent=2, ensure_ascii=False))
        return 0
    if args.wild is not None:
        print(json.dumps(wild(args.wild, args.split), indent=2, ensure_ascii=False))
        return 0
    if args.markers_in_code is not None:
        print(json.dumps(markers_in_code(args.markers_in_code), indent=2, ensure_ascii=False))
        return 0
    if args.real_text is not None:
        print(json.dumps(real_text(args.real_text), indent=2, ensure_ascii=False))
        return 0
    path = args.corpus or find_corpus(REPO)
    if path is None or not path.is_file():
        print("error: no corpus (set SPECQUAL_CORPUS or pass --corpus; tests/data/corpus/README.md)", file=sys.stderr)
        return 2
    print(json.dumps(report(load_corpus(path), args.misses), indent=2, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
