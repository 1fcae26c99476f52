"""scripts/gpu/slim_nixl.py and scripts/gpu/pd_checks.py: the logic that needs no GPU and no NIXL wheel."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPO / "scripts" / "gpu"))

import pd_checks  # noqa: E402
import slim_nixl  # noqa: E402


def test_needed_closure_follows_sonames_and_names_system_libraries(tmp_path: Path) -> None:
    graph = {
        "pkg/_bindings.so": ["libnixl.so", "libc.so.6"],
        "libs/libnixl.so": ["libgrpc.so", "libstdc++.so.6"],
        "libs/libgrpc.so": ["libabsl.so"],
        "libs/libabsl.so": [],
        "libs/plugins/libplugin_UCX.so": ["libucp.so"],
        "libs/libucp.so": ["libnixl.so"],
        "libs/libunused.so": [],
    }
    for rel in graph:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_bytes(b"")

    def needed(path: Path) -> list[str]:
        return graph[path.relative_to(tmp_path).as_posix()]

    keep, external = slim_nixl.needed_closure(
        tmp_path, ["pkg/_bindings.so", "libs/plugins/libplugin_UCX.so"], ["libs"], needed
    )
    assert keep == set(graph) - {"libs/libunused.so"}
    assert external == {"libc.so.6", "libstdc++.so.6"}


def test_plain_files_keep_python_metadata_and_ucx_descriptors(tmp_path: Path) -> None:
    files = [
        "nixl/__init__.py",
        "nixl_cu13/_api.py",
        "nixl_meta_utils.py",
        "nixl_cu13-1.5.1.dist-info/RECORD",
        "nixl_cu13.libs/ucx/libuct_cuda.la",
        "nixl_cu13.libs/ucx/libuct_ib.la",
        "nixl_ep_cu13/nixl_ep_cpp_torch214.cpython-312-x86_64-linux-gnu.so",
        "nixl_ep/__init__.py",
    ]
    for rel in files:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("x")
    assert slim_nixl.plain_files(tmp_path) == sorted(files[:5])


def test_tail_summary_counts_decode_side_prompt_tokens(tmp_path: Path) -> None:
    probes = tmp_path / "probes"
    probes.mkdir()
    recs = [
        {"mode": "prefix_hit_concurrent", "role": "target", "prompt_tokens": 129, "cached_tokens": 128},
        {"mode": "prefix_hit_concurrent", "role": "target", "prompt_tokens": 129, "cached_tokens": 128},
        {"mode": "fresh", "role": "target", "prompt_tokens": 129, "cached_tokens": None},
    ]
    for i, r in enumerate(recs):
        (probes / f"{i}.json").write_text(json.dumps(r))
    assert pd_checks.tail_summary(tmp_path) == {
        "prefix_hit_concurrent/target": {"1": 2},
        "fresh/target": {"unknown": 1},
    }


def test_owner_matches_a_process_to_its_stack_by_process_group() -> None:
    mine = os.getpgid(os.getpid())
    assert pd_checks.owner(os.getpid(), {mine: ("released-mtp5", "decode.0")}) == ("released-mtp5", "decode.0")
    assert pd_checks.owner(os.getpid(), {}) is None
    assert pd_checks.owner(2**22 + 12345, {mine: ("x", "y")}) is None  # no such process
