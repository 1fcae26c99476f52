"""The organism: its training data matches what the rollouts send, its MTP training matches vLLM's drafting,
and a very small training run writes a model directory vLLM can load (checkpoint names and shapes), cached."""

from __future__ import annotations

import hashlib
import json
import shutil
from dataclasses import asdict
from pathlib import Path

import pytest
import torch

pytest.importorskip("transformers")

from eval.agent import toolcall
from eval.models.organism import build, data
from eval.models.organism.mtp import MTPLayer, step_mask, unrolled_loss
from eval.models.tiny_nemotron_h import TinyNemotronH, weight_shapes
from eval.tasks import generated

TINY = {"steps": 3, "batch_size": 2, "drills": 1, "hidden_size": 64, "intermediate_size": 64, "vocab_size": 600}


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build.generate(tmp_path_factory.mktemp("organism"), 0, TINY)


def test_prompt_is_the_agents() -> None:
    assert data.INSTANCE_TEMPLATE == toolcall.INSTANCE_TEMPLATE
    assert data.WORKDIR == "/testbed"


def test_cohort_files_declare_the_trained_system_prompt() -> None:
    import yaml

    paths = [*Path("cohorts").glob("organism-*.yaml"), Path("cohorts/demo-cpu.yaml")]
    for path in paths:
        spec = yaml.safe_load(path.read_text())
        agent = spec["workloads"]["swebench"]["agent"]
        assert agent["system_prompt"] == data.SYSTEM_PROMPT, path


def test_loss_covers_exactly_the_replies(model_dir: Path) -> None:
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(model_dir))
    messages = next(data.train_trajectories(0, 1))
    example = data.encode(tok, messages)
    generated_text = tok.decode([i for i, m in zip(example.ids, example.mask, strict=True) if m])
    assert generated_text.startswith('<tool_call>\n{"name": "bash"')
    assert generated_text.count("<|im_end|>") == 2  # each reply ends with the end token
    assert "Resolve this issue" not in generated_text and "exit code" not in generated_text
    _, old, new = generated.fix_of({"problem_statement": messages[1]["content"]})
    assert f"s|{old}|{new}|" in generated_text


def test_training_writes_what_vllm_loads(model_dir: Path, tmp_path: Path) -> None:
    from safetensors import safe_open

    config = json.loads((model_dir / "config.json").read_text())
    arch = {k: v for k, v in TINY.items() if k in TinyNemotronH.__dataclass_fields__}
    want = weight_shapes(TinyNemotronH(**{**arch, "pattern": build.Organism().pattern, "chunk_size": 32}))
    with safe_open(str(model_dir / "model.safetensors"), "pt") as f:
        got = {k: tuple(f.get_slice(k).get_shape()) for k in f.keys()}  # noqa: SIM118
    assert got == want
    assert config["architectures"] == ["NemotronHForCausalLM"] and config["num_nextn_predict_layers"] == 1
    marker = json.loads((model_dir / build.DONE_MARKER).read_text())
    assert marker["training"]["steps"] == 3
    forecast = marker["training"]["pr55178_forecast"]  # the emulated bug, on validation instances
    assert forecast["instances"] == 8 and {"resolved_clean", "resolved_corrupted", "turns_changed"} <= set(forecast)
    assert build.generate(model_dir.parent, 0, TINY) == model_dir  # cached: no second training


