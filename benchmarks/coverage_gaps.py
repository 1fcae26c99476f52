"""Why each never-taken branch of a coverage run was not taken: every branch, with the statement it leaves, the
function it is in, and a cause (issue 27: "where a group cannot reach double, say which branches and why").

A branch `a->b` of coverage.py starts at the statement on line `a` (an `if`, `elif`, `while`, `for`, `match` or
`with`, or a function's last line for `->-N` exits). The cause comes from ordered keyword rules over the source of
that statement and its enclosing function (`RULES`, first match wins), and where none matches, over the conditions of
the `if` / `while` blocks that hold it, innermost first: a rule names the configuration, model or platform the
branch needs. A keyword rule is approximate, so the output lists every branch with the rule that
classified it, for a reader to check.

    .venv/bin/python -m benchmarks.coverage_gaps results/<run>/coverage/groups.json --group v1/core/sched/scheduler.py \
        --out gaps-scheduler.md
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import sys
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

# (cause, what it needs, regular expression over the branch statement and its function's name). Order matters.
RULES: tuple[tuple[str, str, str], ...] = (
    ("pooling", "a pooling / embedding model", r"pool"),
    (
        "platform / parallelism",
        "a GPU platform path (ROCm, CUDA graphs, EPLB, pipeline parallel, multi-GPU)",
        r"rocm|cudagraph|CUDAGraph|eplb|pp_group|world_size|multi-GPU|use_local_argmax",
    ),
    ("M-RoPE / multimodal drafts", "a multimodal target (M-RoPE positions, image embeddings)", r"mrope"),
    ("LoRA", "LoRA adapters (`--enable-lora`)", r"lora"),
    ("encoder / multimodal", "a multimodal or encoder-decoder model", r"encoder|mm_|multimodal|\bec_|is_encoder"),
    (
        "KV connector / P/D",
        "a KV connector (P/D disaggregation, KV offloading), and its failure paths",
        r"connector|kv_transfer|remote|recv|send|load_kv|invalid_block|kv_load|async_load|WAITING_FOR_REMOTE|"
        r"kv_output|xfer|transfer",
    ),
    ("async scheduling", "`--async-scheduling` (forced off on CPU)", r"async_sched|placeholder|discard_latest"),
    (
        "v2 model runner",
        "vLLM's v2 GPU model runner (deferred block frees, copy-on-write blocks, KV zeroing)",
        r"use_v2_model_runner|defer_block_free|deferred_frees|cow_retained|processed_step_seq|kv_cache_zeroing",
    ),
    (
        "pause / reset / streaming input",
        "engine control calls (pause, reset the prefix cache, streaming-input sessions)",
        r"pause|reset|resum|stream|session|shutdown",
    ),
    ("preemption / priority", "KV-cache pressure or `--scheduling-policy priority`", r"preempt|priority|PREEMPT"),
    (
        "context / data parallel",
        "decode or prefill context parallelism, data parallel ranks",
        r"dcp|pcp|context_parallel|\bdp_|data_parallel",
    ),
    (
        "speculative decoding",
        "a speculative setting or draft shape",
        r"spec|draft|lookahead|num_accepted|eagle|mtp|rejected",
    ),
    ("structured output", "a structured-output request or backend", r"structured|grammar|bitmask"),
    (
        "scheduler limits",
        "a scheduler limit reached (`--max-num-seqs`, `--long-prefill-token-threshold`, max_model_len, budgets)",
        r"long_prefill|max_num_active|max_num_seqs|max_model_len|token_budget|defer_prefill|max_num_running",
    ),
    ("hybrid / Mamba", "a hybrid (Mamba) model", r"mamba|hybrid|align"),
    (
        "metrics / events / logging",
        "stats, KV events or tracing turned on or off",
        r"stats|log_|metrics|event|perf|trace|iteration_details|record",
    ),
)
# Files whose every branch needs one method, model family or platform (checked before RULES).
FILE_RULES: tuple[tuple[str, str, str], ...] = (
    ("step3p5.py", "another model family's drafter", "a Step-3.5 model (its own MTP drafter)"),
    ("gemma4.py", "another model family's drafter", "a Gemma 4 model (its own drafter)"),
    ("ngram_proposer_gpu.py", "GPU only", "the GPU ngram proposer (CUDA)"),
    ("dflash.py", "another method", "method dflash (a DFlash drafter)"),
    ("suffix_decoding.py", "another method", "method suffix (the arctic-inference package)"),
    ("custom_class_proposer.py", "another method", "method custom (a user proposer class)"),
    ("extract_hidden_states.py", "another method", "method extract_hidden_states (hidden states to a KV connector)"),
    ("dynamic/", "K by batch size", "`num_speculative_tokens_per_batch_size`"),
)
OTHER = ("other", "another scheduler option or an edge of the request flow (read the statement)")


@dataclass(frozen=True)
class Branch:
    file: str
    src: int
    dst: int
    function: str
    statement: str
    cause: str


def _functions(tree: ast.AST) -> list[tuple[int, int, str]]:
    out = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out.append((node.lineno, node.end_lineno or node.lineno, node.name))
    return out


def _guards(tree: ast.AST) -> list[tuple[int, int, int]]:
    """(first line, last line, condition line) of every `if` / `while` block."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.If, ast.While)):
            out.append((node.lineno, node.end_lineno or node.lineno, node.lineno))
    return out


