"""Calibrate the statistical degeneracy detectors (eval/classify/degeneracy.py) on real clean text.

    .venv/bin/python -m eval.classify.calibrate [--corpus PATH] [--alpha 0.0002] [--write]
    .venv/bin/python -m eval.classify.calibrate --update near_duplicates   # that entry only, the others kept
    .venv/bin/python -m eval.classify.calibrate --update run_together
    .venv/bin/python -m eval.classify.calibrate --update content_run
    .venv/bin/python -m eval.classify.calibrate --update midsentence_marks
    .venv/bin/python -m eval.classify.calibrate --update glued_words
    .venv/bin/python -m eval.classify.calibrate --update implausible_pairs
    .venv/bin/python -m eval.classify.calibrate --alpha 0 --update tail_pairs
    .venv/bin/python -m eval.classify.calibrate --alpha 0 --update digit_run
    .venv/bin/python -m eval.classify.calibrate --alpha 0 --update letter_run
    .venv/bin/python -m eval.classify.calibrate --update spaced_gaps      # and split_pieces, spaced_letters

Reads the clean assistant turns of the corpus's `dev` split (tests/data/corpus: the trajectories' turns and the
clean replies; the `test` split is never read here) and, because those are mostly one model's agent notes, real
technical prose of another kind (the Python reference shipped with the interpreter, `reference_prose`); takes
each free-text field (content, reasoning) on its own, computes the four statistics of its prose and sets each
threshold at the value that at most `alpha` of the clean fields lie strictly beyond. With four statistics the
share of clean fields flagged is at most 4 x alpha by construction (0.08% at the default 0.02%), and each field
is a separate chance to be flagged.
`--write` stores the thresholds, with the counts and the command, in eval/classify/degeneracy.json. `--update NAME`
calibrates one statistic (`near_duplicates`, eval/classify/neardup.py, `run_together`, eval/classify/spacing.py, or
`content_run` and `midsentence_marks`, eval/classify/salad.py, or `glued_words`, eval/classify/glued.py, or
`implausible_pairs`, eval/classify/wordpairs.py, or `tail_pairs`, eval/classify/tailsalad.py: these three without
the Python reference's pieces, a source of their lexicon and pair counts, or `digit_run`, eval/classify/digitrun.py,
with the Python sources' pieces too, or `letter_run`, eval/classify/letterrun.py, on the same text as `digit_run`) on
the same fields and replaces only its entry: the others stay as they were calibrated (the gettext catalogs differ from
machine to machine).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from eval.classify.corpus import find_corpus, load_corpus
from eval.classify.degeneracy import CALIBRATION, LOW_IS_DEGENERATE, STATISTICS, Statistics, degenerate, statistics
from eval.classify.model import as_text

SCHEMA_VERSION = 1
REPO = Path(__file__).resolve().parents[2]
FREE_TEXT = ("content", "reasoning_content")
PIECE_SIZES = (200, 500, 1000, 2000)


def clean_fields(rows: list[dict[str, Any]], split: str) -> Iterator[tuple[str, str]]:
    """(row id, text) of every non-blank free-text field of the clean turns of one split."""
    for row in rows:
        if row.get("split") != split or row.get("kind") == "corrupt":
            continue
        messages = row.get("turns") if row.get("kind") == "trajectory" else [row.get("response") or {}]
        for message in messages or []:
            for name in FREE_TEXT:
                text = as_text(message.get(name)) if isinstance(message, dict) else ""
                if text.strip():
                    yield row["id"], text


def reference_prose() -> list[str]:
    """Real technical English beside the agent turns: the Python language reference and library topics shipped
    with the interpreter (`pydoc_data.topics`, the same text on every install of one Python version), cut into
    pieces of the lengths chat replies have (200, 500, 1,000 and 2,000 characters, in turn)."""
    from pydoc_data.topics import topics

    text = "\n\n".join(topics[k] for k in sorted(topics))
    pieces: list[str] = []
    at = 0
    while at < len(text):
        size = PIECE_SIZES[len(pieces) % len(PIECE_SIZES)]
        pieces.append(text[at : at + size])
        at += size
    return pieces


def quantile_threshold(values: list[float], low_is_degenerate: bool, alpha: float) -> float:
    """The value that at most floor(alpha * n) of `values` lie strictly beyond (toward degenerate)."""
    ordered = sorted(values, reverse=not low_is_degenerate)
    return ordered[min(int(alpha * len(ordered)), len(ordered) - 1)]


def calibrate(texts: list[str], alpha: float) -> dict[str, Any]:
    stats = [statistics(t) for t in texts]
    limits: dict[str, float] = {}
    counts: dict[str, int] = {}
    for name in STATISTICS:
        values = [v for s in stats if (v := s.get(name)) is not None]
        limits[name] = quantile_threshold(values, name in LOW_IS_DEGENERATE, alpha)
        counts[name] = len(values)
    flagged = sum(bool(degenerate(s, limits)) for s in stats)
    return {"thresholds": limits, "fields_with_value": counts, "fields": len(texts), "fields_flagged": flagged}


def catalog_pieces(root: Path = Path("/usr/share/locale"), size: int = 3000) -> list[str]:
    """Translated messages of every gettext catalog under `root` (German compounds, Finnish, Hungarian, Vietnamese
    and a hundred other languages), in pieces of `size` characters: real text of word-spacing scripts whose long
    words the run-together measure must leave clean."""
    import gettext

    pieces: list[str] = []
    for path in sorted(root.rglob("*.mo")):
        try:
            with path.open("rb") as f:
                catalog = gettext.GNUTranslations(f)
        except (OSError, UnicodeDecodeError, ValueError, KeyError, IndexError):
            continue
        text = "\n".join(v for v in catalog._catalog.values() if isinstance(v, str))  # type: ignore[attr-defined]
        pieces += [text[i : i + size] for i in range(0, len(text), size)]
    return pieces


def calibrate_run_together(texts: list[str], alpha: float) -> dict[str, Any]:
    """The threshold of eval/classify/spacing.py's run-together share: at most `alpha` of the fields beyond it."""
    from eval.classify.spacing import run_together_share

    values = [v for t in texts if (v := run_together_share(t)) is not None]
    limit = quantile_threshold(values, low_is_degenerate=False, alpha=alpha)
    return {"threshold": limit, "fields_with_value": len(values), "fields_flagged": sum(v > limit for v in values)}


