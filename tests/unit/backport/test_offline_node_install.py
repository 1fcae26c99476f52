"""The offline install path the H200 run relies on (`stack pack --requirements`, `stack unpack`), on tiny real wheels.

What the node needs and these tests check: exact pins are packed instead of a resolution and installed with
`--no-deps` (vLLM names kernel packages no bundle can carry); a venv made from inside another venv still sees
that venv's packages (the node's torch); the caller's PYTHONPATH does not make pip skip a bundled wheel; and a
build pointed at the unpacked environment records the original wheel's sha256 in its provenance.
"""

from __future__ import annotations

import base64
import hashlib
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from eval.spec.load import load_spec
from eval.stacks.builds import ensure_build
from eval.stacks.bundle import pack, unpack
from eval.stacks.envs import sha256_file


def make_wheel(out: Path, name: str, files: dict[str, bytes], requires: list[str]) -> Path:
    meta = f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n" + "".join(f"Requires-Dist: {r}\n" for r in requires)
    info = f"{name}-1.0.dist-info"
    files = {
        **files,
        f"{info}/METADATA": meta.encode(),
        f"{info}/WHEEL": b"Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    whl = out / f"{name}-1.0-py3-none-any.whl"
    records = []
    with zipfile.ZipFile(whl, "w") as z:
        for path, data in files.items():
            z.writestr(path, data)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            records.append(f"{path},sha256={digest},{len(data)}")
        z.writestr(f"{info}/RECORD", "\n".join([*records, f"{info}/RECORD,,"]) + "\n")
    return whl


@pytest.fixture
def bundle(tmp_path: Path) -> tuple[Path, Path]:
    """(bundle dir, original vllm wheel): vllm requires a package no index has; its one real need is pinned."""
    src = tmp_path / "src"
    src.mkdir()
    vllm = make_wheel(src, "vllm", {"vllm/__init__.py": b'__version__ = "1.0"\n'}, ["sqdep==1.0", "flashinfer-x==9"])
    dep = make_wheel(src, "sqdep", {"sqdep/__init__.py": b"WHERE = 'bundle'\n"}, [])
    cohort = f"schema_version: 1\nname: b\nmodel: {{path: /m}}\nbuilds:\n  w: {{wheel: {vllm}}}\n"
    (tmp_path / "c.yaml").write_text(cohort)
    spec = load_spec([str(tmp_path / "c.yaml")]).spec
    manifest = pack(spec, "w", tmp_path / "bundle", requirements=[str(dep)])
    assert manifest["no_deps"] is True
    assert sorted(manifest["wheels"]) == ["sqdep-1.0-py3-none-any.whl", "vllm-1.0-py3-none-any.whl"]
    return tmp_path / "bundle", vllm


def run_in(python: Path, code: str) -> str:
    proc = subprocess.run([str(python), "-c", code], capture_output=True, text=True, env={"PATH": "/usr/bin:/bin"})
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


def test_pinned_bundle_installs_without_resolving(tmp_path: Path, bundle: tuple[Path, Path]) -> None:
    bundle_dir, original = bundle
    info = unpack(bundle_dir, tmp_path / "env", system_site_packages=False)
    assert info["wheel_sha256"] == sha256_file(original)
    python = tmp_path / "env" / "bin" / "python"
    assert run_in(python, "import sqdep, vllm; print(sqdep.WHERE, vllm.__version__)") == "bundle 1.0"


def test_callers_pythonpath_does_not_hide_a_bundled_wheel(
    tmp_path: Path, bundle: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    shadow = tmp_path / "shadow"
    with zipfile.ZipFile(bundle[0] / "wheels" / "sqdep-1.0-py3-none-any.whl") as z:
        z.extractall(shadow)  # the same distribution, visible only through the caller's PYTHONPATH
    monkeypatch.setenv("PYTHONPATH", str(shadow))
    unpack(bundle[0], tmp_path / "env", system_site_packages=False)
    site = next((tmp_path / "env" / "lib").glob("python*/site-packages"))
    assert (site / "sqdep" / "__init__.py").is_file()


@pytest.mark.skipif(sys.prefix == sys.base_prefix, reason="needs to run from inside a venv, as on the GPU node")
def test_env_made_inside_a_venv_sees_that_venvs_packages(tmp_path: Path, bundle: tuple[Path, Path]) -> None:
    unpack(bundle[0], tmp_path / "env", system_site_packages=True)
    python = tmp_path / "env" / "bin" / "python"
    # pydantic is in the test venv only (not the base interpreter): the node's torch is found the same way.
    assert run_in(python, "import pydantic, sqdep; print(sqdep.WHERE)") == "bundle"


def test_build_over_the_unpacked_env_records_the_original_wheel(tmp_path: Path, bundle: tuple[Path, Path]) -> None:
    unpack(bundle[0], tmp_path / "env", system_site_packages=False)
    (tmp_path / "e.yaml").write_text(
        f"schema_version: 1\nname: e\nmodel: {{path: /m}}\nbuilds:\n  node: {{env: {tmp_path / 'env'}}}\n"
    )
    build = ensure_build(load_spec([str(tmp_path / "e.yaml")]).spec, "node", cache=tmp_path / "cache")
    assert build.wheel_sha256 == sha256_file(bundle[1])
