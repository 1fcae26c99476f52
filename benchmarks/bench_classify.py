"""Benchmark: classify 6,000 synthetic SWE-bench-style trajectories of 50 turns each on one core.

    .venv/bin/python benchmarks/bench_classify.py                 # 6000 x 50, prints the figures
    .venv/bin/python benchmarks/bench_classify.py --trajectories 500

Trajectories are generated here, deterministically (seeded): reasoning and short answers are runs of real prose
(the Python reference of `pydoc_data.topics`; random words from a vocabulary were token salad),
bash tool calls (one-liners and heredocs of real Python source), observations of realistic size (file views and
listings cut from the standard library's source, pytest logs), `submit` at the end; 10% of trajectories turn
corrupt at a random turn (U+FFFD, byte-level pieces, leaked tool-call XML, empty or reasoning-only replies,
loops until max_tokens). Only the classification is timed (CPU time of this process), not the generation. The
CPU time of a reference loop (`sum(range(10**8))`) is reported too, so runs on loaded or slower machines compare.

The classifier keeps per-text verdicts of its per-field statistics (eval/classify/repetition.py): the pools
here hold 3,000 reasoning and 3,000 answer pieces drawn again and again, so those verdicts are mostly reused.
`--fresh-texts` empties those caches before every trajectory: the cost where no text repeats across
trajectories (real runs rarely repeat reasoning).

`--pool N` draws the pieces from pools of N (3,000 by default) and `--no-reference-loop` skips the reference loop:
for counting instructions under callgrind, which does not depend on the machine's load (per turn: the difference of
two runs, 40 trajectories and 0, over 2,000 turns):

    valgrind --tool=callgrind --callgrind-out-file=/dev/null .venv/bin/python benchmarks/bench_classify.py \
        --trajectories 40 --pool 300 --fresh-texts --no-reference-loop

The classifier's optional compiled helpers (eval/classify/_speedups.c, built by `pip install -e .` or `python setup.py
build_ext --inplace` where a C compiler is) give the same labels in about half the time; `SPECQUAL_PURE_PYTHON=1`
runs without them (docs/trust/classifier.md, section "Speed"). A `PYTHONPATH` copy from `git archive` holds no
built module, so it runs pure Python unless it is built there too.

`--dump-labels FILE` writes every trajectory's labels.json (evidence included) as one JSON line, to compare two
classifier versions turn by turn on the same trajectories (the older one from an extracted copy of the package:
`git archive <commit> eval | tar -x -C /tmp/old`, then `PYTHONPATH=/tmp/old python benchmarks/bench_classify.py
--dump-labels old.jsonl`, and `cmp` the two files).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import sysconfig
import time
from pathlib import Path
from pydoc_data.topics import topics
from typing import Any

from eval.classify import Context, classify_trajectory
from eval.classify.repetition import clear_text_caches

_TEXT = (
    "the test fails because the function returns None when the input is empty so I should check the "
    "implementation of the parser and look at how the value is handled then run the tests again to confirm "
    "that the fix works and does not break other cases maybe the issue is in the migration or the query set"
)
WORDS = _TEXT.split(" ")
# Reasoning and answers: runs of real English prose, the Python reference shipped with the interpreter.
PROSE = "\n".join(topics[k] for k in sorted(topics))


def _source_pool(limit: int = 60) -> list[str]:
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    files = sorted(stdlib.glob("*.py"))[:limit]
    return [f.read_text(encoding="utf-8", errors="replace") for f in files]


def _pytest_log(rng: random.Random, n: int) -> str:
    lines = [f"tests/test_module.py::test_case_{i} {'PASSED' if rng.random() > 0.1 else 'FAILED'}" for i in range(n)]
    return "============ test session starts ============\n" + "\n".join(lines) + "\n" + "=" * 44 + "\n"


class Generator:
    """Trajectories assembled from pools of realistic pieces (sampling is cheap; building the pools is not)."""

    def __init__(self, seed: int, pool: int = 3000) -> None:
        self.rng = random.Random(seed)
        self.sources = _source_pool()
        self.observations = [self._observation() for _ in range(pool)]
        self.reasonings = [self.words(self.rng.randint(40, 250)) for _ in range(pool)]
        self.contents = [self.words(self.rng.randint(5, 60)) for _ in range(pool)]
        self.calls = [self._call(i) for i in range(pool)]

    def words(self, n: int) -> str:
        """About n consecutive words of real prose from the start of a line (random words are token salad)."""
        start = PROSE.find("\n", self.rng.randrange(0, len(PROSE) - 8 * n)) + 1
        return PROSE[start : PROSE.rfind(" ", start, start + 6 * n)] + "."

    def code(self, size: int) -> str:
        src = self.rng.choice(self.sources)
        start = self.rng.randrange(0, max(1, len(src) - size))
        return src[start : start + size]

    def _observation(self) -> str:
        kind = self.rng.random()
        if kind < 0.4:
            return self.code(self.rng.randint(400, 4000))
        if kind < 0.7:
            return _pytest_log(self.rng, self.rng.randint(5, 60))
        return "\n".join(f"src/pkg/module_{i}.py" for i in range(self.rng.randint(3, 40)))

    def _call(self, i: int) -> str:
        if self.rng.random() < 0.2:
            command = f"cat > /tmp/fix_{i}.py <<'EOF'\n{self.code(self.rng.randint(300, 2500))}\nEOF"
        else:
            command = f"grep -n 'def {self.rng.choice(WORDS)}' -r src/ | head -{self.rng.randint(5, 50)}"
        return json.dumps({"command": command})

    def corrupt(self, record: dict[str, Any]) -> None:
        kind = self.rng.randrange(6)
        if kind == 0:
            record["content"] = record["content"][:40] + "\ufffd\ufffd" + record["content"][40:]
        elif kind == 1:
            record["content"] = "ĠtheĠtestĠfailsĊäºĭ" + record["content"]
        elif kind == 2:
            record["tool_calls"] = []
            record["content"] = "<tool_call>\n<function=bash>\n<parameter=command>\nls\n</parameter>\n</function>"
        elif kind == 3:
            record.update(content="", tool_calls=[], reasoning_content="")
        elif kind == 4:
            record.update(content="", tool_calls=[])
        else:
            record.update(content="Let me run the tests again. " * 120, tool_calls=[], finish_reason="length")

    def trajectory(self, turns: int) -> tuple[list[dict[str, Any]], bool]:
        """The records, and whether corruption was injected."""
        rng = self.rng
        bad_from = rng.randrange(turns) if rng.random() < 0.1 else turns
        records = []
        for t in range(turns):
            last = t == turns - 1
            name, args = ("submit", "{}") if last else ("bash", rng.choice(self.calls))
            record = {
                "schema_version": 1,
                "turn": t,
                "finish_reason": "tool_calls",
                "content": rng.choice(self.contents) if rng.random() < 0.7 else "",
                "reasoning_content": rng.choice(self.reasonings),
                "tool_calls": [{"id": f"call_{t}", "type": "function", "function": {"name": name, "arguments": args}}],
                "token_ids": None,
                "observation": "" if last else rng.choice(self.observations),
                "feedback": None,
            }
            if t >= bad_from:
                self.corrupt(record)
            records.append(record)
        return records, bad_from < turns


def reference_loop() -> float:
    """CPU seconds of `sum(range(10**8))`: how fast this core is right now (shared machines vary with load)."""
    t0 = time.process_time()
    sum(range(10**8))
    return time.process_time() - t0


def run(
    trajectories: int,
    turns: int,
    seed: int,
    fresh_texts: bool = False,
    dump: Path | None = None,
    pool: int = 3000,
    reference: bool = True,
) -> dict[str, Any]:
    ref = reference_loop() if reference else None
    gen = Generator(seed, pool)
    cpu = chars = 0.0
    found = injected = false_alarms = 0
    clean_labels: dict[str, int] = {}
    wall0 = time.perf_counter()
    out = dump.open("w", encoding="utf-8") if dump is not None else None
    for _ in range(trajectories):
        records, bad = gen.trajectory(turns)
        chars += sum(len(r["content"]) + len(r["reasoning_content"]) + len(r["observation"]) for r in records)
        if fresh_texts:
            clear_text_caches()
        t0 = time.process_time()
        result = classify_trajectory(records, Context.build("qwen3_coder"))
        cpu += time.process_time() - t0
        if out is not None:
            out.write(json.dumps(result.to_json(), sort_keys=True) + "\n")
        corrupted = result.first_corrupted_turn is not None
        injected += bad
        found += bad and corrupted
        if not bad:
            false_alarms += corrupted
            for label, n in result.counts.items():
                if n:
                    clean_labels[label] = clean_labels.get(label, 0) + n
    if out is not None:
        out.close()
    return {
        "trajectories": trajectories,
        "fresh_texts": fresh_texts,
        "turns": trajectories * turns,
        "classify_cpu_s": round(cpu, 2),
        "turns_per_s": round(trajectories * turns / cpu) if cpu else None,
        "injected_corrupt": injected,
        "detected_corrupt": found,
        "false_alarms_on_clean": false_alarms,
        "labels_on_clean_turns": clean_labels,
        "text_mb": round(chars / 1e6, 1),
        "total_wall_s_incl_generation": round(time.perf_counter() - wall0, 1),
        "reference_loop_cpu_s": round(ref, 2) if ref else None,
        "classify_in_reference_loops": round(cpu / ref, 1) if ref else None,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trajectories", type=int, default=6000)
    parser.add_argument("--turns", type=int, default=50)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--fresh-texts", action="store_true", help="empty the per-text caches every trajectory")
    parser.add_argument("--dump-labels", type=Path, help="write every trajectory's labels.json here (JSON lines)")
    parser.add_argument("--pool", type=int, default=3000, help="pieces in each pool of reasoning, answers, calls")
    parser.add_argument("--no-reference-loop", action="store_true", help="skip the reference loop (callgrind)")
    args = parser.parse_args()
    result = run(
        args.trajectories,
        args.turns,
        args.seed,
        args.fresh_texts,
        args.dump_labels,
        args.pool,
        reference=not args.no_reference_loop,
    )
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