def calibrate_salad(texts: list[str], catalogs: list[str], alpha: float) -> dict[str, Any]:
    """The thresholds of eval/classify/salad.py: `mixed_script` on the fields and the gettext catalogs (real text in
    every script), `function_share` on the fields only (replies and prose: the catalogs are lists of labels and
    names, not sentences; their false alarms are measured by `bench_corpus.py --real-text`)."""
    from eval.classify.salad import READS, function_share, mixed_script_words

    mixed = [float(mixed_script_words(t[-READS:])) for t in texts + catalogs]
    mixed_limit = quantile_threshold(mixed, low_is_degenerate=False, alpha=alpha)
    shares = [v for t in texts if (v := function_share(t[-READS:])) is not None]
    share_limit = quantile_threshold(shares, low_is_degenerate=True, alpha=alpha)
    return {
        "mixed_script": {
            "threshold": mixed_limit,
            "fields_with_value": len(mixed),
            "fields_flagged": sum(v > mixed_limit for v in mixed),
            "source": f"the fields and {len(catalogs)} pieces of the gettext catalogs",
        },
        "function_share": {
            "threshold": share_limit,
            "fields_with_value": len(shares),
            "fields_flagged": sum(v < share_limit for v in shares),
            "source": "the fields (clean turns and pydoc_data.topics pieces)",
        },
    }


