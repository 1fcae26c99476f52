"""Slim CUDA fat binaries inside shared libraries to one GPU architecture, in place, keeping every offset.

A `.nv_fatbin` section holds containers (16-byte header, magic 0xBA55ED50) of entries (PTX or ELF cubin, one
per SM architecture), each a header followed by its payload. Zeroing the payloads that a given GPU never loads
keeps section sizes and offsets, so the library still loads, and zeros compress to almost nothing: this is how
a vLLM wheel fits one transfer to an offline node. The CUDA driver picks the cubin of the device's
architecture; PTX is kept where a container has no cubin for it (the driver then JIT-compiles the PTX).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

MAGIC = 0xBA55ED50
_HEADER = struct.Struct("<IHHQ")  # magic, version, header size, size of the entries that follow
_ENTRY = struct.Struct("<HHIIIIIII")  # kind, ?, header size, aligned payload size, pad, payload size, ?, minor, arch
KIND_PTX = 0x01
ELF_KINDS = (0x02, 0x10)


@dataclass(frozen=True)
class Entry:
    offset: int  # of the entry header in the blob
    kind: int
    arch: int
    data_offset: int
    data_size: int


@dataclass
class SlimStats:
    containers: int = 0
    entries: int = 0
    kept: int = 0
    zeroed_bytes: int = 0


def _entries(blob: bytes | bytearray, start: int) -> tuple[list[Entry], int] | None:
    """Entries of the container at `start` and its end, or None when this is not a well-formed container."""
    if start + _HEADER.size > len(blob):
        return None
    magic, version, header_size, size = _HEADER.unpack_from(blob, start)
    if magic != MAGIC or version != 1 or header_size != _HEADER.size:
        return None
    end = start + header_size + size
    if end > len(blob):
        return None
    out: list[Entry] = []
    pos = start + header_size
    while pos + _ENTRY.size <= end:
        kind, _, ehdr, aligned, _, dsize, _, _, arch = _ENTRY.unpack_from(blob, pos)
        if ehdr < 64 or dsize > aligned or pos + ehdr + aligned > end:
            return None
        out.append(Entry(pos, kind, arch, pos + ehdr, dsize))
        pos += ehdr + aligned
    return out, end


def slim(blob: bytearray, arch: int) -> SlimStats:
    """Zero, in place, every payload a GPU of SM `arch` (e.g. 90) never loads; return what was done."""
    stats = SlimStats()
    magic = struct.pack("<I", MAGIC)
    pos = blob.find(magic)
    while pos != -1:
        parsed = _entries(blob, pos)
        if parsed is None:
            pos = blob.find(magic, pos + 1)
            continue
        entries, end = parsed
        stats.containers += 1
        has_cubin = any(e.kind in ELF_KINDS and e.arch == arch for e in entries)
        for e in entries:
            stats.entries += 1
            keep = e.arch == arch if e.kind in ELF_KINDS else not (e.kind == KIND_PTX and has_cubin)
            if keep:
                stats.kept += 1
                continue
            blob[e.data_offset : e.data_offset + e.data_size] = bytes(e.data_size)
            stats.zeroed_bytes += e.data_size
        pos = blob.find(magic, end)
    return stats


def build_container(entries: list[tuple[int, int, bytes]]) -> bytes:
    """A container of (kind, arch, payload) entries, in the layout above (used by tests and tooling)."""
    body = b""
    for kind, arch, payload in entries:
        aligned = (len(payload) + 7) & ~7
        header = _ENTRY.pack(kind, 0x0101, 64, aligned, 0, len(payload), 0, 0, arch).ljust(64, b"\0")
        body += header + payload + bytes(aligned - len(payload))
    return _HEADER.pack(MAGIC, 1, _HEADER.size, len(body)) + body
