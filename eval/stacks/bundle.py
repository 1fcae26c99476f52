"""Offline bundles for air-gapped GPU nodes: `specqual stack pack` writes one, `specqual stack unpack` installs it.

A bundle directory holds `wheels/` (the vLLM wheel, optionally slimmed to one GPU architecture by
`eval.stacks.slim_wheel`, plus only the dependency wheels the target node lacks, judged from its `pip freeze`),
`patches/`, and `manifest.json` with the sha256 of every file. With `archive`, the wheels travel instead as one
`wheels.tar.xz` (every wheel re-stored uncompressed inside, so that xz sees the bytes: 18 MB of dependency wheels
become 12) and the manifest adds that file's hash; `extract` unpacks such a bundle. Bundles are byte-reproducible:
the same input wheels give the same hashes (zip entries keep their source dates, the tar is sorted with fixed
owners and mtimes, xz is single-threaded with a fixed preset and stores no time). Unpacking checks every hash,
creates a venv that sees the node's own packages (`--system-site-packages`: torch and CUDA come from the node),
installs with `--no-index`, and builds the patched overlay exactly as `ensure_build` does.
"""

from __future__ import annotations

import lzma
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path
from typing import Any

from eval.spec.models import CohortFile
from eval.stacks.builds import resolve_patches
from eval.stacks.envs import BuildError, sha256_file
from eval.stacks.overlay import PatchRef, build_overlay
from eval.stacks.probe import ProbeError, probe
from eval.store.atomic import atomic_write_json
from store.cache_records import BUNDLE_MANIFEST, UNPACKED_MARKER, BundleArchive, BundleManifest, UnpackedBundle
from store.record_io import read_record, write_record
from store.stack_records import PatchFile

ARCHIVE = "wheels.tar.xz"
XZ_PRESET = 9  # 64 MiB dictionary: the slim vLLM wheel and the dependency wheels share one stream
_WHEEL = re.compile(r"^(?P<name>[^-]+)-(?P<version>[^-]+)-")


class BundleError(Exception):
    """A bundle cannot be written or installed (missing source, hash mismatch, pip failure)."""


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def requirement_name(requirement: str) -> str:
    """The normalized project name of a requirement line (`Foo_Bar[x]==1.0 --hash=...` -> `foo-bar`)."""
    return _norm(re.split(r"[=<>!~;\[ ]", requirement.strip())[0])


def wheel_key(filename: str) -> tuple[str, str]:
    m = _WHEEL.match(filename)
    if not m:
        raise BundleError(f"not a wheel file name: {filename}")
    return _norm(m.group("name")), m.group("version")


def read_freeze(path: Path) -> dict[str, str]:
    """`pip freeze` output -> {normalized name: version}; other lines (editables, URLs) are ignored."""
    have = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        name, sep, version = line.strip().partition("==")
        if sep:
            have[_norm(name)] = version.strip()
    return have


# pip matches a --platform tag exactly: name every manylinux level a node with glibc 2.31+ can load.
PLATFORMS = [f"manylinux_2_{n}_x86_64" for n in (31, 28, 27, 24, 17)] + ["manylinux2014_x86_64", "manylinux1_x86_64"]


def _download(reqs: list[str], dest: Path, python_version: str | None, deps: bool) -> None:
    cmd = [sys.executable, "-m", "pip", "download", "-d", str(dest), "--only-binary", ":all:"]
    if python_version:
        cmd += ["--python-version", python_version, "--implementation", "cp"]
        cmd += [x for p in PLATFORMS for x in ("--platform", p)]
    cmd += [] if deps else ["--no-deps"]
    proc = subprocess.run([*cmd, *reqs], capture_output=True, text=True)
    if proc.returncode != 0:
        raise BundleError(f"pip download failed: {proc.stderr.strip()[-2000:]}")


def split_hash_pins(requirements: list[str]) -> tuple[list[str], dict[str, set[str]]]:
    """`name==1.0 --hash=sha256:H ...` lines -> (the bare pins for `pip download`, {normalized name: allowed
    sha256s}). A line without `--hash` is passed through unpinned (its wheel is still hashed in the manifest)."""
    pins: list[str] = []
    pinned: dict[str, set[str]] = {}
    for line in requirements:
        words = line.split()
        req = [w for w in words if not w.startswith("--hash=")]
        hashes = {w.split(":", 1)[1] for w in words if w.startswith("--hash=sha256:")}
        if any(w.startswith("--hash=") and not w.startswith("--hash=sha256:") for w in words):
            raise BundleError(f"only sha256 hashes are supported: {line}")
        pins.append(" ".join(req))
        if hashes:
            pinned[requirement_name(req[0])] = hashes
    return pins, pinned