def calibrate_near_duplicates(texts: list[str], alpha: float) -> dict[str, Any]:
    """The count of eval/classify/neardup.py beyond which a field loops, on the fields and the gettext catalogs' pieces
    (lists of similar messages: real text that repeats itself with a word changed): at most `alpha` beyond it."""
    from eval.classify.neardup import near_duplicates

    return _upper_threshold(near_duplicates, texts, alpha)


def _upper_threshold(
    statistic: Callable[[str], float],
    texts: list[str],
    alpha: float,
    low_is_degenerate: bool = False,
    piece_size: int = 3000,
) -> dict[str, Any]:
    """The value of `statistic` beyond which at most `alpha` of the fields and the gettext catalogs' pieces (of
    `piece_size` characters) lie (below it where `low_is_degenerate`)."""
    catalogs = catalog_pieces(size=piece_size)
    values = [float(statistic(t)) for t in texts + catalogs]
    limit = quantile_threshold(values, low_is_degenerate=low_is_degenerate, alpha=alpha)
    beyond = sum((v < limit) if low_is_degenerate else (v > limit) for v in values)
    return {
        "threshold": limit,
        "fields_with_value": len(values),
        "fields_flagged": beyond,
        "source": f"the fields of `source` (dev split) and {len(catalogs)} pieces of the gettext catalogs"
        + ("" if piece_size == 3000 else f" of {piece_size} characters"),
    }


def recalibrate_run_together(texts: list[str], alpha: float) -> dict[str, Any]:
    """`calibrate_run_together` on the fields and the gettext catalogs' pieces, as `--write` does."""
    catalogs = catalog_pieces()
    entry = calibrate_run_together(texts + catalogs, alpha)
    entry["source"] = f"the same fields and {len(catalogs)} pieces of the gettext catalogs under /usr/share/locale"
    return entry


def calibrate_content_run(texts: list[str], alpha: float) -> dict[str, Any]:
    """The run of eval/classify/salad.py's `content_run` beyond which a field is salad, on the fields and the gettext
    catalogs' pieces (label lists in a hundred languages, many of them without the function words the list knows):
    at most `alpha` beyond it."""
    from eval.classify.salad import READS, content_run

    return _upper_threshold(lambda t: content_run(t[-READS:]), texts, alpha)


def calibrate_midsentence_marks(texts: list[str], alpha: float) -> dict[str, Any]:
    """The count of eval/classify/salad.py's `midsentence_marks` beyond which a field is salad, on the fields and the
    gettext catalogs' pieces: at most `alpha` beyond it."""
    from eval.classify.salad import READS, midsentence_marks

    return _upper_threshold(lambda t: midsentence_marks(t[-READS:]), texts, alpha)


def calibrate_glued_words(texts: list[str], alpha: float) -> dict[str, Any]:
    """The count of eval/classify/glued.py's glue points beyond which a field's words are glued, on the fields and the
    gettext catalogs' pieces (words of other languages that split into English ones): at most `alpha` beyond it."""
    from eval.classify.glued import glued_words

    return _upper_threshold(glued_words, texts, alpha)


def calibrate_implausible_pairs(texts: list[str], alpha: float) -> dict[str, Any]:
    """The score of eval/classify/wordpairs.py's `implausible_pairs` below which a field is salad, on the fields and
    the gettext catalogs' pieces, cut as short as the fields it reads (English ones are read, others fail its English
    test): at most `alpha` below it."""
    from eval.classify.salad import READS
    from eval.classify.wordpairs import CALIBRATION_PIECE, implausible_pairs

    statistic = lambda t: implausible_pairs(t[-READS:])  # noqa: E731
    return _upper_threshold(statistic, texts, alpha, low_is_degenerate=True, piece_size=CALIBRATION_PIECE)


