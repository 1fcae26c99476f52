#!/usr/bin/env python3
"""Speculative decoding changes output: pr44993-self4 vs stock-off (1 request(s))

A standalone reproducer written by `specqual repro` (specqual is not needed to run it: Python 3.8+ and httpx).
It sends the minimal requests below to the server under test and checks its output against the speculation-off
reference: the reference's recorded output (default), or a live reference server (--reference-url). It exits 1
when the bug shows, 0 when it does not, 2 when a server could not be reached.

    python repro.py --cohort-url http://127.0.0.1:8000                 # against the recorded expected output
    python repro.py --cohort-url URL --reference-url URL2               # against a live reference
    python repro.py --start                                             # start both servers from SERVERS first
"""

import argparse
import asyncio
import json
import os
import signal
import subprocess
import sys
import time
import uuid

import httpx

DATA = json.loads(r"""{
 "case": {
  "index": 1,
  "requests": [
   {
    "abort_after_tokens": null,
    "after": null,
    "banned_sequences": [
     [
      339
     ]
    ],
    "derive": {},
    "endpoint": "completions",
    "features": [
     "bad_words",
     "structured:derived_regex",
     "reasoning:open"
    ],
    "messages": null,
    "params": {
     "ignore_eos": false,
     "logprobs": 5,
     "max_tokens": 32,
     "structured_outputs": {
      "regex": "\u0155<\\/think>v[XYZ]{1,4}"
     },
     "temperature": 0.0
    },
    "prompt_token_ids": [
     264,
     86,
     399,
     279,
     454,
     321,
     363,
     73,
     309,
     82,
     357,
     86,
     348,
     225,
     264,
     86,
     399,
     376,
     84,
     457,
     313,
     433,
     414,
     88,
     308,
     86,
     270,
     315,
     225,
     75,
     69,
     81,
     81,
     69,
     487,
     321,
     285,
     81,
     291,
     500,
     225,
     71,
     277,
     81,
     323,
     279,
     498,
     325,
     271,
     84,
     309,
     69,
     72,
     225,
     315,
     361,
     79,
     225,
     483,
     423,
     313,
     80,
     84,
     76,
     69,
     279,
     454,
     344,
     69,
     323,
     279,
     498,
     379,
     92,
     325,
     271,
     84,
     225,
     289,
     225,
     339,
     321,
     432,
     225,
     331,
     86,
     327,
     93,
     225,
     333,
     321,
     432,
     344,
     69,
     323,
     225,
     333,
     225,
     411,
     69,
     72,
     225,
     315,
     361,
     79,
     313,
     80,
     84,
     76,
     69,
     225,
     71,
     80,
     83,
     268,
     312,
     295,
     268,
     225,
     81,
     83,
     72,
     89,
     80,
     73,
     279,
     454,
     488,
     313,
     80,
     84,
     76,
     69,
     309,
     88,
     423,
     313,
     433,
     414,
     88,
     309,
     485,
     344,
     318,
     72,
     83,
     91,
     279,
     73,
     80,
     88,
     69,
     470,
     225,
     75,
     69,
     81,
     81,
     69,
     313,
     433,
     414,
     88,
     308,
     471,
     225,
     73,
     347,
     308,
     73,
     88,
     69,
     344,
     318,
     72,
     83,
     91,
     376,
     84,
     457,
     391,
     468,
     225,
     411,
     69,
     72,
     225,
     264,
     86,
     399,
     391,
     510
    ],
    "reasoning_end_ids": [],
    "role": "r1",
    "start_ms": 277,
    "stream": true,
    "until_others_done": false
   }
  ],
  "schema_version": 1,
  "seed": 1,
  "server": {
   "args": {},
   "name": "default"
  },
  "shrunk_from": 6
 },
 "expected": {
  "r1": {
   "aborted": false,
   "error": null,
   "finish_reason": "stop",
   "ids": [
    134,
    248,
    511,
    134,
    248,
    32,
    19,
    282,
    77,
    82,
    79,
    34,
    90,
    61,
    4
   ],
   "logprobs": [
    -0.9216973185539246,
    -1.1802842617034912,
    -1.3654133081436157,
    0.0,
    0.0,
    -0.5555827617645264,
    0.0,
    -0.3323708474636078,
    -0.2829539179801941,
    0.0,
    0.0,
    0.0,
    0.0,
    -0.05124927684664726,
    -0.02159685082733631
   ],
   "refused": null,
   "top": [
    {
     "121": -2.9654033184051514,
     "134": -0.9216973185539246,
     "281": -2.8250715732574463,
     "367": -2.910144567489624,
     "511": -2.2773282527923584
    },
    {
     "183": -3.4319355487823486,
     "248": -1.1802842617034912,
     "270": -3.17934250831604,
     "350": -3.444323778152466,
     "383": -2.8552753925323486
    },
    {
     "172": -1.4874635934829712,
     "242": -3.2738308906555176,
     "284": -3.704379081726074,
     "465": -2.7207255363464355,
     "511": -1.3654133081436157
    },
    {
     "0": -9999.0,
     "1": -9999.0,
     "134": 0.0,
     "3": -9999.0,
     "4": -9999.0
    },
    {
     "0": -9999.0,
     "1": -9999.0,
     "248": 0.0,
     "3": -9999.0,
     "4": -9999.0
    },
    {
     "1": -9999.0,
     "3": -9999.0,
     "32": -0.5555827617645264,
     "4": -9999.0,
     "511": -0.8527007102966309
    },
    {
     "0": -9999.0,
     "1": -9999.0,
     "19": 0.0,
     "3": -9999.0,
     "4": -9999.0
    },
    {
     "1": -9999.0,
     "282": -0.3323708474636078,
     "3": -9999.0,
     "4": -9999.0,
     "88": -1.2630906105041504
    },
    {
     "1": -9999.0,
     "3": -9999.0,
     "318": -1.4006142616271973,
     "4": -9999.0,
     "77": -0.2829539179801941
    },
    {
     "0": -9999.0,
     "1": -9999.0,
     "3": -9999.0,
     "4": -9999.0,
     "82": 0.0
    },
    {
     "0": -9999.0,
     "1": -9999.0,
     "3": -9999.0,
     "4": -9999.0,
     "79": 0.0
    },
    {
     "0": -9999.0,
     "1": -9999.0,
     "3": -9999.0,
     "34": 0.0,
     "4": -9999.0
    },
    {
     "0": -9999.0,
     "1": -9999.0,
     "3": -9999.0,
     "4": -9999.0,
     "90": 0.0
    },
    {
     "1": -9999.0,
     "3": -9999.0,
     "60": -3.0115060806274414,
     "61": -0.05124927684664726,
     "62": -7.207884788513184
    },
    {
     "1": -9999.0,
     "4": -0.02159685082733631,
     "60": -5.177837371826172,
     "61": -4.169956684112549,
     "62": -8.209219932556152
    }
   ]
  }
 },
 "logprob_tolerance": 0.5,
 "model": "tiny-llama",
 "recorded_actual": {},
 "servers": {
  "cohort": {
   "base_url": "http://127.0.0.1:26131",
   "cohort": "pr44993-self4",
   "commands": [
    {
     "argv": [
      "/root/.cache/specqual/envs/b9a62bc29bcf41b3/bin/python",
      "-m",
      "vllm.entrypoints.openai.api_server",
      "--model",
      "/root/.cache/specqual/models/tiny-llama-6ef970acfcd5cde9",
      "--served-model-name",
      "tiny-llama",
      "--dtype",
      "float32",
      "--max-model-len",
      "2048",
      "--reasoning-parser",
      "deepseek_r1",
      "--host",
      "127.0.0.1",
      "--port",
      "26131",
      "--speculative-config",
      "{\"method\":\"draft_model\",\"model\":\"/root/.cache/specqual/models/tiny-llama-6ef970acfcd5cde9\",\"num_speculative_tokens\":4}",
      "--enforce-eager",
      "--block-size",
      "64",
      "--enable-prefix-caching",
      "--enable-prompt-tokens-details",
      "--max-num-batched-tokens",
      "32"
     ],
     "env": {
      "PYTHONPATH": "/root/.cache/specqual/overlays/pr44993-reverted-26963108fdec03fd",
      "VLLM_CPU_KVCACHE_SPACE": "1",
      "VLLM_TARGET_DEVICE": "cpu"
     },
     "role": "server"
    }
   ]
  },
  "reference": {
   "base_url": "http://127.0.0.1:22441",
   "cohort": "stock-off",
   "commands": [
    {
     "argv": [
      "/root/.cache/specqual/envs/b9a62bc29bcf41b3/bin/python",
      "-m",
      "vllm.entrypoints.openai.api_server",
      "--model",
      "/root/.cache/specqual/models/tiny-llama-6ef970acfcd5cde9",
      "--served-model-name",
      "tiny-llama",
      "--dtype",
      "float32",
      "--max-model-len",
      "2048",
      "--reasoning-parser",
      "deepseek_r1",
      "--host",
      "127.0.0.1",
      "--port",
      "22441",
      "--enforce-eager",
      "--block-size",
      "64",
      "--enable-prefix-caching",
      "--enable-prompt-tokens-details",
      "--max-num-batched-tokens",
      "32"
     ],
     "env": {
      "PYTHONPATH": "/root/.cache/specqual/overlays/stock-62e6f4dc0f70eb57",
      "VLLM_CPU_KVCACHE_SPACE": "1",
      "VLLM_TARGET_DEVICE": "cpu"
     },
     "role": "server"
    }
   ]
  }
 }
}""")
CASE, SERVERS, EXPECTED, RECORDED = DATA["case"], DATA["servers"], DATA["expected"], DATA["recorded_actual"]
LOGPROB_TOLERANCE = DATA.get("logprob_tolerance", 0.5)


