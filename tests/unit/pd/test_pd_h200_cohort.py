"""cohorts/pr55178-pd-h200.yaml: four P/D cohorts whose commands put a NIXL prefill and decode worker side by side.

No GPU needed: the file is loaded and expanded, and the process commands that `eval.stacks.launch` would run are
checked (roles, connector, speculation on both workers, the Mamba conv layout NIXL asserts, no test-only patch).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from eval.spec.load import LoadedSpec, load_spec
from eval.spec.models import PDTopology
from eval.stacks.commands import cohort_commands

REPO = Path(__file__).resolve().parents[3]
COHORT_FILE = REPO / "cohorts" / "pr55178-pd-h200.yaml"


def flag(argv: list[str], name: str) -> str | None:
    return argv[argv.index(name) + 1] if name in argv else None


@pytest.fixture(scope="module")
def loaded() -> LoadedSpec:
    return load_spec([str(COHORT_FILE)])


def test_four_pd_cohorts_and_two_comparisons(loaded: LoadedSpec) -> None:
    names = [c.name for c in loaded.cohorts]
    assert names == ["released-off", "released-mtp5", "backport-off", "backport-mtp5"]
    assert all(isinstance(c.topology, PDTopology) for c in loaded.cohorts)
    assert {(c.cohort, c.control) for c in loaded.spec.comparisons} == {
        ("released-mtp5", "released-off"),
        ("backport-mtp5", "backport-off"),
    }


def test_no_test_only_patch_the_connector_leaves_the_tail(loaded: LoadedSpec) -> None:
    patches = {name: [p.file for p in b.patches] for name, b in loaded.spec.builds.items()}
    assert patches == {"released": [], "backport": ["patches/pr55178-backport-v0.26.0.patch"]}
    assert "SPECQUAL_NO_EAGLE_BLOCK_DROP" not in loaded.spec.server.env


@pytest.mark.parametrize("cohort", ["released-off", "released-mtp5", "backport-off", "backport-mtp5"])
def test_commands_prefill_decode_and_proxy(loaded: LoadedSpec, cohort: str) -> None:
    c = next(c for c in loaded.cohorts if c.name == cohort)
    procs = cohort_commands(loaded.spec, c, "/models/tiny")
    assert [p.key for p in procs] == ["prefill.0", "decode.0", "router.0"]
    roles = {p.role: json.loads(flag(p.argv, "--kv-transfer-config") or "{}") for p in procs[:2]}
    assert roles == {
        "prefill": {"kv_connector": "NixlConnector", "kv_role": "kv_producer"},
        "decode": {"kv_connector": "NixlConnector", "kv_role": "kv_consumer"},
    }
    for p in procs[:2]:
        assert p.gpus == 1
        assert p.env["VLLM_SSM_CONV_STATE_LAYOUT"] == "DS"  # NixlConnector asserts it for Mamba state
        assert "--no-enable-prefix-caching" in p.argv
        spec = flag(p.argv, "--speculative-config")
        if cohort.endswith("mtp5"):  # both workers carry the MTP layer's KV cache: same layers to transfer
            assert spec is not None and json.loads(spec)["num_speculative_tokens"] == 5
        else:
            assert spec is None
    router = procs[2].argv
    assert router[1:3] == ["-m", "eval.stacks.toy_proxy"]
    assert flag(router, "--prefill") == "{url.prefill.0}" and flag(router, "--decode") == "{url.decode.0}"


def test_canary_modes_for_pd(loaded: LoadedSpec) -> None:
    cfg = loaded.spec.workloads.canary
    assert cfg is not None
    assert cfg.modes == ["prefix_hit_concurrent", "fresh"]
    assert cfg.reference == "released-off"
