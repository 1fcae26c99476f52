#!/usr/bin/env python3
"""Speculative decoding changes output: fixed-mtp5 vs fixed-off (3 request(s))

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
  "index": 9,
  "requests": [
   {
    "abort_after_tokens": null,
    "after": null,
    "banned_sequences": [],
    "derive": {},
    "endpoint": "completions",
    "features": [
     "background"
    ],
    "messages": null,
    "params": {
     "logprobs": 5,
     "max_tokens": 16,
     "temperature": 0.0
    },
    "prompt_token_ids": [
     271,
     84,
     76,
     69,
     225,
     90,
     347,
     77,
     74,
     93,
     482,
     88,
     69,
     275,
     83,
     79,
     266,
     333,
     84,
     349,
     419,
     333,
     268,
     80,
     80,
     333,
     268,
     80,
     80,
     482,
     88
    ],
    "role": "bg",
    "start_ms": 0,
    "stream": true,
    "until_others_done": true
   },
   {
    "abort_after_tokens": null,
    "after": null,
    "banned_sequences": [],
    "derive": {},
    "endpoint": "completions",
    "features": [
     "near_max_model_len",
     "stop_token_ids",
     "joined"
    ],
    "messages": null,
    "params": {
     "ignore_eos": true,
     "logprobs": 5,
     "max_tokens": 2,
     "stop_token_ids": [
      71,
      407,
      702,
      352,
      261,
      444,
      93,
      396,
      363,
      80,
      351,
      361,
      482,
      79,
      272,
      315,
      283,
      278,
      292,
      436,
      83,
      284,
      92,
      225,
      86,
      353,
      333,
      469,
      375,
      84,
      87,
      460,
      534,
      289,
      354,
      77,
      441,
      327,
      557,
      349,
      356
     ],
     "temperature": 0.0
    },
    "prompt_token_ids": [
     225,
     74,
     353,
     81,
     69,
     88,
     419,
     396,
     225,
     90,
     347,
     77,
     74,
     93,
     225,
     610,
     74,
     88,
     446,
     460,
     80,
     298,
     287,
     225,
     81,
     83,
     72,
     441,
     73,
     225,
     271,
     84,
     76,
     69,
     482,
     88,
     69,
     225,
     347,
     86,
     353,
     305,
     69,
     265,
     305,
     69,
     265,
     225,
     84,
     69,
     88,
     76,
     225,
     262,
     287,
     278,
     225,
     79,
     347,
     351,
     80,
     225,
     81,
     83,
     356,
     80,
     225,
     86,
     283,
     347,
     225,
     261,
     272,
     69,
     81,
     392,
     88,
     73,
     333,
     84,
     349,
     225,
     84,
     303,
     87,
     73,
     225,
     70,
     69,
     88,
     632,
     419,
     225,
     261,
     702,
     363,
     76,
     484,
     79,
     225,
     75,
     69,
     781,
     69,
     305,
     69,
     265,
     482,
     88,
     69,
     225,
     308,
     81,
     265,
     225,
     610,
     74,
     88,
     225,
     81,
     83,
     72,
     441,
     73,
     225,
     606,
     73,
     225,
     90,
     347,
     77,
     74,
     93,
     444,
     728,
     347,
     225,
     557,
     89,
     73,
     225,
     84,
     69,
     88,
     632,
     298,
     537,
     354,
     225,
     304,
     86,
     377,
     508,
     298,
     537,
     354,
     225,
     70,
     89,
     442,
     72,
     275,
     83,
     79,
     266,
     225,
     347,
     86,
     353,
     404,
     84,
     349,
     333,
     84,
     349,
     225,
     70,
     521,
     315,
     225,
     304,
     86,
     377,
     225,
     79,
     347,
     351,
     80,
     363,
     76,
     484,
     79,
     225,
     347,
     86,
     353,
     225,
     70,
     357,
     632,
     225,
     75,
     69,
     781,
     69,
     225,
     90,
     347,
     77,
     74,
     93,
     363,
     76,
     484,
     79,
     482,
     88,
     69,
     225,
     74,
     353,
     81,
     69,
     88,
     363,
     375,
     274,
     482,
     88,
     69,
     225,
     70,
     89,
     442,
     72,
     225,
     356,
     286,
     356,
     419,
     298,
     537,
     354,
     396,
     225,
     606,
     73,
     225,
     70,
     89,
     442,
     72,
     305,
     77,
     82,
     72,
     352,
     333,
     268,
     80,
     80,
     225,
     79,
     347,
     351,
     80,
     298,
     88,
     86,
     93,
     482,
     88,
     69,
     225,
     79,
     347,
     351,
     80,
     333,
     84,
     349,
     225,
     74,
     484,
     534,
     77,
     436,
     225,
     74,
     484,
     534,
     77,
     436,
     225,
     70,
     521,
     315,
     298,
     88,
     86,
     93,
     444,
     728,
     347,
     225,
     304,
     86,
     377,
     225,
     84,
     69,
     88,
     76,
     225,
     89,
     84,
     72,
     69,
     88,
     73,
     225,
     90,
     347,
     77,
     74,
     93,
     225,
     89,
     84,
     72,
     69,
     88,
     73,
     225,
     81,
     83,
     356,
     80,
     225,
     557,
     89,
     73,
     363,
     76,
     484,
     79,
     275,
     83,
     79,
     266,
     225,
     90,
     347,
     77,
     74,
     93,
     298,
     537,
     354,
     225,
     304,
     86,
     377,
     363,
     76,
     484,
     79,
     225,
     84,
     303,
     87,
     73,
     225,
     537,
     347,
     93,
     225,
     84,
     69,
     88,
     76,
     298,
     287,
     305,
     69,
     265,
     225,
     70,
     89,
     442,
     72,
     444,
     728,
     347,
     333,
     84,
     349,
     225,
     327,
     88,
     76,
     436,
     225,
     557,
     89,
     73,
     225,
     86,
     283,
     347,
     225,
     81,
     83,
     356,
     80,
     225,
     70,
     521,
     315,
     225,
     383,
     90,
     347,
     363,
     521,
     87,
     73,
     298,
     287,
     482,
     88,
     69,
     225,
     537,
     347,
     93,
     363,
     375,
     274,
     396,
     225,
     271,
     84,
     76,
     69,
     508,
     225,
     347,
     86,
     353,
     363,
     76,
     484,
     79,
     225,
     284,
     392,
     88,
     73,
     225,
     74,
     353,
     81,
     69,
     88,
     225,
     557,
     89,
     73,
     225,
     271,
     84,
     76,
     69,
     298,
     537,
     354,
     446,
     460,
     80,
     508,
     225,
     347,
     86,
     353,
     225,
     84,
     272,
     606,
     80,
     292,
     84,
     266,
     225,
     74,
     484,
     534,
     77,
     436,
     225,
     274,
     361,
     482,
     88,
     69,
     225,
     304,
     86,
     377,
     225,
     274
    ],
    "role": "r1",
    "start_ms": 0,
    "stream": true,
    "until_others_done": false
   },
   {
    "abort_after_tokens": null,
    "after": null,
    "banned_sequences": [],
    "derive": {},
    "endpoint": "completions",
    "features": [
     "joined",
     "staggered",
     "periodic=7"
    ],
    "messages": null,
    "params": {
     "logprobs": 5,
     "max_tokens": 16,
     "temperature": 0.0
    },
    "prompt_token_ids": [
     268,
     88,
     73,
     225,
     70,
     89,
     442,
     268,
     88,
     73,
     225,
     70,
     89,
     442,
     268
    ],
    "role": "r3",
    "start_ms": 0,
    "stream": true,
    "until_others_done": false
   }
  ],
  "schema_version": 1,
  "seed": 71,
  "server": {
   "args": {},
   "name": "default"
  },
  "shrunk_from": 9
 },
 "expected": {
  "bg": {
   "aborted": false,
   "error": null,
   "finish_reason": "length",
   "ids": [
    96,
    977,
    67,
    422,
    400,
    343,
    451,
    933,
    872,
    203,
    67,
    18,
    12,
    378,
    314,
    461
   ],
   "logprobs": [
    -0.529647171497345,
    -1.0370635986328125,
    -0.0045518833212554455,
    -0.9222307801246643,
    -0.142328679561615,
    -0.38873809576034546,
    -0.0038012643344700336,
    -0.5548804402351379,
    -0.6120067238807678,
    -1.0722558498382568,
    -1.0594203472137451,
    -0.7301906943321228,
    -0.7682703137397766,
    -1.7701088190078735,
    -2.3779335021972656,
    -1.3312480449676514
   ],
   "refused": null,
   "top": [
    {
     "20": -7.708502292633057,
     "22": -7.220335960388184,
     "29": -4.777012825012207,
     "451": -0.9199889302253723,
     "96": -0.529647171497345
    },
    {
     "817": -1.762131690979004,
     "848": -3.2839365005493164,
     "938": -3.1711831092834473,
     "977": -1.0370635986328125,
     "979": -1.5295886993408203
    },
    {
     "12": -6.381493091583252,
     "203": -6.740814685821533,
     "4": -8.134047508239746,
     "488": -8.512801170349121,
     "67": -0.0045518833212554455
    },
    {
     "378": -3.1683859825134277,
     "422": -0.9222307801246643,
     "445": -2.5997729301452637,
     "581": -1.862846851348877,
     "620": -3.6143946647644043
    },
    {
     "391": -3.4031176567077637,
     "400": -0.142328679561615,
     "561": -4.617749214172363,
     "637": -3.83956241607666,
     "893": -6.150893688201904
    },
    {
     "18": -1.8251218795776367,
     "343": -0.38873809576034546,
     "422": -4.707242965698242,
     "445": -4.5454277992248535,
     "581": -4.424121379852295
    },
    {
     "12": -8.40919303894043,
     "203": -8.31911849975586,
     "422": -7.95759391784668,
     "451": -0.0038012643344700336,
     "96": -8.04383659362793
    },
    {
     "1000": -3.2682173252105713,
     "933": -0.5548804402351379,
     "953": -1.8983042240142822,
     "955": -2.4481842517852783,
     "958": -2.3976833820343018
    },
    {
     "715": -2.8353123664855957,
     "727": -3.4262948036193848,
     "798": -2.592297077178955,
     "872": -0.6120067238807678,
     "940": -2.2403922080993652
    },
    {
     "19": -2.234687089920044,
     "20": -2.2666938304901123,
     "203": -1.0722558498382568,
     "451": -1.8614585399627686,
     "522": -3.7866158485412598
    },
    {
     "203": -4.082823276519775,
     "296": -1.0649845600128174,
     "67": -1.0594203472137451,
     "848": -4.066368103027344,
     "973": -3.3811495304107666
    },
    {
     "12": -2.9745492935180664,
     "18": -0.7301906943321228,
     "20": -3.2787275314331055,
     "401": -2.49422025680542,
     "422": -1.7803764343261719
    },
    {
     "12": -0.7682703137397766,
     "327": -2.991807699203491,
     "488": -3.1361401081085205,
     "67": -2.283095121383667,
     "96": -2.60976243019104
    },
    {
     "281": -3.014373779296875,
     "378": -1.7701088190078735,
     "486": -2.540060043334961,
     "548": -2.912991523742676,
     "614": -2.235167980194092
    },
    {
     "314": -2.3779335021972656,
     "400": -3.2974472045898438,
     "629": -2.960491180419922,
     "959": -3.4418692588806152,
     "994": -3.364820957183838
    },
    {
     "461": -1.3312480449676514,
     "473": -3.50290846824646,
     "620": -3.2607882022857666,
     "750": -3.6415107250213623,
     "902": -2.8668720722198486
    }
   ]
  },
  "r1": {
   "aborted": false,
   "error": null,
   "finish_reason": "length",
   "ids": [
    18,
    12
   ],
   "logprobs": [
    -1.5642027854919434,
    -0.2544596493244171
   ],
   "refused": null,
   "top": [
    {
     "18": -1.5642027854919434,
     "20": -2.19332218170166,
     "203": -3.0305700302124023,
     "422": -2.94295597076416,
     "451": -3.042250156402588
    },
    {
     "12": -0.2544596493244171,
     "18": -3.4217255115509033,
     "281": -2.8766233921051025,
     "395": -3.037626028060913,
     "96": -4.32243537902832
    }
   ]
  },
  "r3": {
   "aborted": false,
   "error": null,
   "finish_reason": "length",
   "ids": [
    67,
    422,
    456,
    856,
    12,
    585,
    13,
    12,
    378,
    12,
    548,
    488,
    1001,
    922,
    362,
    12
   ],
   "logprobs": [
    -1.0001463890075684,
    -0.42729735374450684,
    -2.402033805847168,
    -1.1786376237869263,
    -0.1467127948999405,
    -2.2252743244171143,
    -1.365103840827942,
    -0.16816772520542145,
    -0.7106117010116577,
    -0.00019095504831057042,
    -1.1147007942199707,
    -0.18300731480121613,
    -0.19879557192325592,
    -1.2288850545883179,
    -1.325578212738037,
    -0.19045250117778778
   ],
   "refused": null,
   "top": [
    {
     "12": -1.613569736480713,
     "327": -3.416776180267334,
     "362": -2.4074831008911133,
     "4": -3.8570151329040527,
     "67": -1.0001463890075684
    },
    {
     "391": -3.5872342586517334,
     "4": -2.76518177986145,
     "422": -0.42729735374450684,
     "486": -3.688659906387329,
     "608": -3.70049786567688
    },
    {
     "12": -2.8156590461730957,
     "391": -2.639404773712158,
     "456": -2.402033805847168,
     "818": -2.4138364791870117,
     "938": -3.3434500694274902
    },
    {
     "538": -2.489138126373291,
     "547": -2.7703943252563477,
     "630": -1.7551318407058716,
     "688": -2.6446032524108887,
     "856": -1.1786376237869263
    },
    {
     "12": -0.1467127948999405,
     "19": -3.004532814025879,
     "362": -5.580471515655518,
     "367": -4.530266284942627,
     "451": -3.6889519691467285
    },
    {
     "327": -2.293039083480835,
     "548": -2.4480888843536377,
     "585": -2.2252743244171143,
     "616": -2.2669265270233154,
     "817": -2.9288504123687744
    },
    {
     "1019": -3.051334857940674,
     "12": -2.2934627532958984,
     "13": -1.365103840827942,
     "488": -2.2772727012634277,
     "96": -2.52034330368042
    },
    {
     "12": -0.16816772520542145,
     "327": -4.446767330169678,
     "348": -2.4616215229034424,
     "378": -5.689651012420654,
     "488": -3.4135072231292725
    },
    {
     "19": -3.0593652725219727,
     "20": -1.7906759977340698,
     "282": -2.6015586853027344,
     "367": -3.358971118927002,
     "378": -0.7106117010116577
    },
    {
     "12": -0.00019095504831057042,
     "346": -12.074363708496094,
     "362": -11.89033317565918,
     "67": -10.589975357055664,
     "876": -11.712358474731445
    },
    {
     "548": -1.1147007942199707,
     "563": -3.317042350769043,
     "585": -1.3271980285644531,
     "614": -2.5839576721191406,
     "922": -3.026928424835205
    },
    {
     "13": -1.8038502931594849,
     "296": -7.987773418426514,
     "451": -8.57616901397705,
     "486": -8.155599594116211,
     "488": -0.18300731480121613
    },
    {
     "1000": -3.1884100437164307,
     "1001": -0.19879557192325592,
     "891": -4.177444934844971,
     "893": -3.9605705738067627,
     "987": -3.635389566421509
    },
    {
     "683": -2.8494820594787598,
     "798": -1.4731029272079468,
     "872": -2.989656925201416,
     "916": -3.362306594848633,
     "922": -1.2288850545883179
    },
    {
     "20": -1.5711307525634766,
     "282": -1.5990800857543945,
     "362": -1.325578212738037,
     "422": -3.013416290283203,
     "96": -3.035935401916504
    },
    {
     "12": -0.19045250117778778,
     "296": -6.042265892028809,
     "362": -6.645434379577637,
     "391": -3.9966135025024414,
     "488": -1.9515522718429565
    }
   ]
  }
 },
 "logprob_tolerance": 0.5,
 "model": "organism",
 "recorded_actual": {},
 "servers": {
  "cohort": {
   "base_url": "http://127.0.0.1:25369",
   "cohort": "fixed-mtp5",
   "commands": [
    {
     "argv": [
      "/root/.cache/specqual/envs/b9a62bc29bcf41b3/bin/python",
      "-m",
      "vllm.entrypoints.openai.api_server",
      "--model",
      "/root/.cache/specqual/models/organism-417e13f4c5fb6594",
      "--served-model-name",
      "organism",
      "--dtype",
      "float32",
      "--max-model-len",
      "1024",
      "--host",
      "127.0.0.1",
      "--port",
      "25369",
      "--speculative-config",
      "{\"method\":\"mtp\",\"num_speculative_tokens\":5}",
      "--enforce-eager",
      "--block-size",
      "64",
      "--enable-prefix-caching",
      "--mamba-cache-mode",
      "align",
      "--enable-prompt-tokens-details",
      "--max-num-batched-tokens",
      "32"
     ],
     "env": {
      "PYTHONPATH": "/root/.cache/specqual/overlays/fixed-7e3696bbce5fe569",
      "VLLM_CPU_KVCACHE_SPACE": "1",
      "VLLM_TARGET_DEVICE": "cpu"
     },
     "role": "server"
    }
   ]
  },
  "reference": {
   "base_url": "http://127.0.0.1:32541",
   "cohort": "fixed-off",
   "commands": [
    {
     "argv": [
      "/root/.cache/specqual/envs/b9a62bc29bcf41b3/bin/python",
      "-m",
      "vllm.entrypoints.openai.api_server",
      "--model",
      "/root/.cache/specqual/models/organism-417e13f4c5fb6594",
      "--served-model-name",
      "organism",
      "--dtype",
      "float32",
      "--max-model-len",
      "1024",
      "--host",
      "127.0.0.1",
      "--port",
      "32541",
      "--enforce-eager",
      "--block-size",
      "64",
      "--enable-prefix-caching",
      "--mamba-cache-mode",
      "align",
      "--enable-prompt-tokens-details",
      "--max-num-batched-tokens",
      "32"
     ],
     "env": {
      "PYTHONPATH": "/root/.cache/specqual/overlays/fixed-7e3696bbce5fe569",
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
