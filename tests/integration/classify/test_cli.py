"""`specqual classify` and `specqual classify-messages` as real subprocesses on a run directory built here."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SPECQUAL = [sys.executable, "-c", "from eval.cli import main; main()"]
LEAK = "<tool_call>\n<function=bash>\n<parameter=command>\nls\n</parameter>\n</function>\n</tool_call>"


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONIOENCODING": "utf-8"}
    return subprocess.run([*SPECQUAL, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120)


def turn(i: int, content: str = "", calls: list | None = None, observation: str = "", **kw) -> dict:
    rec = {
        "schema_version": 1,
        "turn": i,
        "request_id": f"r{i}",
        "server": "http://127.0.0.1:8000",
        "latency_s": 0.5,
        "finish_reason": "tool_calls" if calls else "stop",
        "content": content,
        "reasoning_content": "Plan.",
        "tool_calls": calls if calls is not None else [],
        "token_ids": None,
        "prompt_token_ids": None,
        "usage": {"prompt_tokens": 10, "completion_tokens": 5},
        "observation": observation,
        "feedback": None,
        "error": None,
    }
    rec.update(kw)
    return rec


def tool(name: str, args: dict) -> dict:
    return {"id": "c", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}


def write_unit(cohort_dir: Path, instance: str, repeat: int, records: list[dict]) -> Path:
    unit = cohort_dir / "units" / instance / f"r{repeat}"
    unit.mkdir(parents=True)
    with (unit / "trajectory.jsonl").open("w", encoding="utf-8") as f:
        for rec in records:
            f.write(json.dumps(rec, ensure_ascii=False) + "\n")
    (unit / "verdict.json").write_text(json.dumps({"schema_version": 1, "status": "completed"}))
    (unit / "grade.json").write_text(json.dumps({"schema_version": 1, "status": "resolved", "resolved": True}))
    return unit


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    run = tmp_path / "results" / "demo-run"
    run.mkdir(parents=True)
    spec = {"workloads": {"swebench": {"agent": {"tools": ["bash", "submit"]}}}}
    (run / "run.json").write_text(json.dumps({"schema_version": 1, "run_id": "demo-run", "spec": spec}))
    for name, parser in (("patched-mtp5", "qwen3_coder"), ("unpatched-mtp5", "qwen3_coder")):
        (run / name).mkdir()
        (run / name / "cohort.json").write_text(
            json.dumps({"schema_version": 1, "name": name, "tool_call_parser": parser})
        )
    clean = [
        turn(0, calls=[tool("bash", {"command": "ls"})], observation="setup.py\n"),
        turn(1, calls=[tool("submit", {})]),
    ]
    write_unit(run / "patched-mtp5", "django__django-11099", 0, clean)
    bad = [
        turn(0, calls=[tool("bash", {"command": "ls"})], observation="setup.py\n"),
        turn(1, content="The fix\ufffd is " + LEAK),
        turn(2, content="", reasoning_content=""),
    ]
    write_unit(run / "unpatched-mtp5", "django__django-11099", 0, bad)
    unit = write_unit(run / "unpatched-mtp5", "astropy__astropy-12907", 1, clean)
    with (unit / "trajectory.jsonl").open("a", encoding="utf-8") as f:
        f.write('{"schema_version": 1, "turn": 2, "content": "cut\n')  # a damaged last line
    return run


def test_classify_writes_labels_next_to_every_unit_and_touches_nothing_else(run_dir: Path):
    before = {p: p.read_bytes() for p in run_dir.rglob("*") if p.is_file()}
    proc = run("classify", str(run_dir), cwd=run_dir.parent)
    assert proc.returncode == 0, proc.stderr
    assert "classified 3 units, 1 corrupted" in proc.stdout
    assert "1 trajectory lines were not JSON" in proc.stderr
    after = {p: p.read_bytes() for p in run_dir.rglob("*") if p.is_file() and p.name != "labels.json"}
    assert after == before  # grades, verdicts and trajectories untouched

    labels = json.loads((run_dir / "unpatched-mtp5/units/django__django-11099/r0/labels.json").read_text())
    assert labels["schema_version"] == 1 and labels["corrupted"] is True and labels["first_corrupted_turn"] == 1
    assert labels["labels"]["replacement_char"] == 1 and labels["labels"]["leaked_tool_xml"] == 1
    assert labels["labels"]["empty_response"] == 1 and labels["labels"]["missing_tool_call"] == 2
    ev = labels["turns"][0]["evidence"][0]
    assert set(ev) >= {"label", "field", "start", "end", "text"}
    clean = json.loads((run_dir / "patched-mtp5/units/django__django-11099/r0/labels.json").read_text())
    assert clean["corrupted"] is False and clean["turns"] == []


def test_classify_is_idempotent(run_dir: Path):
    assert run("classify", str(run_dir), cwd=run_dir.parent).returncode == 0
    first = sorted((p, p.read_text()) for p in run_dir.rglob("labels.json"))
    assert run("classify", str(run_dir), cwd=run_dir.parent).returncode == 0
    assert sorted((p, p.read_text()) for p in run_dir.rglob("labels.json")) == first


def test_classify_refuses_a_directory_that_is_not_a_run(tmp_path: Path):
    proc = run("classify", str(tmp_path), cwd=tmp_path)
    assert proc.returncode == 2 and "not a run directory" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_classify_messages(tmp_path: Path):
    src, dst = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    msgs = [
        {"role": "assistant", "content": "", "tool_calls": [tool("bash", {"command": "ls"})]},
        {"role": "assistant", "content": '[TOOL_CALLS]bash[ARGS]{"command": "ls"}', "tool_calls": []},
        {"role": "assistant", "content": "ItâĢĻs done", "reasoning_content": None, "tool_calls": [tool("submit", {})]},
    ]
    src.write_text("".join(json.dumps(m) + "\n" for m in msgs), encoding="utf-8")
    proc = run("classify-messages", str(src), str(dst), "--tool-format", "mistral", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    out = [json.loads(line) for line in dst.read_text(encoding="utf-8").splitlines()]
    # No tools given: nothing is assumed about them (no missing_tool_call).
    assert [o["labels"] for o in out] == [[], ["leaked_tool_xml"], ["byte_piece"]]
    # A request/response pair carries its own context: `required` makes the call-less reply a missing call.
    pair = {
        "request": {"tools": [{"type": "function", "function": {"name": "bash"}}], "tool_choice": "required"},
        "response": {"choices": [{"message": msgs[1], "finish_reason": "stop"}]},
    }
    src.write_text(json.dumps(pair) + "\n", encoding="utf-8")
    proc = run("classify-messages", str(src), str(dst), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(dst.read_text(encoding="utf-8"))["labels"] == ["leaked_tool_xml", "missing_tool_call"]


def test_classify_messages_bad_input_is_one_line_exit_2(tmp_path: Path):
    proc = run("classify-messages", str(tmp_path / "missing.jsonl"), str(tmp_path / "o.jsonl"), cwd=tmp_path)
    assert proc.returncode == 2 and "no such file" in proc.stderr
    (tmp_path / "in.jsonl").write_text("{}\n")
    (tmp_path / "tools.json").write_text("{}")
    proc = run("classify-messages", "in.jsonl", "o.jsonl", "--tools", "tools.json", cwd=tmp_path)
    assert proc.returncode == 2 and proc.stderr.startswith("error: --tools")
    proc = run("classify-messages", "in.jsonl", "o.jsonl", "--tool-format", "bogus", cwd=tmp_path)
    assert proc.returncode == 2


def test_classify_decides_byte_pieces_from_token_ids_with_a_tokenizer(tmp_path: Path):
    tokenizers = pytest.importorskip("tokenizers")
    from tokenizers import decoders, models, pre_tokenizers

    vocab = {c: i for i, c in enumerate(sorted(pre_tokenizers.ByteLevel.alphabet()))}
    tok = tokenizers.Tokenizer(models.BPE(vocab=vocab, merges=[]))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.save(str(tmp_path / "tokenizer.json"))
    maltese = "IlĠ-ĠĠunjuĠ"  # what the model really generated: the ids decode to it
    run_path = tmp_path / "run"
    (run_path / "c").mkdir(parents=True)
    (run_path / "c" / "cohort.json").write_text(
        json.dumps({"schema_version": 1, "name": "c", "tool_call_parser": "hermes"})
    )
    records = [turn(0, content=maltese, calls=[tool("submit", {})], token_ids=tok.encode(maltese).ids)]
    unit = write_unit(run_path / "c", "i", 0, records)

    proc = run("classify", str(run_path), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert json.loads((unit / "labels.json").read_text())["labels"]["byte_piece"] == 1  # from the text alone
    proc = run("classify", str(run_path), "--tokenizer", str(tmp_path / "tokenizer.json"), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert json.loads((unit / "labels.json").read_text())["labels"]["byte_piece"] == 0
    proc = run("classify", str(run_path), "--tokenizer", str(tmp_path / "nope"), cwd=tmp_path)
    assert proc.returncode == 2 and proc.stderr.startswith("error: --tokenizer")
