"""Make the organism's model directory: tokenizer, config, trained weights (main stack + MTP layer), template.

Cached like every generated model: the directory name is a hash of the generator version, the seed, the
options, the chat template, the system prompt and the task generator's version, and a marker file written last
says it is complete. Training is seeded and deterministic on CPU (torch deterministic algorithms, a fixed
thread count), so the same options give the same weights on every run with the same torch and transformers
releases; another release can train different weights from the same seed (transformers 5.24 and 5.25 part at
step 8 of seed 1). So the key holds the versions of the libraries that shape the weights (`WEIGHT_LIBRARIES`):
an upgrade trains a new organism instead of reusing one that another stack made, and the marker records the
whole environment (`training.environment`). locks/specqual.txt pins them (scripts/setup.sh installs it).

The key names the LOCKED versions (`locked_versions`), so an organism trained by the locked stack and carried to a
machine whose stack differs (an offline GPU node: torch 2.11+cu130) is found there under the same name instead of
being trained again into other weights. Training happens under the locked key only when the installed versions are
the locked ones; otherwise the directory is found or trained under the installed versions' key, with a warning.

Pinned organisms (issue 31). Even under the lock, the bits depend on the CPU: an Intel machine with AMX and
AVX512-FP16 trained other bits from the same seed and lock than an Intel AVX512 machine and an AMD Zen 4 machine,
which agree (docs/trust/organism.md). So the weights a cohort file's
organism names are committed beside this module (`pinned/organism-KEY/`: the weights, the tokenizer and the
training record, about 2 MB) and installed from there, checked against the record's `weights_sha256`, whatever CPU
or library versions this machine has: every machine serves the same organism. `retrain=True` (or the
environment variable SPECQUAL_TRAIN_ORGANISM=1) trains instead, into `organism-KEY-trained`, and
benchmarks/bench_organism_retrain.py checks that training on the recorded CPU class gives the pinned
bits. `python -m eval.models.organism.pin MODEL_DIR` pins a trained organism.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import sys
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path
from typing import Any

from eval.models.hf_files import build_once, from_options, write_tokenizer_files
from eval.models.organism import data
from eval.tasks import generated

GENERATOR_VERSION = 2
# The libraries whose release changes the trained weights or the tokenizer: the tokenizer is trained by
# `tokenizers`, the model and its optimizer run in torch and transformers' NemotronH, numpy seeds nothing here but
# converts batches in the checks. Their versions are part of the cache key.
WEIGHT_LIBRARIES = ("torch", "transformers", "tokenizers", "numpy")
DONE_MARKER = "specqual-generated.json"
PINNED_DIR = Path(__file__).resolve().parent / "pinned"
PINNED_FILES = ("model.safetensors", "tokenizer.json", DONE_MARKER)  # what a pinned organism holds
TRAIN_ENV = "SPECQUAL_TRAIN_ORGANISM"  # "1": train the organism even where a pinned one exists
SPECIAL_TOKENS = ["<pad>", "<s>", "</s>", "<|im_start|>", "<|im_end|>"]
TOOL_TOKENS = ["<tool_call>", "</tool_call>", "<tools>", "</tools>", "<tool_response>", "</tool_response>"]


@dataclass(frozen=True)
class Organism:
    """Options (cohort file: `model.generate.options`): the architecture, then the training budget."""

    # Two attention layers learn to copy from the statement (the emergence needs ~700-1,000 steps); one does not
    # within 1,500 (docs/trust/organism.md, the recipe sweep).
    pattern: str = "M*M*-"
    hidden_size: int = 96
    vocab_size: int = 1024
    num_attention_heads: int = 2
    num_key_value_heads: int = 1
    head_dim: int = 32  # CPU attention needs >= 32
    intermediate_size: int = 192
    mamba_num_heads: int = 4
    mamba_head_dim: int = 32
    n_groups: int = 1
    ssm_state_size: int = 16
    chunk_size: int = 32  # the reference scan is much faster with short chunks; block_size 64 is a multiple
    steps: int = 1500  # at most; training stops earlier once the validation check passes (below)
    batch_size: int = 16
    drills: int = 0  # rows per batch that are copy drills instead of trajectories
    learning_rate: float = 2e-3
    warmup_steps: int = 40
    mtp_steps: int = 3  # draft steps unrolled in training
    mtp_weight: float = 1.0
    copy_weight: float = 1.0  # attention supervision of the copy (train.copy_loss); 0 turns it off
    # Stop when the greedy first reply is exact on at least `target_exact` of `check_instances` instances of the
    # `valid` split (never the held-out one) at two checks in a row, checking every `check_every` steps from
    # `check_from` on. target_exact 0 turns the check off: all `steps` run.
    target_exact: float = 0.95
    check_instances: int = 40
    check_every: int = 100
    check_from: int = 600
    threads: int = 2
    device: str = "cpu"  # "cuda" for recipe sweeps on a GPU node; the demo trains on CPU
    # The dtype config.json declares, set from the served dtype (eval.stacks.models.FOLLOWS_SERVED_DTYPE). vLLM's
    # MTP drafter loads in the config's dtype, not the served one: vLLM 0.26.0 serving a float32-declared organism
    # at bfloat16 dies at start-up in the MTP layer ("mat1 and mat2 ... BFloat16 != float"). Training is the same
    # whatever it says: the float32 model is trained (or reused) and a sibling directory declares the other dtype.
    torch_dtype: str = "float32"

    @classmethod
    def from_options(cls, options: dict[str, Any]) -> Organism:
        return from_options(cls, "organism", options)

    def hf_config(self) -> dict[str, Any]:
        from eval.models.tiny_nemotron_h import TinyNemotronH, hf_config

        arch = {f.name: getattr(self, f.name) for f in fields(TinyNemotronH) if hasattr(self, f.name)}
        config = hf_config(TinyNemotronH(**arch, mtp_pattern="*"))
        config["eos_token_id"] = SPECIAL_TOKENS.index("<|im_end|>")
        return config


def library_versions() -> dict[str, str]:
    """The installed release of each of `WEIGHT_LIBRARIES` ("absent" when one is not installed)."""
    from importlib.metadata import PackageNotFoundError, version

    found = {}
    for name in WEIGHT_LIBRARIES:
        try:
            found[name] = version(name)
        except PackageNotFoundError:
            found[name] = "absent"
    return found


LOCK_FILE = Path(__file__).resolve().parents[3] / "locks" / "specqual.txt"


def locked_versions(lock: Path = LOCK_FILE) -> dict[str, str] | None:
    """Each of `WEIGHT_LIBRARIES` as the project's lock pins it, or None without a lock that pins all of them
    (specqual installed as a package, without the repository)."""
    try:
        text = lock.read_text(encoding="utf-8")
    except OSError:
        return None
    pins = {}
    for name in WEIGHT_LIBRARIES:
        m = re.search(rf"^{re.escape(name)}==(\S+)", text, flags=re.M)
        if m is None:
            return None
        pins[name] = m.group(1)
    return pins


def cache_key(seed: int, opts: Organism, libraries: dict[str, str] | None = None) -> str:
    """The organism's directory name: generator, seed, options, template, prompt, task generator, and the library
    versions that shape the weights (`libraries`, default: the installed ones)."""
    trained = {k: v for k, v in asdict(opts).items() if k != "torch_dtype"}  # the weights do not depend on it
    blob = json.dumps(
        {
            "v": GENERATOR_VERSION,
            "libraries": libraries if libraries is not None else library_versions(),
            "seed": seed,
            "opts": trained,
            "template": data.CHAT_TEMPLATE_FILE.read_text(encoding="utf-8"),
            "system": data.SYSTEM_PROMPT,
            "tasks": generated.GENERATOR_VERSION,
        },
        sort_keys=True,
    )
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def generate(out_dir: Path, seed: int, options: dict[str, Any], retrain: bool | None = None) -> Path:
    """Install the pinned organism (or train it, or reuse a cached one) under `out_dir`; return its model directory
    (for a `torch_dtype` other than float32, a sibling that declares it over the same weights). `retrain`: train
    even where a pinned organism exists (default: the environment variable `TRAIN_ENV`)."""
    opts = Organism.from_options(dict(options))
    if retrain is None:
        retrain = os.environ.get(TRAIN_ENV, "") == "1"
    base = train_once(Path(out_dir), seed, replace(opts, torch_dtype="float32"), retrain)
    if opts.torch_dtype == "float32":
        return base
    return build_once(
        base.with_name(f"{base.name}-{opts.torch_dtype}"),
        DONE_MARKER,
        lambda tmp: declare_dtype(base, tmp, opts.torch_dtype),
    )


def declare_dtype(base: Path, tmp: Path, dtype: str) -> dict[str, Any]:
    """Fill `tmp` with the files of the trained model `base`, config.json declaring `dtype`; the weights stay as
    trained (float32: vLLM casts them when it loads)."""
    for f in sorted(base.iterdir()):
        if f.is_file() and f.name != DONE_MARKER:
            shutil.copy2(f, tmp / f.name)
    config = json.loads((tmp / "config.json").read_text())
    config["torch_dtype"] = dtype
    (tmp / "config.json").write_text(json.dumps(config, indent=2) + "\n")
    record: dict[str, Any] = json.loads((base / DONE_MARKER).read_text())
    return {**record, "declared_dtype": dtype, "weights_from": base.name}


def pinned(name: str) -> Path | None:
    """The committed organism of that directory name, or None; ValueError when it is there but incomplete (a
    checkout that left the weights out must not fall back to training other bits unnoticed)."""
    d = PINNED_DIR / name
    if not d.is_dir():
        return None
    missing = [f for f in PINNED_FILES if not (d / f).is_file()]
    if missing:
        raise ValueError(f"{d}: the pinned organism lacks {', '.join(missing)} (a checkout without them? "
                         ".gitignore, git lfs); restore them, or remove the directory to train instead")  # fmt: skip
    return d


def organism_dir(out_dir: Path, seed: int, opts: Organism) -> Path:
    """Where the organism lives: under the locked versions' key when it is pinned, when that directory exists
    (trained here or carried from a locked machine) or when this environment is the locked one; otherwise under
    the installed versions' key (another stack trains other weights: it must not take the locked organism's
    name)."""
    installed = library_versions()
    locked = locked_versions()
    if locked is not None:
        name = f"organism-{cache_key(seed, opts, locked)}"
        if pinned(name) is not None:
            return out_dir / name
    if locked is None or locked == installed:
        return out_dir / f"organism-{cache_key(seed, opts, installed)}"
    carried = out_dir / f"organism-{cache_key(seed, opts, locked)}"
    if (carried / DONE_MARKER).exists():
        return carried
    own = out_dir / f"organism-{cache_key(seed, opts, installed)}"
    if not (own / DONE_MARKER).exists():
        differ = ", ".join(f"{k} {installed[k]} (locked {locked[k]})" for k in locked if locked[k] != installed[k])
        print(
            f"organism: this environment is not the locked training stack ({differ}), and {carried.name} (the "
            f"locked organism) is not in {out_dir}: training {own.name}, whose weights differ from the README's. "
            "To serve the locked organism here, train it where locks/specqual.txt is installed (`specqual stack "
            "model COHORT_FILE`) and copy its directory into this cache (MODELS_DIR on a GPU node).",
            file=sys.stderr,
        )
    return own


def train_once(out_dir: Path, seed: int, opts: Organism, retrain: bool = False) -> Path:
    target = organism_dir(out_dir, seed, opts)
    pin = pinned(target.name)
    if retrain and pin is not None:
        target, pin = target.with_name(target.name + "-trained"), None
    if pin is not None:
        return build_once(target, DONE_MARKER, lambda tmp: install_pinned(pin, tmp, opts))

    def write(tmp: Path) -> dict[str, Any]:
        tokenizer = write_tokenizer(tmp, opts, seed)
        write_config(tmp, opts)
        from eval.models.organism.train import train

        stats = train(tmp, tokenizer, opts, seed)
        # What the weights came out as: the same inputs and library versions give the same bits (the demo's
        # organism test compares it with the committed example's).
        weights = weights_sha256(tmp)
        return {"seed": seed, "options": asdict(opts), "training": stats, "weights_sha256": weights}

    return build_once(target, DONE_MARKER, write)


def weights_sha256(d: Path) -> str:
    """What a training record's `weights_sha256` holds: the sha256 of `d/model.safetensors`."""
    return hashlib.sha256((d / "model.safetensors").read_bytes()).hexdigest()