def body_of(req, model, salt):
    body = {"model": model, "return_token_ids": True}
    body.update(req["params"])
    k = body.pop("logprobs", None)
    if req["endpoint"] == "chat":
        body["messages"] = req["messages"]
        if k:
            body.update(logprobs=True, top_logprobs=k, return_tokens_as_token_ids=True)
    else:
        body["prompt"] = req["prompt_token_ids"]
        if k:
            body.update(logprobs=k, return_tokens_as_token_ids=True)
    if salt:
        body["cache_salt"] = salt  # a fresh prefix-cache namespace per run: only this run's requests can hit
    if req.get("stream", True):
        body.update(stream=True, stream_options={"include_usage": True})
    return body


def take(out, choice, chat):
    out["ids"] += [int(t) for t in choice.get("token_ids") or []]
    lp = choice.get("logprobs") or {}
    if chat:
        msg = choice.get("delta") or choice.get("message") or {}
        out["text"] += msg.get("content") or ""
        out["logprobs"] += [e.get("logprob") for e in lp.get("content") or []]
    else:
        out["text"] += choice.get("text") or ""
        out["logprobs"] += list(lp.get("token_logprobs") or [])
        out["top"] += [dict(t or {}) for t in lp.get("top_logprobs") or []]
    if choice.get("finish_reason"):
        out["finish_reason"] = choice["finish_reason"]


