"""The base image: a Debian rootfs from `debootstrap`, imported into the engine (no registry is needed).

The rootfs holds Python 3, pytest, git and patch, and the layout SWE-bench instance images have: the eval
scripts of the real dataset start with `source /opt/miniconda3/bin/activate; conda activate testbed`, so a small
shim provides that path (a `conda` shell function whose `activate` puts `/opt/miniconda3/envs/testbed/bin`,
links to the system Python, first on PATH), and /root/.bashrc activates it as the real images do.

The rootfs tarball is cached under `<cache>/docker/` by a hash of what goes into it, and the image is tagged
with the same hash (`specqual/base:<hash>`): a second call is a lookup, a fresh engine re-imports the tarball
(seconds) instead of re-running debootstrap (about a minute).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from eval.stacks.envs import cache_root, file_lock, short_hash

SUITE = "bookworm"
PACKAGES = ("python3", "python3-pytest", "python-is-python3", "git", "patch", "procps", "tini", "libnuma1")
SHIM_VERSION = "2"
CONDA = "/opt/miniconda3"
PATH = f"{CONDA}/envs/testbed/bin:{CONDA}/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
# tini as PID 1: the harness's containers idle as `tail -f /dev/null`, which as PID 1 ignores TERM, so its
# `docker stop --time=15` would wait the whole 15 s per graded unit (`docker import` cannot set STOPSIGNAL).
IMPORT_CHANGES = (
    f"ENV PATH={PATH}",
    "ENV LANG=C.UTF-8",
    "WORKDIR /testbed",
    'ENTRYPOINT ["/usr/bin/tini", "--"]',
    'CMD ["/bin/bash"]',
)
DEFAULT_MIRROR = "http://deb.debian.org/debian"

ACTIVATE = """# specqual's stand-in for miniconda's activate script: `conda activate testbed` puts the testbed
# environment (the system Python) first on PATH, as the real one does in SWE-bench instance images.
conda() {
  if [ "${1:-}" = activate ]; then
    export CONDA_DEFAULT_ENV="${2:-base}" PATH="@CONDA@/envs/${2:-base}/bin:@CONDA@/bin:$PATH"
  fi
}
""".replace("@CONDA@", CONDA)


class ImageError(RuntimeError):
    """An image could not be built (an infrastructure failure, never the model's)."""


def apt_mirror(sources: tuple[str, ...] = ("/etc/apt/sources.list", "/etc/apt/sources.list.d")) -> str:
    """The Debian mirror apt uses on this machine (deb822 `URIs:` or one-line `deb URL SUITE`), else the default."""
    for src in sources:
        path = Path(src)
        files = sorted(path.glob("*.sources")) + sorted(path.glob("*.list")) if path.is_dir() else [path]
        for f in files:
            text = f.read_text(errors="replace") if f.is_file() else ""
            for url in re.findall(r"^(?:URIs:\s*|deb\s+(?:\[[^]]*\]\s+)?)(\S+)", text, re.M):
                if url.rstrip("/").endswith("/debian"):
                    return str(url)
    return DEFAULT_MIRROR


def rootfs_key(mirror: str | None = None) -> str:
    """What the rootfs tarball depends on."""
    material = {"suite": SUITE, "packages": PACKAGES, "shim": SHIM_VERSION, "activate": ACTIVATE}
    return short_hash({**material, "mirror": mirror or apt_mirror()})


def base_tag(mirror: str | None = None) -> str:
    """The base image's tag: the rootfs and the image settings."""
    return f"specqual/base:{short_hash({'rootfs': rootfs_key(mirror), 'changes': IMPORT_CHANGES})}"


def _add_shim(root: Path) -> None:
    """The conda layout of SWE-bench images, pointing at the system Python."""
    (root / "opt/miniconda3/bin").mkdir(parents=True, exist_ok=True)
    (root / "opt/miniconda3/bin/activate").write_text(ACTIVATE)
    env_bin = root / "opt/miniconda3/envs/testbed/bin"
    env_bin.mkdir(parents=True, exist_ok=True)
    for name in ("python", "python3"):
        link = env_bin / name
        if not link.is_symlink():
            link.symlink_to("/usr/bin/python3")
    bashrc = root / "root/.bashrc"
    line = f"source {CONDA}/bin/activate && conda activate testbed\n"
    if line not in (bashrc.read_text() if bashrc.is_file() else ""):
        with bashrc.open("a") as f:
            f.write(line)


def build_rootfs_tar(target: Path, mirror: str) -> None:
    """debootstrap a minimal Debian with PACKAGES, add the shim, tar it to `target` (atomically)."""
    if shutil.which("debootstrap") is None:
        raise ImageError("debootstrap is not installed (Debian: apt-get install debootstrap)")
    with tempfile.TemporaryDirectory(prefix="specqual-rootfs-", dir=target.parent) as td:
        root = Path(td) / "rootfs"
        argv = ["debootstrap", "--variant=minbase", f"--include={','.join(PACKAGES)}", SUITE, str(root), mirror]
        print(f"specqual: building the base image rootfs: {' '.join(argv)}", file=sys.stderr, flush=True)
        done = subprocess.run(argv, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise ImageError(f"debootstrap failed ({done.returncode}): {(done.stdout + done.stderr)[-2000:]}")
        _add_shim(root)
        shutil.rmtree(root / "var/cache/apt/archives", ignore_errors=True)
        partial = target.with_suffix(".tar.partial")
        tar = subprocess.run(
            ["tar", "-C", str(root), "--numeric-owner", "-cf", str(partial), "."],
            capture_output=True,
            text=True,
            check=False,
        )
        if tar.returncode != 0:
            raise ImageError(f"tar of the rootfs failed: {tar.stderr[-1000:]}")
        os.replace(partial, target)


def has_image(client: Any, tag: str) -> bool:
    import docker

    try:
        client.images.get(tag)
    except docker.errors.ImageNotFound:
        return False
    return True


def import_tar(client: Any, tar_path: Path, tag: str, changes: tuple[str, ...] = IMPORT_CHANGES) -> None:
    """`docker import` a rootfs tarball as `tag` (the SDK's import_image streams the file)."""
    repo, _, version = tag.rpartition(":")
    try:
        client.api.import_image(src=str(tar_path), repository=repo, tag=version, changes=list(changes))
    except Exception as e:
        raise ImageError(f"docker import of {tar_path} as {tag} failed: {e}") from e
    if not has_image(client, tag):
        raise ImageError(f"docker import of {tar_path} as {tag} gave no image")


def ensure_base(client: Any, cache: Path | None = None) -> tuple[str, Path]:
    """The base image's tag and its rootfs tarball, built and imported when absent (under a file lock)."""
    mirror = apt_mirror()
    key = rootfs_key(mirror)
    root = cache_root(cache) / "docker"
    root.mkdir(parents=True, exist_ok=True)
    tar_path = root / f"base-{key}.tar"
    tag = base_tag(mirror)
    with file_lock(root / f"base-{key}.lock"):
        if not tar_path.is_file():
            build_rootfs_tar(tar_path, mirror)
        if not has_image(client, tag):
            import_tar(client, tar_path, tag)
    return tag, tar_path
