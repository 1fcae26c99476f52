"""Check a trained organism served by vLLM: first-turn tool calls on held-out instances, MTP acceptance from
/metrics, and greedy equality with the training forward (transformers) and between servers.

Usage: python benchmarks/organism_vllm_check.py MODEL_DIR N URL [URL ...]
(each URL a running server of MODEL_DIR, e.g. from `specqual serve cohorts/organism-cpu.yaml --cohort fixed-mtp5
-c model.path=MODEL_DIR`). Prints one JSON object.
"""

from __future__ import annotations

import json
import os
import re
import sys
import urllib.request
from typing import Any


def post(url: str, body: dict[str, Any]) -> dict[str, Any]:
    req = urllib.request.Request(url, json.dumps(body).encode(), {"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=600) as resp:
        return json.loads(resp.read())


def spec_counters(base: str) -> dict[str, float]:
    text = urllib.request.urlopen(base + "/metrics", timeout=60).read().decode()
    out: dict[str, float] = {}
    for name in ("num_draft_tokens", "num_accepted_tokens"):
        for m in re.finditer(rf"^vllm:spec_decode_{name}_total(?:{{[^}}]*}})? ([0-9.e+]+)$", text, re.M):
            out[name] = out.get(name, 0.0) + float(m.group(1))
    return out


def first_turn(base: str, messages: list[dict[str, Any]]) -> tuple[str | None, list[int]]:
    from eval.models.organism import data

    body = {
        "model": "organism",
        "messages": messages,
        "tools": data.tool_definitions(data.TOOLS),
        "tool_choice": "auto",
        "temperature": 0.0,
        "max_tokens": 128,
        "return_token_ids": True,
    }
    choice = post(base + "/v1/chat/completions", body)["choices"][0]
    calls = choice["message"].get("tool_calls") or []
    command = None
    if calls and calls[0]["function"]["name"] == "bash":
        command = json.loads(calls[0]["function"]["arguments"]).get("command")
    return command, list(choice.get("token_ids") or [])


def main() -> None:
    from transformers import AutoTokenizer

    from eval.models.organism import data
    from eval.tasks import generated

    model_dir, n, urls = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
    tok = AutoTokenizer.from_pretrained(model_dir)
    before = {u: spec_counters(u) for u in urls}
    results: dict[str, Any] = {u: {"correct": 0, "tokens": []} for u in urls}
    for i in range(n):
        spec = generated.make_spec("heldout", i)
        path, old, new = generated.fix_of({"problem_statement": spec.problem_statement})
        messages = data.trajectory(spec.problem_statement, path, old, new)[:2]
        for u in urls:
            command, ids = first_turn(u, messages)
            results[u]["correct"] += command == data.edit_command(path, old, new)
            results[u]["tokens"].append(ids)
    summary: dict[str, Any] = {"instances": n}
    for u in urls:
        after = spec_counters(u)
        drafts = after.get("num_draft_tokens", 0) - before[u].get("num_draft_tokens", 0)
        accepted = after.get("num_accepted_tokens", 0) - before[u].get("num_accepted_tokens", 0)
        summary[u] = {"first_call_correct": results[u]["correct"], "draft_tokens": drafts, "accepted": accepted,
                      "acceptance": round(accepted / drafts, 3) if drafts else None}  # fmt: skip
    if len(urls) > 1:
        a, b = (results[u]["tokens"] for u in urls[:2])
        summary["equal_token_ids_first_two_servers"] = sum(x == y for x, y in zip(a, b, strict=True))
    compare = int(os.environ.get("ORGANISM_HF_COMPARE", "0"))  # instances to decode with transformers too
    if compare:
        from eval.models.organism import check

        model = check.load(model_dir)
        eos = tok.convert_tokens_to_ids("<|im_end|>")
        same = 0
        for i in range(compare):
            messages = data.solved("heldout", i)
            prompt = tok(data.render(tok, messages[:2], add_generation_prompt=True), add_special_tokens=False)
            same += check.greedy(model, prompt["input_ids"], eos, 128) == results[urls[0]]["tokens"][i]
        summary["equal_to_transformers_greedy"] = f"{same}/{compare}"
    print(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
