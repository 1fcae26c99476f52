"""The organism's training record names the CPU's instruction-set extensions that kernels dispatch on (two AVX512
machines, with and without AMX / AVX512-FP16, trained different weights from one seed and lock)."""

from __future__ import annotations

from pathlib import Path

from eval.models.organism.train import ISA_FLAGS, cpu_isa


def test_cpu_isa_lists_the_dispatch_flags_in_a_fixed_order(tmp_path: Path) -> None:
    info = tmp_path / "cpuinfo"
    info.write_text("processor\t: 0\nflags\t\t: fpu sse2 amx_tile avx2 avx512f fma\n\nprocessor\t: 1\n")
    assert cpu_isa(str(info)) == ["avx2", "fma", "avx512f", "amx_tile"]
    assert cpu_isa(str(tmp_path / "missing")) is None
    assert set(cpu_isa() or []) <= set(ISA_FLAGS)