async def send(http, req, model, salt, outs, started, others_done):
    out = outs[req["role"]]
    path = "/v1/chat/completions" if req["endpoint"] == "chat" else "/v1/completions"
    body, chat = body_of(req, model, salt), req["endpoint"] == "chat"
    try:
        if not req.get("stream", True):
            r = await http.post(path, json=body)
            if r.status_code != 200:
                out["refused" if r.status_code < 500 else "error"] = "HTTP %d: %s" % (r.status_code, r.text[:200])
                return
            take(out, r.json()["choices"][0], chat)
            return
        async with http.stream("POST", path, json=body) as r:
            if r.status_code != 200:
                text = (await r.aread())[:200]
                out["refused" if r.status_code < 500 else "error"] = "HTTP %d: %s" % (r.status_code, text)
                return
            async for line in r.aiter_lines():
                if not line.startswith("data:") or line[5:].strip() == "[DONE]":
                    continue
                data = json.loads(line[5:].strip())
                if "error" in data:  # an error after the 200: a refusal (400) or a failed engine
                    err = data["error"] if isinstance(data["error"], dict) else {"message": str(data["error"])}
                    out["refused" if err.get("code") == 400 else "error"] = str(err.get("message"))[:300]
                    break
                for c in data.get("choices") or []:
                    if int(c.get("index", 0)) == 0:
                        take(out, c, chat)
                if out["ids"]:
                    started[req["role"]].set()
                abort = req.get("abort_after_tokens")
                if abort and len(out["ids"]) >= abort:
                    out["aborted"] = True
                    break
                if req.get("until_others_done") and others_done.is_set():
                    out["aborted"] = True  # a long request the others joined: closed once they are done
                    break
    except httpx.HTTPError as e:
        out["error"] = "%s: %s" % (type(e).__name__, e)
    finally:
        started[req["role"]].set()


