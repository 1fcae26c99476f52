"""Bundles are byte-reproducible and travel as one archive: packing the same (tiny, real) wheels twice, at other
times and from files with other mtimes, gives the same wheels.tar.xz and the same manifest; the archive holds the
slimmed wheel (other-architecture cubins zeroed, dropped members gone) and every dependency wheel re-stored
uncompressed; `extract` + `unpack` install it with no index."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import tarfile
import time
import zipfile
from pathlib import Path

import pytest

from eval.spec.load import load_spec
from eval.stacks.bundle import ARCHIVE, BundleError, extract, pack, restore_wheel, unpack, write_archive
from eval.stacks.envs import sha256_file
from eval.stacks.fatbin import build_container

SM80, SM90 = b"\x80" * 4000, b"\x90" * 4000


def _wheel(path: Path, name: str, files: dict[str, bytes], compression: int = zipfile.ZIP_DEFLATED) -> Path:
    version = "0.0.1"
    info = f"{name}-{version}.dist-info"
    files = {
        **files,
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n".encode(),
        f"{info}/WHEEL": b"Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    records = []
    whl = path / f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(whl, "w", compression) as z:
        for member, data in files.items():
            z.writestr(zipfile.ZipInfo(member, (2026, 12, 1, 12, 0, 0)), data)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            records.append(f"{member},sha256={digest},{len(data)}")
        z.writestr(
            zipfile.ZipInfo(f"{info}/RECORD", (2026, 12, 1, 12, 0, 0)), "\n".join([*records, f"{info}/RECORD,,"])
        )
    return whl


@pytest.fixture
def spec(tmp_path: Path):
    fat = b"\x7fELF" + bytes(60) + build_container([(2, 80, SM80), (2, 90, SM90)]) + bytes(64)
    _wheel(
        tmp_path,
        "vllm",
        {
            "vllm/__init__.py": b'__version__ = "0.0.1"\n',
            "vllm/_C.abi3.so": fat,
            "vllm/_moe_C_stable_libtorch.abi3.so": fat,
        },
    )
    (tmp_path / "c.yaml").write_text(
        "schema_version: 1\nname: b\nmodel: {path: /m}\nbuilds:\n  w: {wheel: vllm-0.0.1-py3-none-any.whl}\n"
    )
    return load_spec([str(tmp_path / "c.yaml")]).spec


def _pack(spec, out: Path) -> dict:
    return pack(spec, "w", out, gpu_arch="sm_90", with_deps=False, drop=["vllm/_moe_C*"], archive=True)


def test_the_same_wheels_give_the_same_bundle(spec, tmp_path: Path) -> None:
    first = _pack(spec, tmp_path / "a")
    time.sleep(1.1)  # zip and tar would record a later time if they took the clock
    wheel = tmp_path / "vllm-0.0.1-py3-none-any.whl"
    os.utime(wheel, (time.time() - 86400, time.time() - 86400))
    second = _pack(spec, tmp_path / "b")
    assert first == second and first["archive"]["sha256"] == sha256_file(tmp_path / "b" / ARCHIVE)
    assert (tmp_path / "a" / ARCHIVE).read_bytes() == (tmp_path / "b" / ARCHIVE).read_bytes()
    assert not (tmp_path / "a" / "wheels").exists()  # the archive replaces the directory
    with tarfile.open(tmp_path / "a" / ARCHIVE) as tar:
        members = tar.getmembers()
        assert [m.name for m in members] == ["wheels/vllm-0.0.1-py3-none-any.whl"]
        assert {(m.mtime, m.uid, m.gid, m.uname, m.mode) for m in members} == {(0, 0, 0, "", 0o644)}
        data = tar.extractfile(members[0]).read()  # type: ignore[union-attr]
    slim = tmp_path / "slim.whl"
    slim.write_bytes(data)
    with zipfile.ZipFile(slim) as z:
        assert "vllm/_moe_C_stable_libtorch.abi3.so" not in z.namelist()
        lib = z.read("vllm/_C.abi3.so")
        assert {i.compress_type for i in z.infolist()} == {zipfile.ZIP_STORED}
        assert {i.date_time for i in z.infolist()} == {(2026, 12, 1, 12, 0, 0)}  # the source's dates, RECORD too
    assert SM90 in lib and SM80 not in lib  # the sm_80 cubin's payload is zeroed, the sm_90 one kept


def test_dependency_wheels_are_restored_uncompressed_with_the_same_contents(tmp_path: Path) -> None:
    dep = _wheel(tmp_path, "dep", {"dep/__init__.py": b"x = 1\n" * 500})
    restore_wheel(dep, tmp_path / "stored.whl")
    with zipfile.ZipFile(dep) as a, zipfile.ZipFile(tmp_path / "stored.whl") as b:
        assert [i.filename for i in a.infolist()] == [i.filename for i in b.infolist()]
        assert all(a.read(n) == b.read(n) for n in a.namelist())
        assert {i.compress_type for i in b.infolist()} == {zipfile.ZIP_STORED}
    (tmp_path / "w1").mkdir()
    (tmp_path / "w2").mkdir()
    restore_wheel(dep, tmp_path / "w1" / dep.name)
    restore_wheel(dep, tmp_path / "w2" / dep.name)
    write_archive(tmp_path / "w1", tmp_path / "1.tar.xz", "wheels")
    write_archive(tmp_path / "w2", tmp_path / "2.tar.xz", "wheels")
    assert sha256_file(tmp_path / "1.tar.xz") == sha256_file(tmp_path / "2.tar.xz")


def test_an_archived_bundle_extracts_checks_and_installs_offline(spec, tmp_path: Path) -> None:
    _pack(spec, tmp_path / "bundle")
    ready = extract(tmp_path / "bundle", tmp_path / "ready")
    info = unpack(ready, tmp_path / "env", system_site_packages=False)
    assert info["vllm"] == "vllm 0.0.1" and info["gpu_arch"] == "sm_90"
    manifest = json.loads((tmp_path / "bundle" / "manifest.json").read_text())
    assert manifest["dropped_patterns"] == ["vllm/_moe_C*"]
    (tmp_path / "bundle" / ARCHIVE).write_bytes(b"not the archive")
    with pytest.raises(BundleError, match="corrupted"):
        extract(tmp_path / "bundle", tmp_path / "again")
