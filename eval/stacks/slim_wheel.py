"""Slim a CUDA vLLM wheel to one GPU architecture so it fits one transfer to an offline node.

What goes (measured on vLLM 0.26.0 for an H200, see docs/trust/facts.md): the FlashAttention extensions (the Triton
attention backend serves instead), the Rust router binary, deep_gemm builds for other Pythons, bundled C++
header trees, and inside the CUDA extensions the payload of every cubin not built for the target SM (see
`eval.stacks.fatbin`). `vllm/vllm_flash_attn/__init__.py` is changed to import without the FA kernels. The
wheel's RECORD is rewritten with the new hashes, so pip installs it as usual.
"""

from __future__ import annotations

import base64
import fnmatch
import hashlib
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from eval.stacks.fatbin import slim

DROP = (
    "vllm/vllm_flash_attn/_vllm_fa2_C*",
    "vllm/vllm_flash_attn/_vllm_fa3_C*",
    "vllm/vllm-rs",
    "vllm/third_party/*/include/*",
    "vllm/third_party/*/cutlass/include/*",
)
FATBIN_LIBS = ("vllm/_C_stable_libtorch*.so", "vllm/_moe_C_stable_libtorch*.so", "vllm/_C.abi3.so")
FA_GUARD = "if not (FA2_AVAILABLE or FA3_AVAILABLE):\n    raise ImportError("
FA_GUARD_OFF = "if False:  # specqual slim bundle: no FlashAttention kernels\n    raise ImportError("


@dataclass
class SlimReport:
    dropped: list[str] = field(default_factory=list)
    slimmed: dict[str, int] = field(default_factory=dict)  # library -> bytes zeroed
    patched: list[str] = field(default_factory=list)


def _dropped(name: str, python_tag: str, extra: tuple[str, ...] = ()) -> bool:
    if any(fnmatch.fnmatch(name, pat) for pat in (*DROP, *extra)):
        return True
    # deep_gemm ships one extension per CPython: keep only the target's.
    return "third_party/deep_gemm/_C.cpython-" in name and f"cpython-{python_tag}-" not in name


def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def slim_wheel(src: Path, dst: Path, arch: int = 90, python_tag: str = "312", drop: tuple[str, ...] = ()) -> SlimReport:
    """Write a slimmed copy of wheel `src` to `dst` for SM `arch` and CPython `python_tag`; `drop` adds glob
    patterns of members to leave out (e.g. `vllm/_moe_C_stable_libtorch*` for a model without MoE layers)."""
    report = SlimReport()
    records: list[str] = []
    record_info: zipfile.ZipInfo | None = None
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", zipfile.ZIP_STORED) as zout:
        for info in zin.infolist():
            name = info.filename
            if name.endswith(".dist-info/RECORD"):
                record_info = info
                continue
            if _dropped(name, python_tag, drop):
                report.dropped.append(name)
                continue
            data = zin.read(info)
            if any(fnmatch.fnmatch(name, pat) for pat in FATBIN_LIBS):
                blob = bytearray(data)
                report.slimmed[name] = slim(blob, arch).zeroed_bytes
                data = bytes(blob)
            elif name == "vllm/vllm_flash_attn/__init__.py" and FA_GUARD in data.decode():
                data = data.decode().replace(FA_GUARD, FA_GUARD_OFF).encode()
                report.patched.append(name)
            info.compress_type = zipfile.ZIP_STORED
            zout.writestr(info, data)
            records.append(_record_line(name, data))
        if record_info is None:
            raise ValueError(f"{src} has no .dist-info/RECORD: not a wheel")
        records.append(f"{record_info.filename},,")
        # The source's own entry (its date, not today's): the same wheel in gives the same bytes out.
        record_info.compress_type = zipfile.ZIP_STORED
        zout.writestr(record_info, "\n".join(records) + "\n")
    return report