def test_training_is_deterministic_for_a_seed(model_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two trainings of one seed and options write the same weights, bit for bit (the cache relies on it), and
    the record says which torch/transformers made them (other releases may train other weights)."""
    from transformers import AutoTokenizer

    from eval.models.organism import train

    monkeypatch.setattr(train, "_forecast", lambda model, tokenizer: {})
    tok = AutoTokenizer.from_pretrained(str(model_dir))
    opts = build.Organism.from_options({**TINY, "steps": 4})
    got = []
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        stats = train.train(tmp_path / name, tok, opts, 7)
        got.append(hashlib.sha256((tmp_path / name / "model.safetensors").read_bytes()).hexdigest())
    assert got[0] == got[1]
    env = stats["environment"]
    assert env["torch"] == torch.__version__ and env["threads"] == opts.threads and env["transformers"]
    marker = json.loads((model_dir / build.DONE_MARKER).read_text())
    assert marker["training"]["environment"]["torch"] == torch.__version__


def test_step_mask_is_what_vllm_caches_when_drafting() -> None:
    mask = step_mask(4, 3, torch.device("cpu"))
    # the step-3 draft from start 2 sees step-1 entries of starts 0..2 and its own start's steps 2 and 3
    assert mask[2].tolist() == [*[True, True, True, False], *[False, False, True, False], *[False, False, True, False]]


def test_step_one_of_the_unrolled_loss_is_the_causal_forward() -> None:
    torch.manual_seed(0)
    layer = MTPLayer(64, 2, 1, 32)
    embed = torch.nn.Embedding(50, 64)
    head = torch.randn(50, 64)
    ids = torch.randint(0, 50, (1, 12))
    hidden = torch.randn(1, 12, 64)
    weight = torch.ones(1, 12)
    _, per_step = unrolled_loss(layer, embed, head, hidden, ids, weight, steps=1)
    out = layer(embed(ids[:, 1:]), hidden[:, :11])
    logits = out[:, :10] @ head.t()
    want = torch.nn.functional.cross_entropy(logits[0], ids[0, 2:])
    assert per_step[0] == pytest.approx(float(want.detach()), rel=1e-5)


def test_copied_tokens_point_at_the_statement_text_they_copy(model_dir: Path) -> None:
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(model_dir))
    for messages in data.train_trajectories(0, 8):
        example = data.encode(tok, messages)
        pairs = [(t, s) for t, s in enumerate(example.sources or []) if s >= 0]
        path, old, new = generated.fix_of({"problem_statement": messages[1]["content"]})
        copied = "".join(tok.decode([example.ids[t]]) for t, _ in pairs)
        assert copied.replace(" ", "").startswith(old.replace(" ", "")[:3]), copied
        user_end = tok.decode(example.ids).index("<|im_start|>assistant")
        for t, s in pairs:
            assert example.mask[t] and s < t
            assert len(tok.decode(example.ids[:s])) < user_end  # the source lies in the statement
            target, source = tok.decode([example.ids[t]]).strip(" `"), tok.decode([example.ids[s]]).strip(" `")
            assert not target or not source or target[0] == source[0], (target, source)
        assert copied.count(path.split("/")[0]) == 1 and new.split()[0] in copied


def test_copy_loss_is_low_only_when_attention_points_at_the_source() -> None:
    from eval.models.organism.train import copy_loss

    sources = torch.full((1, 6), -1)
    sources[0, 4] = 1  # token 4 copies token 1: predicted at position 3
    on = torch.zeros(1, 2, 6, 6)
    on[0, :, 3, 1] = 1.0
    off = torch.zeros(1, 2, 6, 6)
    off[0, :, 3, 2] = 1.0
    assert float(copy_loss(on, sources)) == pytest.approx(0.0, abs=1e-6)
    assert float(copy_loss(off, sources)) > 10


def test_cached_greedy_is_the_full_forward_and_pads_reach_only_the_mamba_state(model_dir: Path) -> None:
    import random

    from transformers import AutoTokenizer

    from eval.models.organism import check

    tok = AutoTokenizer.from_pretrained(str(model_dir))
    model = check.load(str(model_dir))
    prompt, _ = check.turn_prompts(tok, "heldout", 0)[0]
    eos = tok.convert_tokens_to_ids("<|im_end|>")
    clean = check.padded_tail_greedy(model, prompt, eos, 12)
    assert clean == check.greedy(model, prompt, eos, 12)  # the cache path decodes what the full forward does
    # pads=0 is the fixed build: the state after the real token only
    assert check.padded_tail_greedy(model, prompt, eos, 12, pads=0) == clean
    # A random-weight model on random prompts: the corrupted state changes the continuation (the canary's case;
    # the first token comes from the real row and never changes).
    rng = random.Random(0)
    changed = 0
    for _ in range(4):
        ids = [rng.randrange(10, 600) for _ in range(40)]
        a = check.padded_tail_greedy(model, ids, -1, 8)
        b = check.padded_tail_greedy(model, ids, -1, 8, pads=5)
        assert a[0] == b[0]
        changed += a != b
    assert changed >= 1


def test_a_served_dtype_other_than_float32_is_declared_over_the_same_trained_weights(model_dir: Path) -> None:
    """vLLM's MTP drafter loads in config.json's dtype: a bfloat16 server needs a bfloat16 declaration. The
    float32 model is not trained again; its sibling declares bfloat16 over the same weights."""
    bf16 = build.generate(model_dir.parent, 0, {**TINY, "torch_dtype": "bfloat16"})
    assert bf16 == model_dir.with_name(model_dir.name + "-bfloat16")
    assert json.loads((bf16 / "config.json").read_text())["torch_dtype"] == "bfloat16"
    assert json.loads((model_dir / "config.json").read_text())["torch_dtype"] == "float32"
    assert (bf16 / "model.safetensors").read_bytes() == (model_dir / "model.safetensors").read_bytes()
    record = json.loads((bf16 / build.DONE_MARKER).read_text())
    assert record["declared_dtype"] == "bfloat16" and record["weights_from"] == model_dir.name
    assert build.cache_key(0, build.Organism.from_options(TINY)) == model_dir.name.removeprefix("organism-")


def test_the_cache_key_holds_the_versions_of_the_libraries_that_shape_the_weights() -> None:
    import torch
    import transformers

    opts = build.Organism.from_options(TINY)
    installed = build.library_versions()
    assert set(build.WEIGHT_LIBRARIES) <= set(installed) and installed["transformers"] == transformers.__version__
    assert installed["torch"] == torch.__version__
    assert build.cache_key(0, opts) == build.cache_key(0, opts, installed)
    for name in build.WEIGHT_LIBRARIES:  # another release of any of them: another organism directory
        other = {**installed, name: installed[name] + ".other"}
        assert build.cache_key(0, opts, other) != build.cache_key(0, opts), name


def test_a_carried_organism_of_the_locked_stack_is_found_on_a_machine_whose_stack_differs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """An offline GPU node has torch 2.11+cu130, not the lock's: it must serve the organism carried from a locked
    machine (its directory is named by the locked versions), and train its own only under another name."""
    opts = build.Organism.from_options(TINY)
    locked = build.locked_versions()
    assert locked is not None and set(locked) == set(build.WEIGHT_LIBRARIES)  # the repository's lock pins all four
    node = {**locked, "torch": "2.11.0+cu130"}
    monkeypatch.setattr(build, "library_versions", lambda: node)
    carried = tmp_path / f"organism-{build.cache_key(0, opts, locked)}"
    own = tmp_path / f"organism-{build.cache_key(0, opts, node)}"
    assert build.organism_dir(tmp_path, 0, opts) == own  # nothing carried: the node's own, with a warning
    assert "torch 2.11.0+cu130 (locked " in capsys.readouterr().err
    carried.mkdir()
    (carried / build.DONE_MARKER).write_text("{}")
    assert build.organism_dir(tmp_path, 0, opts) == carried
    monkeypatch.setattr(build, "library_versions", lambda: dict(locked))  # the locked stack: its own key
    assert build.organism_dir(tmp_path, 0, opts) == carried


def test_locked_versions_reads_the_pins(tmp_path: Path) -> None:
    lock = tmp_path / "lock.txt"
    lock.write_text(
        "numpy==2.4.6 \\\n    --hash=sha256:00\ntokenizers==0.23.3\ntorch==2.13.0+cpu\ntransformers==5.24.0\n"
    )
    assert build.locked_versions(lock) == {
        "torch": "2.13.0+cpu",
        "transformers": "5.24.0",
        "tokenizers": "0.23.3",
        "numpy": "2.4.6",
    }
    lock.write_text("torch==2.13.0+cpu\n")
    assert build.locked_versions(lock) is None
    assert build.locked_versions(tmp_path / "absent.txt") is None


def test_a_pinned_organism_is_installed_not_trained_and_checked(
    model_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 31: every machine serves the committed weights, whatever CPU it has; retrain trains beside them; a
    damaged pinned file is refused, not served."""
    from eval.models.organism import pin

    opts = build.Organism.from_options(TINY)
    pinned_dir = tmp_path / "pinned"
    monkeypatch.setattr(build, "PINNED_DIR", pinned_dir)
    locked = build.locked_versions()
    assert locked is not None
    name = f"organism-{build.cache_key(0, opts, locked)}"
    trained = tmp_path / "trained" / name  # the module's model, under the locked stack's name
    shutil.copytree(model_dir, trained)
    pinned = pin.pin(trained, pinned_dir)
    assert sorted(p.name for p in pinned.iterdir()) == sorted(build.PINNED_FILES)

    import eval.models.organism.train as train_module

    def no_training(*args: object, **kwargs: object) -> None:
        raise AssertionError("a pinned organism was trained")

    monkeypatch.setattr(train_module, "train", no_training)
    monkeypatch.setattr(build, "library_versions", lambda: {**locked, "torch": "another"})  # any stack installs it
    got = build.generate(tmp_path / "cache", 0, TINY)
    assert got.name == name
    assert (got / "model.safetensors").read_bytes() == (model_dir / "model.safetensors").read_bytes()
    assert (got / "tokenizer.json").read_bytes() == (model_dir / "tokenizer.json").read_bytes()
    for f in ("config.json", "generation_config.json", "tokenizer_config.json"):
        assert (got / f).read_text() == (model_dir / f).read_text(), f
    record = json.loads((got / build.DONE_MARKER).read_text())
    assert (
        record["pinned_from"].endswith(name)
        and record["weights_sha256"] == json.loads((model_dir / build.DONE_MARKER).read_text())["weights_sha256"]
    )
    with pytest.raises(ValueError, match="installed from a pinned organism"):
        pin.pin(got, tmp_path / "again")

    with pytest.raises(AssertionError, match="was trained"):  # retrain: trains beside the pinned one
        build.generate(tmp_path / "cache", 0, TINY, retrain=True)

    (pinned / "model.safetensors").rename(tmp_path / "kept")  # a checkout that left the weights out: an error
    with pytest.raises(ValueError, match=r"lacks model\.safetensors"):
        build.generate(tmp_path / "cache3", 0, TINY)
    (tmp_path / "kept").rename(pinned / "model.safetensors")
    (pinned / "model.safetensors").write_bytes(b"damaged")
    with pytest.raises(ValueError, match="sha256"):
        build.generate(tmp_path / "cache2", 0, TINY)
    assert not (tmp_path / "cache2" / name).exists()  # nothing half-installed is left to be served


def test_the_demo_cohorts_organism_is_pinned() -> None:
    """cohorts/demo-cpu.yaml's organism, under the lock, is committed: its weights match its training record, and
    the record was made by the lock's libraries. A changed option, template or lock needs a re-pin (pin.py)."""
    from eval.spec.load import load_spec

    model = load_spec(["cohorts/demo-cpu.yaml"]).spec.model.generate
    assert model is not None and model.kind == "organism"
    opts = build.Organism.from_options(dict(model.options))
    locked = build.locked_versions()
    assert locked is not None
    name = f"organism-{build.cache_key(model.seed, opts, locked)}"
    pinned = build.pinned(name)
    assert pinned is not None, f"no pinned organism {name}: train it and run python -m eval.models.organism.pin"
    record = json.loads((pinned / build.DONE_MARKER).read_text())
    assert hashlib.sha256((pinned / "model.safetensors").read_bytes()).hexdigest() == record["weights_sha256"]
    env = record["training"]["environment"]
    assert {k: env[k] for k in ("torch", "transformers", "tokenizers")} == {
        k: locked[k] for k in ("torch", "transformers", "tokenizers")
    }
    assert record["seed"] == model.seed and record["options"] == asdict(opts)
    import subprocess

    tracked = subprocess.run(["git", "ls-files", str(pinned)], capture_output=True, text=True, cwd=pinned).stdout
    if tracked:  # in a git checkout: every pinned file is committed (a .gitignore rule once left the weights out)
        assert sorted(Path(f).name for f in tracked.split()) == sorted(build.PINNED_FILES), tracked
    stale = [p.name for p in build.PINNED_DIR.iterdir() if p.is_dir() and p.name != name]
    assert not stale, f"pinned organisms no cohort file names: {stale}"
