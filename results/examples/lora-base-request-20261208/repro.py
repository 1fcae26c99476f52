"""A base-model request on a LoRA server must not depend on the adapter requests beside it.

Sends the request of requests.json's `r1` (no adapter, greedy) to the server alone, then again while `bg` (adapter
lora-a, streaming 512 tokens) decodes; each with its own cache_salt (no prefix-cache hit between them). Exit 1 when
the two outputs differ (the case fuzz-000 of cov-lora-1208: specqual's LoRA cohorts), 0 when they agree. Last, the
same request naming lora-a (what the base request would get if the adapter were applied to it).
"""

import json
import sys
import threading
import time

import requests

URL = sys.argv[1].rstrip("/")
REQ = json.load(open("requests.json"))


def body(name, salt, stream):
    b = {"model": "tiny-llama", "prompt": REQ[name]["prompt"], "return_token_ids": True, "cache_salt": salt}
    b.update(REQ[name]["params"])
    b.pop("logprobs", None)
    b["stream"] = stream
    return b


def complete_once(name, salt, model=None):
    b = body(name, salt, False)
    if model:
        b["model"] = model
    r = requests.post(URL + "/v1/completions", json=b, timeout=600)
    r.raise_for_status()
    return r.json()["choices"][0]["token_ids"]


started = threading.Event()
stop = threading.Event()


def background():
    b = body("bg", "bg", True)
    with requests.post(URL + "/v1/completions", json=b, stream=True, timeout=600) as r:
        n = 0
        for line in r.iter_lines():
            if line.startswith(b"data: ") and line != b"data: [DONE]":
                n += 1
                if n >= 3:
                    started.set()
            if stop.is_set():
                break


alone = complete_once("r1", "alone")
print("r1 alone:         ", alone)
t = threading.Thread(target=background, daemon=True)
t.start()
started.wait(300)
time.sleep(0.2)
busy = complete_once("r1", "busy")
stop.set()
print("r1 beside lora-a: ", busy)
again = complete_once("r1", "again")
print("r1 alone again:   ", again)
as_adapter = complete_once("r1", "adapter", model="lora-a")
print("r1 as lora-a:     ", as_adapter)
if alone != busy:
    first = next(i for i, (a, b) in enumerate(zip(alone, busy)) if a != b) if any(
        a != b for a, b in zip(alone, busy)) else min(len(alone), len(busy))
    print(f"DIFFER at output token {first}: a base-model request changed with an adapter request beside it")
    sys.exit(1)
print("same output")