def check_pinned_hashes(wheels: list[Path], pinned: dict[str, set[str]]) -> None:
    """Every downloaded wheel whose requirement carries hashes must have one of them, and every pinned
    requirement must have been downloaded (the index served something else: refuse to pack it)."""
    seen = set()
    for w in wheels:
        name = wheel_key(w.name)[0]
        if name in pinned:
            seen.add(name)
            digest = sha256_file(w)
            if digest not in pinned[name]:
                raise BundleError(f"{w.name}: sha256 {digest} is not one of the locked hashes {sorted(pinned[name])}")
    missing = sorted(set(pinned) - seen)
    if missing:
        raise BundleError(f"locked requirements not downloaded: {', '.join(missing)}")


def _main_wheel(spec: CohortFile, build_name: str, tmp: Path, python_version: str | None) -> Path:
    build = spec.builds[build_name]
    if build.wheel:
        src = spec.resolve(build.wheel)
        if not src.is_file():
            raise BundleError(f"wheel not found: {src}")
        return src
    if not build.pip:
        raise BundleError(f"build {build_name} is a {build.source_kind} build: only pip and wheel builds can be packed")
    _download([build.pip], tmp / "main", python_version, deps=False)
    return next((tmp / "main").glob("*.whl"))


def pack(
    spec: CohortFile,
    build_name: str,
    out: Path,
    *,
    gpu_arch: str | None = None,
    have: Path | None = None,
    python_version: str | None = None,
    with_deps: bool = True,
    requirements: list[str] | None = None,
    drop: list[str] | None = None,
    archive: bool = False,
) -> dict[str, Any]:
    """Write the bundle directory `out` and return its manifest.

    `drop` (glob patterns of wheel members, with `gpu_arch`) leaves more of the vLLM wheel out, e.g. the MoE and
    MLA kernel libraries for a model that has neither (vLLM imports them under `suppress(ImportError)`).
    `archive` re-stores every wheel uncompressed and packs them into one reproducible `wheels.tar.xz`.

    `requirements` (exact pins) replaces dependency resolution: only those wheels are fetched, and unpacking
    installs with `--no-deps`. vLLM's metadata names GPU kernel packages (flashinfer, tilelang, ...) that a
    given model and backend never import, gigabytes a one-transfer bundle cannot carry (see docs/trust/facts.md).
    """
    if build_name not in spec.builds:
        raise BundleError(f"unknown build {build_name!r} (known: {', '.join(spec.builds)})")
    build = spec.builds[build_name]
    wheels_dir = out / "wheels"
    wheels_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as td:
        tmp = Path(td)
        main = _main_wheel(spec, build_name, tmp, python_version)
        main_out = wheels_dir / main.name
        slim = None
        if gpu_arch:
            slim = _slim(main, main_out, gpu_arch, python_version, tuple(drop or ()))
        elif drop:
            raise BundleError("--drop needs --gpu-arch (members are left out while the wheel is slimmed)")
        else:
            shutil.copy2(main, main_out)
        if requirements is not None:
            pins, pinned = split_hash_pins(requirements)
            _download(pins, tmp / "deps", python_version, deps=False)
            deps = sorted((tmp / "deps").glob("*.whl"))
            check_pinned_hashes(deps, pinned)
        else:
            deps = _dependency_wheels(main, build.extra_packages, tmp, python_version, have) if with_deps else []
        source_sha = sha256_file(main)
        sources = {w.name: sha256_file(w) for w in deps}
        for w in deps:
            if archive:
                restore_wheel(w, wheels_dir / w.name)
            else:
                shutil.copy2(w, wheels_dir / w.name)
    patches = _copy_patches(resolve_patches_or_fail(spec, build_name), out / "patches")
    manifest = BundleManifest(
        build=build_name,
        vllm_wheel=main_out.name,
        source_wheel_sha256=source_sha,
        no_deps=requirements is not None,
        gpu_arch=gpu_arch,
        slim=slim,
        dropped_patterns=sorted(drop or []),
        dependency_sources=sources,  # sha256 of each dependency wheel as downloaded (before re-storing)
        python_version=python_version,
        wheels={w.name: sha256_file(w) for w in sorted(wheels_dir.glob("*.whl"))},
        patches=patches,
    )
    if archive:
        write_archive(wheels_dir, out / ARCHIVE, "wheels")
        shutil.rmtree(wheels_dir)
        manifest.archive = BundleArchive(file=ARCHIVE, sha256=sha256_file(out / ARCHIVE), xz_preset=XZ_PRESET)
    record = manifest.record()
    atomic_write_json(out / BUNDLE_MANIFEST, record)
    return record


