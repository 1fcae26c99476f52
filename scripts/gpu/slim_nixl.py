"""Slim the NIXL wheels (the `nixl` meta package + `nixl-cu13`) to what vLLM's NixlConnector loads over UCX.

`nixl-cu13` 1.5.1 is a 58.8 MB wheel (238 MB unpacked): three builds of the `nixl_ep` expert-parallel extension
(one per torch version, 94 MB), storage plugins (GDS, S3, Azure, ...) with their SDKs, and InfiniBand and perftest
UCX modules. The offline node takes 64 MiB per transfer, next to a 53 MiB vLLM bundle, so only this travels:
the Python packages `nixl`/`nixl_cu13`, the UCX plugin, the UCX CUDA and CMA transport modules, and every library
they need (the `DT_NEEDED` closure, read with `readelf -d`), as one xz tarball laid out like site-packages.

    python scripts/gpu/slim_nixl.py --out .nixl                # downloads nixl==1.5.1 + nixl-cu13==1.5.1 (cp312)
    python scripts/gpu/slim_nixl.py --out .nixl --wheels DIR   # or takes the two wheels from DIR
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from collections.abc import Callable, Iterable
from pathlib import Path

VERSION = "1.5.1"
PLATFORM = ["manylinux_2_28_x86_64", "manylinux_2_27_x86_64", "manylinux_2_17_x86_64", "manylinux2014_x86_64"]
# What dlopen reaches at run time (NEEDED only covers what the linker loads): the UCX backend plugin and the
# UCX transports for GPU memory on one host (cuda_copy/cuda_ipc in libuct_cuda, CMA for host memory).
ROOTS = (
    "nixl_cu13/_bindings.cpython-312-x86_64-linux-gnu.so",
    "nixl_cu13/_utils.cpython-312-x86_64-linux-gnu.so",
    "nixl_cu13.libs/nixl/libplugin_UCX.so",
    ".nixl_cu13.mesonpy.libs/plugins/libplugin_UCX.so",
    "nixl_cu13.libs/ucx/libuct_cuda.so.0.0.0",
    "nixl_cu13.libs/ucx/libucm_cuda.so.0.0.0",
    "nixl_cu13.libs/ucx/libuct_cma.so.0.0.0",
)
LIB_DIRS = ("nixl_cu13.libs", ".nixl_cu13.mesonpy.libs", "nixl_cu13.libs/ucx")
REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))  # run as a script: store (the manifest's record) is at the repository root

from store.gpu_records import NixlManifest  # noqa: E402

KEEP_PATTERNS = (
    r"^nixl/.*\.py$",
    r"^nixl_cu13/.*\.py$",
    r"^nixl_meta_utils\.py$",
    r"\.dist-info/",
    r"ucx/.*(cuda|cma)\.la$",
)


def readelf_needed(path: Path) -> list[str]:
    out = subprocess.run(["readelf", "-d", str(path)], capture_output=True, text=True, check=True).stdout
    return re.findall(r"\(NEEDED\).*\[(.+)\]", out)


def needed_closure(
    root: Path, roots: Iterable[str], lib_dirs: Iterable[str], needed: Callable[[Path], list[str]] = readelf_needed
) -> tuple[set[str], set[str]]:
    """(files under `root` that `roots` need, transitively; sonames found nowhere there: the system's)."""
    dirs = list(lib_dirs)
    keep: set[str] = set()
    external: set[str] = set()
    todo = list(roots)
    while todo:
        rel = todo.pop()
        if rel in keep:
            continue
        keep.add(rel)
        for soname in needed(root / rel):
            hit = next((f"{d}/{soname}" for d in dirs if (root / d / soname).is_file()), None)
            if hit is None:
                external.add(soname)
            else:
                todo.append(hit)
    return keep, external


def plain_files(root: Path) -> list[str]:
    """Every non-library file to keep (Python sources, metadata, UCX module descriptors)."""
    rels = [p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()]
    return sorted(r for r in rels if any(re.search(pat, r) for pat in KEEP_PATTERNS))


def download(dest: Path) -> list[Path]:
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "--python-version", "3.12"]
    cmd += ["--implementation", "cp", *(a for p in PLATFORM for a in ("--platform", p)), "-d", str(dest)]
    subprocess.run([*cmd, f"nixl=={VERSION}", f"nixl-cu13=={VERSION}"], check=True)
    return sorted(dest.glob("nixl*.whl"))


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def slim(wheels: list[Path], out: Path) -> NixlManifest:
    """Unpack `wheels`, keep the closure, write `out/nixl-cu13-VERSION-slim.tar.xz` and `out/manifest.json`."""
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for w in wheels:
            with zipfile.ZipFile(w) as z:
                z.extractall(root)
        libs, external = needed_closure(root, ROOTS, LIB_DIRS)
        keep = sorted(libs | set(plain_files(root)))
        tarball = out / f"nixl-cu13-{VERSION}-slim.tar.xz"
        with tarfile.open(tarball, "w:xz", preset=9) as tar:
            for rel in keep:
                tar.add(root / rel, arcname=rel)
        unpacked = sum((root / r).stat().st_size for r in keep)
    manifest = NixlManifest(
        tarball=tarball.name,
        tarball_sha256=sha256(tarball),
        source_wheels={w.name: sha256(w) for w in wheels},
        files=len(keep),
        unpacked_bytes=unpacked,
        system_libraries=sorted(external),
    )
    (out / "manifest.json").write_text(json.dumps(manifest.model_dump(mode="json"), indent=1, sort_keys=True) + "\n")
    return manifest


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--wheels", type=Path, help="directory holding nixl-*.whl and nixl_cu13-*.whl (else download)")
    args = ap.parse_args(argv)
    if args.wheels is not None:
        wheels = sorted(args.wheels.glob(f"nixl*-{VERSION}-*.whl"))
    else:
        wheels = download(Path(tempfile.mkdtemp(prefix="nixl-wheels-")))
    manifest = slim(wheels, args.out)
    print(json.dumps(manifest.model_dump(mode="json"), indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