def _enclosing(funcs: list[tuple[int, int, str]], line: int) -> str:
    inside = [(a, b, n) for a, b, n in funcs if a <= line <= b]
    return min(inside, key=lambda f: f[1] - f[0])[2] if inside else "<module>"


def _statement(lines: list[str], line: int) -> str:
    """The statement starting on `line`, joined over its continuation lines (up to the colon)."""
    text = lines[line - 1].strip() if 0 < line <= len(lines) else ""
    i = line
    while text.count("(") > text.count(")") and i < len(lines) and len(text) < 400:
        text += " " + lines[i].strip()
        i += 1
    return text


def _rule(text: str) -> str | None:
    for cause, _, pattern in RULES:
        if re.search(pattern, text, re.IGNORECASE):
            return cause
    return None


def classify(statement: str, function: str, guards: Sequence[str] = (), file: str = "") -> str:
    """The cause of a branch leaving `statement` in `function`, nested in `guards` (innermost first), in `file`."""
    for part, by_file, _ in FILE_RULES:
        if part in file:
            return by_file
    for text in (f"{statement} {function}", *guards):
        cause = _rule(text)
        if cause is not None:
            return cause
    return OTHER[0]


def branches(missing: list[str], site: Path) -> list[Branch]:
    by_file: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for m in missing:
        path, arc = m.rsplit(":", 1)
        src, dst = arc.split("->")
        by_file[path].append((int(src), int(dst)))
    out = []
    for path, arcs in sorted(by_file.items()):
        src = (site / "vllm" / path).read_text()
        tree = ast.parse(src)
        lines, funcs, guards = src.splitlines(), _functions(tree), _guards(tree)
        for a, b in sorted(arcs):
            fn = _enclosing(funcs, a)
            st = _statement(lines, a)
            outer = sorted((g for g in guards if g[0] < a <= g[1]), key=lambda g: -g[0])
            out.append(Branch(path, a, b, fn, st, classify(st, fn, [_statement(lines, g[2]) for g in outer], path)))
    return out


def report(found: list[Branch], title: str) -> str:
    needs = {cause: need for cause, need, _ in RULES} | {OTHER[0]: OTHER[1]}
    for _, cause, need in FILE_RULES:
        needs[cause] = f"{needs[cause]}; {need}" if cause in needs else need
    counts = Counter(b.cause for b in found)
    out = [f"# {title}\n\n{len(found)} branches never taken, by cause (keyword rules of benchmarks/coverage_gaps.py)\n"]
    out.append("\n| cause | branches | what it needs |\n|---|---|---|\n")
    for cause, n in counts.most_common():
        out.append(f"| {cause} | {n} | {needs[cause]} |\n")
    out.append("\n## Every branch\n\n| branch | function | statement | cause |\n|---|---|---|---|\n")
    for b in found:
        st = b.statement.replace("|", "\\|")[:140]
        out.append(f"| {b.file}:{b.src}->{b.dst} | `{b.function}` | `{st}` | {b.cause} |\n")
    return "".join(out)


def _site_of(groups_json: Path) -> Path:
    rc = groups_json.parent / "coveragerc"
    lines = rc.read_text().splitlines()
    for i, line in enumerate(lines[:-1]):
        if line.strip() == "vllm =":
            return Path(lines[i + 1].strip().removesuffix("/").removesuffix("/vllm"))
    raise SystemExit(f"{rc}: no [paths] vllm entry; pass --site")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("groups", type=Path, help="results/<run>/coverage/groups.json (bench_coverage.py --report)")
    ap.add_argument("--group", required=True, help="a group of groups.json, e.g. v1/core/sched/scheduler.py")
    ap.add_argument("--site", type=Path, help="the stock site-packages holding vllm/ (default: from coveragerc)")
    ap.add_argument("--out", type=Path, help="markdown file (default: stdout)")
    args = ap.parse_args()
    groups = json.loads(args.groups.read_text())
    if args.group not in groups:
        raise SystemExit(f"no group {args.group!r} in {args.groups} (groups: {', '.join(groups)})")
    g = groups[args.group]
    found = branches(g["missing_branches"], args.site or _site_of(args.groups))
    title = f"{args.group}: {g['branches'][0]} of {g['branches'][1]} branches taken in {args.groups.parent.parent.name}"
    text = report(found, title)
    if args.out:
        args.out.write_text(text)
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