def write_chat_tokenizer_files(d: Path) -> None:
    """The tokenizer's config files beside `d/tokenizer.json`, with the organism's chat template."""
    write_tokenizer_files(d, data.CHAT_TEMPLATE_FILE.read_text(encoding="utf-8"), 4096)


def write_config(d: Path, opts: Organism) -> None:
    config = opts.hf_config()
    (d / "config.json").write_text(json.dumps(config, indent=2) + "\n")
    gen = {"bos_token_id": 1, "eos_token_id": config["eos_token_id"], "pad_token_id": 0}
    (d / "generation_config.json").write_text(json.dumps(gen, indent=2) + "\n")


def install_pinned(pin: Path, tmp: Path, opts: Organism) -> dict[str, Any]:
    """Fill `tmp` with the pinned organism `pin` (weights and tokenizer as trained; config and tokenizer files
    written as training writes them); the marker is the training record, with where it came from."""
    record: dict[str, Any] = json.loads((pin / DONE_MARKER).read_text())
    if record.get("options") != asdict(opts):
        raise ValueError(f"{pin}: its training record's options differ from the cohort's ({asdict(opts)})")
    shutil.copy2(pin / "tokenizer.json", tmp / "tokenizer.json")
    write_chat_tokenizer_files(tmp)
    write_config(tmp, opts)
    shutil.copy2(pin / "model.safetensors", tmp / "model.safetensors")
    weights = weights_sha256(tmp)
    if weights != record["weights_sha256"]:
        raise ValueError(f"{pin}/model.safetensors: sha256 {weights[:12]}, its record says "
                         f"{record['weights_sha256'][:12]} (a damaged checkout? git lfs?)")  # fmt: skip
    print(f"organism: installed the pinned organism {pin.name} (weights {weights[:12]}, trained on "
          f"{record['training']['environment'].get('cpu_isa')}); {TRAIN_ENV}=1 trains it here instead",
          file=sys.stderr)  # fmt: skip
    return {**record, "pinned_from": str(pin.relative_to(PINNED_DIR.parents[3]))}


def tokenizer_corpus(count: int = 600) -> list[str]:
    from tokenizers import Tokenizer, models
    from transformers import PreTrainedTokenizerFast

    renderer = PreTrainedTokenizerFast(tokenizer_object=Tokenizer(models.BPE()))
    renderer.chat_template = data.CHAT_TEMPLATE_FILE.read_text(encoding="utf-8")
    return [data.render(renderer, m) for m in data.train_trajectories(0, count)]


def write_tokenizer(d: Path, opts: Organism, seed: int) -> Any:
    """A byte-level BPE trained on rendered training trajectories; returns the transformers tokenizer."""
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    # A plain byte-level BPE: isolating punctuation and digits (so copied spans tokenize alike in the statement
    # and the command) made sequences 30% longer and did not speed up learning to copy (docs/trust/organism.md).
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=opts.vocab_size - len(TOOL_TOKENS),
        special_tokens=SPECIAL_TOKENS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(tokenizer_corpus(), trainer=trainer)
    tok.add_tokens([AddedToken(t, special=False, normalized=False) for t in TOOL_TOKENS])
    tok.save(str(d / "tokenizer.json"))
    write_chat_tokenizer_files(d)
    return PreTrainedTokenizerFast.from_pretrained(str(d))
