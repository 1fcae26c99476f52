"""Offline bundles: pack a (tiny, real) wheel with patches, check hashes, unpack with no index, patch the overlay."""

from __future__ import annotations

import base64
import hashlib
import json
import zipfile
from pathlib import Path

import pytest

from eval.spec.load import load_spec
from eval.stacks.bundle import BundleError, check, pack, read_freeze, unpack, wheel_key
from eval.stacks.docker_build import image_tag, write_context
from eval.stacks.overlay import PatchRef

MODULE = "".join(f"line {i}\n" for i in range(1, 21))
PATCH = """--- a/vllm/core.py
+++ b/vllm/core.py
@@ -10,3 +10,4 @@
 line 10
 line 11
+fixed line
 line 12
"""


def _wheel(path: Path) -> Path:
    files = {
        "vllm/__init__.py": b'__version__ = "0.0.1"\n',
        "vllm/core.py": MODULE.replace("line 11\n", "line 11\nfixed line\n").encode(),
        "vllm-0.0.1.dist-info/METADATA": b"Metadata-Version: 2.1\nName: vllm\nVersion: 0.0.1\n",
        "vllm-0.0.1.dist-info/WHEEL": b"Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    records = []
    whl = path / "vllm-0.0.1-py3-none-any.whl"
    with zipfile.ZipFile(whl, "w") as z:
        for name, data in files.items():
            z.writestr(name, data)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            records.append(f"{name},sha256={digest},{len(data)}")
        z.writestr("vllm-0.0.1.dist-info/RECORD", "\n".join([*records, "vllm-0.0.1.dist-info/RECORD,,"]) + "\n")
    return whl


@pytest.fixture
def spec(tmp_path: Path):
    _wheel(tmp_path)
    (tmp_path / "fix.patch").write_text(PATCH)
    (tmp_path / "c.yaml").write_text(
        "schema_version: 1\nname: b\nmodel: {path: /m}\nbuilds:\n"
        "  reverted: {wheel: vllm-0.0.1-py3-none-any.whl, patches: [{file: fix.patch, reverse: true}]}\n"
    )
    return load_spec([str(tmp_path / "c.yaml")]).spec


def test_pack_check_unpack_offline(tmp_path: Path, spec) -> None:
    manifest = pack(spec, "reverted", tmp_path / "bundle", with_deps=False)
    assert list(manifest["wheels"]) == ["vllm-0.0.1-py3-none-any.whl"]
    assert manifest["patches"][0]["reverse"] is True
    assert check(tmp_path / "bundle").build == "reverted"
    info = unpack(tmp_path / "bundle", tmp_path / "env", system_site_packages=False)
    overlay = Path(info["overlay"])
    assert "fixed line" not in (overlay / "vllm/core.py").read_text()
    assert list(info["patched_files"]) == ["vllm/core.py"]
    assert json.loads((tmp_path / "env" / "specqual-bundle.json").read_text())["schema_version"] == 1


def test_corrupted_bundle_is_refused(tmp_path: Path, spec) -> None:
    pack(spec, "reverted", tmp_path / "bundle", with_deps=False)
    (tmp_path / "bundle" / "patches" / "00-fix.patch").write_text("changed")
    with pytest.raises(BundleError, match="corrupted"):
        check(tmp_path / "bundle")


def test_freeze_and_wheel_names(tmp_path: Path) -> None:
    (tmp_path / "freeze.txt").write_text("Torch==2.11.0\nopenai==2.54.0\n-e git+https://x#egg=y\n")
    assert read_freeze(tmp_path / "freeze.txt") == {"torch": "2.11.0", "openai": "2.54.0"}
    assert wheel_key("pydantic_core-2.50.5-cp312-cp312-manylinux_2_17_x86_64.whl") == ("pydantic-core", "2.50.5")


def test_docker_build_context(tmp_path: Path) -> None:
    patch = tmp_path / "fix.patch"
    patch.write_text(PATCH)
    ref = PatchRef(patch, hashlib.sha256(PATCH.encode()).hexdigest(), True)
    write_context(tmp_path / "ctx", "vllm/vllm-openai:v0.32.0", [ref])
    dockerfile = (tmp_path / "ctx" / "Dockerfile").read_text()
    assert dockerfile.startswith("FROM vllm/vllm-openai:v0.32.0\n") and "RUN python3 /specqual/apply.py" in dockerfile
    assert json.loads((tmp_path / "ctx" / "patches.json").read_text()) == [["00-fix.patch", True]]
    assert image_tag("b", "img", [ref]) != image_tag("b", "img", [PatchRef(patch, ref.sha256, False)])


def test_locked_dependency_hashes_are_enforced(tmp_path: Path) -> None:
    """node-requirements.txt lines carry `--hash=sha256:`; a wheel the index serves with another hash, or a
    locked requirement that was not downloaded, stops the pack."""
    from eval.stacks.bundle import check_pinned_hashes, split_hash_pins

    whl = _wheel(tmp_path)
    good = hashlib.sha256(whl.read_bytes()).hexdigest()
    pins, pinned = split_hash_pins([f"vllm==0.0.1 --hash=sha256:{good}", "other-pkg==1.0"])
    assert pins == ["vllm==0.0.1", "other-pkg==1.0"] and pinned == {"vllm": {good}}
    check_pinned_hashes([whl], pinned)
    with pytest.raises(BundleError, match="not one of the locked hashes"):
        check_pinned_hashes([whl], {"vllm": {"0" * 64}})
    with pytest.raises(BundleError, match="not downloaded: fastapi"):
        check_pinned_hashes([whl], {"vllm": {good}, "fastapi": {good}})
    with pytest.raises(BundleError, match="only sha256"):
        split_hash_pins(["vllm==0.0.1 --hash=md5:abc"])


def test_the_node_requirements_are_all_locked() -> None:
    """Every pin the H200 bundle installs has a hash (scripts/gpu/relock-node.sh refreshes them)."""
    from eval.stacks.bundle import split_hash_pins

    path = Path(__file__).resolve().parents[3] / "scripts" / "gpu" / "node-requirements.txt"
    lines = [ln.split("#")[0].strip() for ln in path.read_text(encoding="utf-8").splitlines()]
    pins, pinned = split_hash_pins([ln for ln in lines if ln])
    assert len(pins) == len(pinned) >= 20
    assert all("==" in p for p in pins)