def restore_wheel(src: Path, dst: Path) -> None:
    """Copy wheel `src` with every member stored uncompressed (same names, order, dates and contents: pip installs
    it the same way, its RECORD hashes the contents), so that the bundle's xz sees the bytes."""
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", zipfile.ZIP_STORED) as zout:
        for info in zin.infolist():
            data = zin.read(info)
            info.compress_type = zipfile.ZIP_STORED
            zout.writestr(info, data)


def write_archive(src: Path, dest: Path, root: str, preset: int = XZ_PRESET) -> None:
    """A reproducible `tar.xz` of the files under `src`, named `root/<relative path>`: sorted, owner 0, mode 0644,
    mtime 0, GNU format; xz single-threaded with a fixed preset (the xz format stores no time)."""
    tmp = dest.with_name(dest.name + ".tmp")
    with (
        open(tmp, "wb") as raw,
        lzma.open(raw, "wb", format=lzma.FORMAT_XZ, check=lzma.CHECK_CRC64, preset=preset) as xz,
        tarfile.open(fileobj=xz, mode="w", format=tarfile.GNU_FORMAT) as tar,
    ):
        for path in sorted(p for p in src.rglob("*") if p.is_file()):
            info = tarfile.TarInfo(f"{root}/{path.relative_to(src).as_posix()}")
            info.size, info.mode, info.mtime = path.stat().st_size, 0o644, 0
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            with open(path, "rb") as fh:
                tar.addfile(info, fh)
    os.replace(tmp, dest)


def extract(bundle: Path, dest: Path) -> Path:
    """Make `dest` an unpacked copy of `bundle` (manifest, patches, wheels/), the archive's hash checked; a bundle
    without an archive is copied as it is. Returns `dest`, ready for `check` and `unpack`."""
    manifest = read_manifest(bundle)
    dest.mkdir(parents=True, exist_ok=True)
    shutil.copy2(bundle / BUNDLE_MANIFEST, dest / BUNDLE_MANIFEST)
    shutil.copytree(bundle / "patches", dest / "patches", dirs_exist_ok=True)
    archived = manifest.archive
    if archived is None:
        shutil.copytree(bundle / "wheels", dest / "wheels", dirs_exist_ok=True)
        return dest
    path = bundle / archived.file
    if not path.is_file() or sha256_file(path) != archived.sha256:
        raise BundleError(f"bundle archive missing or corrupted (sha256 differs): {archived.file}")
    with tarfile.open(path, "r:xz") as tar:
        for member in tar.getmembers():
            if not member.isfile() or not member.name.startswith("wheels/") or ".." in member.name.split("/"):
                raise BundleError(f"unexpected member in {archived.file}: {member.name}")
        tar.extractall(dest, filter="data")
    return dest


def resolve_patches_or_fail(spec: CohortFile, build_name: str) -> list[PatchRef]:
    try:
        return resolve_patches(spec, spec.builds[build_name])
    except BuildError as e:
        raise BundleError(str(e)) from e


def _slim(src: Path, dst: Path, gpu_arch: str, python_version: str | None, drop: tuple[str, ...]) -> dict[str, Any]:
    from eval.stacks.slim_wheel import slim_wheel

    m = re.fullmatch(r"sm_?(\d+)", gpu_arch)
    if not m:
        raise BundleError(f"--gpu-arch wants sm_NN (e.g. sm_90), got {gpu_arch!r}")
    tag = (python_version or f"{sys.version_info[0]}.{sys.version_info[1]}").replace(".", "")
    report = slim_wheel(src, dst, arch=int(m.group(1)), python_tag=tag, drop=drop)
    return {"dropped": len(report.dropped), "zeroed_bytes": sum(report.slimmed.values()), "patched": report.patched}


def _dependency_wheels(
    main: Path, extra: list[str], tmp: Path, python_version: str | None, have: Path | None
) -> list[Path]:
    _download([str(main), *extra], tmp / "deps", python_version, deps=True)
    present = read_freeze(have) if have else {}
    main_name = wheel_key(main.name)[0]
    out = []
    for w in sorted((tmp / "deps").glob("*.whl")):
        name, version = wheel_key(w.name)
        if name != main_name and present.get(name) != version:
            out.append(w)
    return out