def calibrate_tail_pairs(texts: list[str], alpha: float) -> dict[str, Any]:
    """The score of eval/classify/tailsalad.py's `tail_pairs` below which a long field ends in salad, on the fields and
    the gettext catalogs' pieces of 3,000 characters (long texts, as it reads): at most `alpha` below it."""
    from eval.classify.salad import READS
    from eval.classify.tailsalad import tail_pairs

    return _upper_threshold(lambda t: tail_pairs(t[-READS:]), texts, alpha, low_is_degenerate=True)


def source_pieces(size: int = 3000) -> list[str]:
    """The Python sources under the interpreter's library directory (the standard library and site-packages, as
    `benchmarks/bench_corpus.py --real-text` reads them), in pieces of `size` characters: real text that writes long
    numbers (test data, constants, doctests)."""
    import sysconfig

    pieces: list[str] = []
    for path in sorted(Path(sysconfig.get_paths()["stdlib"]).rglob("*.py")):
        text = path.read_text(encoding="utf-8", errors="replace")
        pieces += [text[i : i + size] for i in range(0, len(text), size)]
    return pieces


def calibrate_digit_run(texts: list[str], alpha: float) -> dict[str, Any]:
    """The run of eval/classify/digitrun.py's `digit_run` beyond which a field loops, on the fields, the gettext
    catalogs' pieces and the Python sources' pieces (long numbers in code, data and doctests): at most `alpha` beyond
    it."""
    from eval.classify.digitrun import READS, digit_run

    sources = source_pieces()
    entry = _upper_threshold(lambda t: digit_run(t[-READS:]), texts + sources, alpha)
    entry["source"] += f" and {len(sources)} pieces of the Python sources under the library directory"
    return entry


def calibrate_letter_run(texts: list[str], alpha: float) -> dict[str, Any]:
    """The run of eval/classify/letterrun.py's `letter_run` beyond which a field loops, on the same text as
    `digit_run` (the fields, the gettext catalogs' pieces and the Python sources' pieces, whose cuts fall inside
    test data of one letter): at most `alpha` beyond it."""
    from eval.classify.letterrun import letter_run

    sources = source_pieces()
    entry = _upper_threshold(letter_run, texts + sources, alpha)
    entry["source"] += f" and {len(sources)} pieces of the Python sources under the library directory"
    return entry


def calibrate_split(name: str) -> Callable[[list[str], float], dict[str, Any]]:
    """A calibration of one statistic of eval/classify/splitwords.py (`spaced_gaps`, a share; `split_pieces` and
    `spaced_letters`, counts) on the fields and the gettext catalogs' pieces: at most `alpha` beyond it."""
    from eval.classify import splitwords

    def statistic(text: str) -> float:
        value = getattr(splitwords, name)(text)
        return float(value) if isinstance(value, float) else float(len(value))

    return lambda texts, alpha: _upper_threshold(statistic, texts, alpha)


def calibrate_language_drift(texts: list[str], alpha: float) -> dict[str, Any]:
    """The count of eval/classify/drift.py's `language_drift` beyond which a field drifts into CJK, on the fields and
    the gettext catalogs' pieces (Chinese, Japanese and Korean ones among them): at most `alpha` beyond it."""
    from eval.classify.drift import READS, language_drift

    return _upper_threshold(lambda t: language_drift(t[-READS:]), texts, alpha)


def calibrate_doubled_clitics(texts: list[str], alpha: float) -> dict[str, Any]:
    """The count of eval/classify/salad.py's `doubled_clitics` beyond which a field stutters, on the fields and the
    gettext catalogs' pieces (French and Italian elisions, Catalan and Occitan apostrophes): at most `alpha` beyond."""
    from eval.classify.salad import READS, doubled_clitics

    return _upper_threshold(lambda t: doubled_clitics(t[-READS:]), texts, alpha)