async def run_case(base_url, model, salt):
    reqs = CASE["requests"]
    outs = {r["role"]: {"ids": [], "text": "", "logprobs": [], "top": [], "finish_reason": None} for r in reqs}
    started = {r["role"]: asyncio.Event() for r in reqs}
    async with httpx.AsyncClient(base_url=base_url.rstrip("/"), timeout=600) as http:
        for r in reqs:
            if r["role"] == "w":
                await send(http, r, model, salt, outs, started, None)

        others_done = asyncio.Event()

        async def one(r):
            if r.get("after") in started:
                try:
                    await asyncio.wait_for(started[r["after"]].wait(), 120)
                except asyncio.TimeoutError:
                    pass
            if r.get("start_ms"):  # after `after`'s first token when both are set
                await asyncio.sleep(r["start_ms"] / 1000)
            await send(http, r, model, salt, outs, started, others_done)

        async def others():
            await asyncio.gather(*(one(r) for r in reqs if r["role"] != "w" and not r.get("until_others_done")))
            others_done.set()

        await asyncio.gather(others(), *(one(r) for r in reqs if r.get("until_others_done")))
    return outs


def self_checks(req, ids):
    """The request's own contract: no stop id before min_tokens, no banned token sequence."""
    p, found = req["params"], []
    stops, min_tokens = set(p.get("stop_token_ids") or []), int(p.get("min_tokens") or 0)
    for i, t in enumerate(ids):
        if t in stops and i < min_tokens:
            found.append("stop id %d at token %d, before min_tokens %d" % (t, i, min_tokens))
    for seq in req.get("banned_sequences") or []:
        for i in range(len(ids) - len(seq) + 1):
            if seq and ids[i : i + len(seq)] == seq:
                found.append("banned token sequence %s at token %d" % (seq, i))
    return found


def problems(req, out, expected):
    """Why this output shows the bug (empty: it does not)."""
    p, ids = req["params"], out["ids"]
    found = self_checks(req, ids)
    if found and expected is not None and self_checks(req, expected["ids"]):
        found = []  # speculation off breaks the contract the same way: not a speculative bug
    if expected is None or float(p.get("temperature") or 0) > 0:
        return found
    exp = expected["ids"]
    if out.get("aborted") or expected.get("aborted"):
        n = min(len(ids), len(exp))  # a closed stream is compared on the prefix both sides got
    else:
        n = max(len(ids), len(exp))
    diff = [i for i in range(n) if i >= len(ids) or i >= len(exp) or ids[i] != exp[i]]
    if diff:
        d = diff[0]
        found.append(
            "token %d differs: expected %s, got %s"
            % (d, exp[d : d + 8] if d < len(exp) else "(end)", ids[d : d + 8] if d < len(ids) else "(end)")
        )
    elif not out.get("aborted") and not expected.get("aborted") and out.get("finish_reason") != expected.get(
        "finish_reason"
    ):
        found.append("finish_reason %r where expected %r" % (out.get("finish_reason"), expected.get("finish_reason")))
    else:
        deltas = [
            abs(a - b)
            for a, b in zip(out["logprobs"], expected.get("logprobs") or [])
            if a is not None and b is not None
        ]
        if deltas and max(deltas) > LOGPROB_TOLERANCE:
            found.append("logprobs of identical tokens differ by up to %.3g nats" % max(deltas))
    return found