def _copy_patches(refs: list[PatchRef], dest: Path) -> list[PatchFile]:
    dest.mkdir(parents=True, exist_ok=True)
    out = []
    for i, ref in enumerate(refs):
        name = f"{i:02d}-{ref.file.name}"
        shutil.copy2(ref.file, dest / name)
        out.append(PatchFile(file=f"patches/{name}", sha256=ref.sha256, reverse=ref.reverse))
    return out


def read_manifest(bundle: Path) -> BundleManifest:
    manifest = read_record(bundle / BUNDLE_MANIFEST, BundleManifest)
    if manifest is None:
        raise BundleError(f"{bundle} has no readable {BUNDLE_MANIFEST}")
    return manifest


def check(bundle: Path) -> BundleManifest:
    """The manifest, after checking that every listed file exists with its hash."""
    manifest = read_manifest(bundle)
    files = {f"wheels/{n}": h for n, h in manifest.wheels.items()}
    files.update({p.file: p.sha256 for p in manifest.patches})
    for rel, sha in files.items():
        path = bundle / rel
        if not path.is_file():
            raise BundleError(f"bundle file missing: {rel}")
        if sha256_file(path) != sha:
            raise BundleError(f"bundle file corrupted (sha256 differs): {rel}")
    return manifest


def unpack(bundle: Path, target: Path, system_site_packages: bool = True) -> dict[str, Any]:
    """Install a bundle into a new venv at `target` with no network; return where vllm and the overlay are."""
    manifest = check(bundle)
    venv = [sys.executable, "-m", "venv", *(["--system-site-packages"] if system_site_packages else []), str(target)]
    python = target / "bin" / "python"
    pip = [str(python), "-m", "pip"]
    if subprocess.run(venv, capture_output=True).returncode != 0:
        # No ensurepip on this interpreter (common on offline nodes): use its own pip on the new venv.
        shutil.rmtree(target, ignore_errors=True)
        _run([*venv[:3], "--without-pip", *venv[3:]], "create the environment")
        pip = [sys.executable, "-m", "pip", "--python", str(python)]
    if system_site_packages:
        _see_parent_venv(target)
    wheels = bundle / "wheels"
    install = [*pip, "install", "--no-index", "--find-links", str(wheels)]
    if manifest.no_deps:
        install += ["--no-deps", *(str(wheels / n) for n in manifest.wheels if n != manifest.vllm_wheel)]
    _run([*install, str(wheels / manifest.vllm_wheel)], "install the wheels")
    try:
        found = probe(python)
    except ProbeError as e:
        raise BundleError(str(e)) from e
    refs = [PatchRef(bundle / p.file, p.sha256, p.reverse) for p in manifest.patches]
    dist = found.distributions[0] if found.distributions else None
    version = found.dist_versions.get(dist) if dist else None
    shim = version if dist and dist.lower() != "vllm" else None
    overlay = target / "specqual-overlay"
    try:
        hashes = build_overlay(overlay, found.vllm_path, refs, shim)
    except BuildError as e:
        raise BundleError(str(e)) from e
    info = UnpackedBundle(
        vllm=f"{dist} {version}",
        python=str(python),
        overlay=str(overlay),
        patched_files=hashes,
        wheel_sha256=manifest.source_wheel_sha256,
        gpu_arch=manifest.gpu_arch,
    )
    write_record(target / UNPACKED_MARKER, info)
    return info.model_dump(mode="json")


def _see_parent_venv(target: Path) -> None:
    """When the unpacking interpreter is itself a venv (a node's torch environment often is), `venv
    --system-site-packages` only reaches the base interpreter's packages: add the parent venv's too."""
    if sys.prefix == sys.base_prefix:
        return
    import site

    parents = [p for p in site.getsitepackages() if Path(p).is_dir()]
    site_dir = next((target / "lib").glob("python*/site-packages"))
    lines = [f"import site; site.addsitedir({p!r})" for p in parents]
    (site_dir / "specqual-parent-venv.pth").write_text("\n".join(lines) + "\n", encoding="utf-8")


def _run(cmd: list[str], what: str) -> None:
    # The caller's PYTHONPATH (e.g. where specqual itself found pydantic) must not make pip skip a wheel
    # as "already satisfied" in the environment being built.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        raise BundleError(f"{what} failed: {' '.join(cmd)}\n{(proc.stdout + proc.stderr).strip()[-2000:]}")