UPDATES = {
    "near_duplicates": calibrate_near_duplicates,
    "run_together": recalibrate_run_together,
    "content_run": calibrate_content_run,
    "midsentence_marks": calibrate_midsentence_marks,
    "glued_words": calibrate_glued_words,
    "implausible_pairs": calibrate_implausible_pairs,
    "tail_pairs": calibrate_tail_pairs,
    "digit_run": calibrate_digit_run,
    "letter_run": calibrate_letter_run,
    "spaced_gaps": calibrate_split("spaced_gaps"),
    "split_pieces": calibrate_split("split_pieces"),
    "spaced_letters": calibrate_split("spaced_letters"),
    "language_drift": calibrate_language_drift,
    "doubled_clitics": calibrate_doubled_clitics,
}
# Entries whose statistic is built from the Python reference (glued.py's lexicon, wordpairs.py's pair counts): its
# pieces would only add zeros.
WITHOUT_REFERENCE = frozenset({"glued_words", "implausible_pairs", "tail_pairs", "split_pieces", "spaced_letters"})


def update(name: str, texts: list[str], alpha: float, command: str) -> dict[str, Any]:
    """degeneracy.json with the entry `name` calibrated anew on `texts` (the other entries as they are)."""
    record: dict[str, Any] = json.loads(CALIBRATION.read_text(encoding="utf-8"))
    entry = UPDATES[name](texts, alpha)
    record[name] = {**entry, "alpha": alpha, "command": command}
    return record


def flagged_fields(texts: list[str], limits: dict[str, float]) -> list[tuple[int, list[str], Statistics]]:
    out = []
    for i, text in enumerate(texts):
        s = statistics(text)
        if hits := degenerate(s, limits):
            out.append((i, hits, s))
    return out


def write_atomic(path: Path, data: dict[str, Any]) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    os.replace(tmp, path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, default=None, help="corpus.jsonl(.gz); default: as the tests find it")
    parser.add_argument("--alpha", type=float, default=0.0002, help="false-positive rate per statistic and field")
    parser.add_argument("--write", action="store_true", help=f"write the thresholds to {CALIBRATION.name}")
    parser.add_argument("--update", choices=sorted(UPDATES), help="calibrate this entry only and write it")
    args = parser.parse_args(argv)
    path = args.corpus or find_corpus(REPO)
    if path is None:
        print("error: no corpus (tests/data/corpus/README.md)", file=sys.stderr)
        return 2
    fields = list(clean_fields(load_corpus(path), "dev"))
    fields += [("pydoc_data.topics", piece) for piece in reference_prose()]
    if args.update:
        command = f"python -m eval.classify.calibrate --alpha {args.alpha} --update {args.update}"
        texts = [t for i, t in fields if args.update not in WITHOUT_REFERENCE or i != "pydoc_data.topics"]
        record = update(args.update, texts, args.alpha, command)
        print(json.dumps(record[args.update], indent=2))
        write_atomic(CALIBRATION, record)
        return 0
    result = calibrate([t for _, t in fields], args.alpha)
    catalogs = catalog_pieces()
    run_together = calibrate_run_together([t for _, t in fields] + catalogs, args.alpha)
    run_together["source"] = (
        f"the same fields and {len(catalogs)} pieces of the gettext catalogs under /usr/share/locale"
    )
    record = {
        "schema_version": SCHEMA_VERSION,
        "command": f"python -m eval.classify.calibrate --alpha {args.alpha} --write",
        "source": f"{path.name}: split dev, clean turns (trajectories and clean replies), content and reasoning;"
        f" Python {sys.version_info.major}.{sys.version_info.minor}'s pydoc_data.topics in pieces of {PIECE_SIZES}",
        "alpha_per_statistic": args.alpha,
        **result,
        "run_together": run_together,
        **calibrate_salad([t for _, t in fields], catalogs, args.alpha),
    }
    print(json.dumps(record, indent=2))
    for i, hits, s in flagged_fields([t for _, t in fields], result["thresholds"]):
        print(f"flagged at calibration: {fields[i][0]} {hits} {s}", file=sys.stderr)
    if args.write:
        write_atomic(CALIBRATION, record)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
