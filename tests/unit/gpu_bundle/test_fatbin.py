"""Fat-binary slimming: only the target architecture's cubins (and PTX where no cubin exists) keep payloads."""

from __future__ import annotations

import zipfile
from pathlib import Path

from eval.stacks.fatbin import ELF_KINDS, KIND_PTX, _entries, build_container, slim
from eval.stacks.slim_wheel import slim_wheel

ELF = ELF_KINDS[0]


def _payloads(blob: bytes | bytearray, start: int) -> dict[tuple[int, int], bytes]:
    parsed = _entries(blob, start)
    assert parsed is not None
    entries, _ = parsed
    return {(e.kind, e.arch): bytes(blob[e.data_offset : e.data_offset + e.data_size]) for e in entries}


def test_keeps_target_cubin_and_zeroes_the_rest_at_the_same_offsets() -> None:
    with_cubin = build_container([(ELF, 80, b"A" * 13), (ELF, 90, b"B" * 21), (KIND_PTX, 80, b"P" * 9)])
    ptx_only = build_container([(ELF, 100, b"C" * 5), (KIND_PTX, 80, b"Q" * 11)])
    prefix = b"\x7fELF junk \x50\xed\x55\xba not-a-header "
    blob = bytearray(prefix + with_cubin + b"gap" + ptx_only + b"tail")
    size = len(blob)
    stats = slim(blob, 90)
    assert len(blob) == size and blob.endswith(b"tail") and blob.startswith(prefix)
    first = _payloads(blob, len(prefix))
    assert first[(ELF, 90)] == b"B" * 21  # the H200's cubin
    assert first[(ELF, 80)] == bytes(13)  # another architecture's cubin
    assert first[(KIND_PTX, 80)] == bytes(9)  # PTX is not needed where a cubin exists
    second = _payloads(blob, len(prefix) + len(with_cubin) + 3)
    assert second[(KIND_PTX, 80)] == b"Q" * 11  # no sm_90 cubin here: the driver JITs this PTX
    assert second[(ELF, 100)] == bytes(5)
    assert stats.containers == 2 and stats.entries == 5 and stats.kept == 2
    assert stats.zeroed_bytes == 13 + 9 + 5


def test_truncated_container_is_left_alone() -> None:
    blob = bytearray(build_container([(ELF, 80, b"A" * 40)])[:-16])
    before = bytes(blob)
    assert slim(blob, 90).containers == 0
    assert bytes(blob) == before


def test_slim_wheel_drops_fa_patches_init_and_rewrites_record(tmp_path: Path) -> None:
    src = tmp_path / "vllm-0.0.0-cp38-abi3-linux_x86_64.whl"
    fa_init = "X = 1\nif not (FA2_AVAILABLE or FA3_AVAILABLE):\n    raise ImportError(\n        'no'\n    )\n"
    files = {
        "vllm/__init__.py": b"",
        "vllm/vllm_flash_attn/__init__.py": fa_init.encode(),
        "vllm/vllm_flash_attn/_vllm_fa2_C.abi3.so": b"x" * 100,
        "vllm/third_party/deep_gemm/_C.cpython-311-x86_64-linux-gnu.so": b"311",
        "vllm/third_party/deep_gemm/_C.cpython-312-x86_64-linux-gnu.so": b"312",
        "vllm/_C_stable_libtorch.abi3.so": b"head" + build_container([(ELF, 80, b"A" * 8), (ELF, 90, b"B" * 8)]),
        "vllm-0.0.0.dist-info/RECORD": b"stale",
    }
    with zipfile.ZipFile(src, "w") as z:
        for name, data in files.items():
            z.writestr(name, data)
    dst = tmp_path / "slim.whl"
    report = slim_wheel(src, dst, arch=90, python_tag="312")
    with zipfile.ZipFile(dst) as z:
        names = set(z.namelist())
        assert "vllm/vllm_flash_attn/_vllm_fa2_C.abi3.so" not in names
        assert "vllm/third_party/deep_gemm/_C.cpython-311-x86_64-linux-gnu.so" not in names
        assert "vllm/third_party/deep_gemm/_C.cpython-312-x86_64-linux-gnu.so" in names
        assert "if False:" in z.read("vllm/vllm_flash_attn/__init__.py").decode()
        lib = z.read("vllm/_C_stable_libtorch.abi3.so")
        assert b"B" * 8 in lib and b"A" * 8 not in lib
        record = z.read("vllm-0.0.0.dist-info/RECORD").decode().splitlines()
    assert any(line.startswith("vllm/_C_stable_libtorch.abi3.so,sha256=") for line in record)
    assert len(record) == len(names)
    assert report.slimmed == {"vllm/_C_stable_libtorch.abi3.so": 8}