def start_servers():
    procs = []
    for side in ("cohort", "reference"):
        for cmd in SERVERS[side].get("commands") or []:
            if not os.path.exists(cmd["argv"][0]):
                sys.exit("cannot start %s: %s is not here (start it yourself, pass --%s-url)" % (side, cmd["argv"][0], side))
            env = dict(os.environ, **cmd.get("env", {}))
            procs.append(subprocess.Popen(cmd["argv"], env=env, start_new_session=True))
    for side in ("cohort", "reference"):
        url = SERVERS[side]["base_url"]
        deadline = time.time() + 900
        while time.time() < deadline:
            try:
                if httpx.get(url + "/v1/models", timeout=5).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            time.sleep(2)
    return procs


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cohort-url", default=SERVERS["cohort"]["base_url"], help="the server under test")
    ap.add_argument("--reference-url", default=None, help="a live speculation-off reference (default: recorded)")
    ap.add_argument("--model", default=DATA["model"], help="served model name")
    ap.add_argument("--repeats", type=int, default=1, help="runs; exit 1 if the bug shows in any")
    ap.add_argument("--start", action="store_true", help="start both servers from SERVERS (their commands)")
    args = ap.parse_args()
    procs = start_servers() if args.start else []
    for url in [args.cohort_url] + ([args.reference_url] if args.reference_url else []):
        try:
            httpx.get(url.rstrip("/") + "/v1/models", timeout=30).raise_for_status()
        except httpx.HTTPError as e:
            print("cannot reach %s: %s" % (url, e))
            return 2
    if args.start:
        args.reference_url = args.reference_url or SERVERS["reference"]["base_url"]
    shown = 0
    try:
        for k in range(args.repeats):
            salt = uuid.uuid4().hex
            outs = asyncio.run(run_case(args.cohort_url, args.model, salt))
            refs = asyncio.run(run_case(args.reference_url, args.model, salt)) if args.reference_url else EXPECTED
            bad = False
            for req in CASE["requests"]:
                out, exp = outs[req["role"]], refs.get(req["role"])
                if (exp or {}).get("error"):
                    print("run %d %s: the reference failed too: %s" % (k + 1, req["role"], exp["error"]))
                    return 2
                if (exp or {}).get("refused"):
                    print("run %d request %s: the reference refused it too; not compared" % (k + 1, req["role"]))
                    continue
                if out.get("refused") and not out.get("error"):
                    print("run %d request %s: refused by the server (%s)" % (k + 1, req["role"], out["refused"][:120]))
                    continue
                if out.get("error"):  # the reference answered this request: the engine under test failed it
                    found = ["the server under test failed the request: %s" % out["error"][:300]]
                else:
                    found = problems(req, out, exp)
                bad = bad or bool(found)
                print("run %d request %s: %s" % (k + 1, req["role"], "; ".join(found) if found else "as expected"))
                if found and exp is not None:
                    print("  expected: %s" % exp["ids"][:40])
                    print("  actual:   %s" % out["ids"][:40])
            shown += bad
    finally:
        for p in procs:
            try:
                os.killpg(p.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
    print("the bug showed in %d/%d runs" % (shown, args.repeats))
    return 1 if shown else 0


if __name__ == "__main__":
    sys.exit(main())
