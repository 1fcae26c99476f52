"""Direct checks that each zoo patch changes vLLM's output when its trigger is met (issue 27).

Starts the clean speculative control and the bug cohorts of a zoo file (at most 4 servers), sends every trigger
below to every server, and prints, per trigger and cohort, whether the output differs from the control's and
whether it breaks the request's own contract (a banned word emitted, tokens past a stop string, text outside the
grammar). Every trigger runs on every server, so a patch that changes more than its own trigger shows.

    /work/coord/vslot .venv/bin/python benchmarks/bugzoo_triggers.py --control stock-self4 \\
        --cohort pr31908-self4 --cohort pr47616-self4 --cohort pr14702-self4

Greedy, token-id prompts through /v1/completions. Positions are chosen from the control's own greedy output so
that the trigger lands on a draft row: with self-drafting K=4 every draft is accepted, so output index 0 comes
from the prefill and each later step commits 4 drafts + 1 bonus (bonus rows at 5, 10, ...).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

PROMPT_A = [1, 17, 42, 99, 123, 7, 250, 31, 64, 90]
PROMPT_B = [1, 300, 12, 12, 88, 401, 5, 66, 9]
DRAFT_POSITIONS = [p for p in range(1, 20) if p % 5 != 0]
REGEX = "[0-9]{20}"


def complete(url: str, prompt: list[int], **params: Any) -> dict[str, Any]:
    body = {"model": "tiny-llama", "prompt": prompt, "temperature": 0.0, "max_tokens": 24, "logprobs": 1}
    body |= {"return_tokens_as_token_ids": True, **params}
    r = httpx.post(f"{url}/v1/completions", json=body, timeout=300)
    if r.status_code != 200:  # e.g. a request the engine terminated (FINISHED_ERROR): a changed output too
        return {"ids": [], "text": f"HTTP {r.status_code}: {r.text[:200]}", "n": 0, "finish": "http-error"}
    out = r.json()
    choice = out["choices"][0]
    ids = [int(t.removeprefix("token_id:")) for t in choice["logprobs"]["tokens"]]
    finish = choice.get("finish_reason")
    return {"ids": ids, "text": choice["text"], "n": out["usage"]["completion_tokens"], "finish": finish}


def detok(url: str, token: int) -> str:
    r = httpx.post(f"{url}/detokenize", json={"model": "tiny-llama", "tokens": [token]}, timeout=30)
    return str(r.json()["prompt"])


def tok(url: str, text: str) -> list[int]:
    body = {"model": "tiny-llama", "prompt": text, "add_special_tokens": False}
    return list(httpx.post(f"{url}/tokenize", json=body, timeout=30).json()["tokens"])


def pick_bad_word(url: str) -> tuple[int, str]:
    """A token of B's greedy output at a draft row, absent before it, whose text tokenizes back to itself."""
    ids = complete(url, PROMPT_B)["ids"]
    for p in DRAFT_POSITIONS:
        t = ids[p]
        text = detok(url, t)
        if t not in ids[:p] and text.strip() == text and text and tok(url, text) == [t]:
            return t, text
    raise SystemExit("no usable bad word in the control's output")


def pick_stop_string(url: str) -> str:
    """Text of a token at a draft row (not the step's last) that first appears there in B's greedy text."""
    ids = complete(url, PROMPT_B)["ids"]
    for p in [q for q in DRAFT_POSITIONS if q % 5 != 4]:
        s = detok(url, ids[p])
        before = "".join(detok(url, t) for t in ids[:p])
        if s.strip() and s not in before and s not in before + s[:-1]:
            return s
    raise SystemExit("no usable stop string in the control's output")


def trigger_bad_words(url: str, word: tuple[int, str]) -> dict[str, Any]:
    """A long plain request first (batch index 0), then the bad_words request beside it (index 1)."""
    box: dict[str, Any] = {}
    # A must still be decoding while B runs: a tiny model finishes 64 tokens before B arrives.
    long_a = {"max_tokens": 1200, "ignore_eos": True}
    th = threading.Thread(target=lambda: box.update(a=complete(url, PROMPT_A, **long_a)))
    th.start()
    time.sleep(0.3)
    b = complete(url, PROMPT_B, bad_words=[word[1]])
    th.join()
    return {"a": box.get("a", {}).get("ids"), "b": b["ids"], "violation": word[0] in b["ids"]}


def trigger_stop(url: str, stop: str) -> dict[str, Any]:
    r = complete(url, PROMPT_B, stop=[stop])
    return {"ids": r["ids"], "text": r["text"], "n": r["n"], "violation": stop in r["text"]}


def trigger_regex(url: str) -> dict[str, Any]:
    r = complete(url, PROMPT_B, max_tokens=20, structured_outputs={"regex": REGEX})
    bad = re.fullmatch(REGEX, r["text"]) is None
    return {"ids": r["ids"], "text": r["text"], "finish": r["finish"], "violation": bad}


def start(spec: Any, cohort: Any, model: Path, run_dir: Path) -> Any:
    from eval.stacks import ensure_build, launch

    stack = launch(spec, cohort, model, run_dir, ensure_build(spec, cohort.factors["build"]))
    stack.__enter__()
    return stack


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--file", default="cohorts/bugzoo-cpu.yaml")
    ap.add_argument("--control", default="stock-self4")
    ap.add_argument("--cohort", action="append", required=True)
    ap.add_argument("--out", default="results/bugzoo-triggers")
    ap.add_argument("--only", action="append", help="run only these triggers (bad_words, stop, regex)")
    args = ap.parse_args()
    from eval.spec.load import load_spec
    from eval.stacks.models import model_dir

    loaded = load_spec([str(ROOT / args.file)])
    names = [args.control, *args.cohort]
    if len(names) > 4:
        raise SystemExit("at most 4 servers per command (the control + 3 cohorts)")
    cohorts = [loaded.cohort(n) for n in names]
    model = model_dir(loaded.spec, name=cohorts[0].model_name)
    out = ROOT / args.out
    with ThreadPoolExecutor(len(cohorts)) as pool:
        stacks = list(pool.map(lambda c: start(loaded.spec, c, model, out), cohorts))
    try:
        urls = {n: s.base_url.rstrip("/") for n, s in zip(names, stacks, strict=True)}
        ctl = urls[args.control]
        word, stop = pick_bad_word(ctl), pick_stop_string(ctl)
        print(f"bad word: token {word[0]} {word[1]!r}; stop string: {stop!r}; regex: {REGEX}")
        triggers = {
            "bad_words": lambda url: trigger_bad_words(url, word),
            "stop": lambda url: trigger_stop(url, stop),
            "regex": trigger_regex,
        }
        results: dict[str, dict[str, Any]] = {}
        for n, url in urls.items():
            results[n] = {t: f(url) for t, f in triggers.items() if not args.only or t in args.only}
        report(results, args.control)
        record = {"word": word, "stop": stop, "results": results}
        (out / f"triggers-{'-'.join(names)}.json").write_text(json.dumps(record, indent=1))
    finally:
        for s in stacks:
            s.__exit__(None, None, None)


def report(results: dict[str, dict[str, Any]], control: str) -> None:
    for name, res in results.items():
        for trig, obs in res.items():
            differs = {k: v for k, v in obs.items() if k != "violation" and v != results[control][trig][k]}
            flag = "DIFFERS" if differs else "same"
            print(f"{name:<16} {trig:<10} {flag:<8} violation={obs['violation']}  {json.dumps(differs)[:300]}")


if __name__ == "__main__":
    main()
