"""Ask an interpreter which `vllm` it would import, without importing it (fast, no side effects).

The same probe runs at build time (to find the package to overlay) and at launch (with the launch's exact
environment) to prove that the server will run the overlay and that the patched files are the built ones.
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

# Runs inside the vLLM environment's interpreter: stdlib only.
_PROBE = r"""
import hashlib, importlib.metadata as md, importlib.util, json, os, platform, sys
spec = importlib.util.find_spec("vllm")
pkg = os.path.dirname(spec.origin) if spec and spec.origin else None
root = os.path.dirname(pkg) if pkg else None
def version(name):
    try:
        return md.version(name)
    except md.PackageNotFoundError:
        return None
dists = md.packages_distributions().get("vllm", [])
hashes = {}
for rel in json.loads(sys.argv[1]):
    p = os.path.join(root, rel) if root else None
    if p and os.path.isfile(p):
        hashes[rel] = hashlib.sha256(open(p, "rb").read()).hexdigest()
    else:
        hashes[rel] = None
print(json.dumps({
    "vllm_path": pkg, "root": root, "distributions": dists,
    "vllm_version": version("vllm"), "dist_versions": {d: version(d) for d in dists},
    "torch": version("torch"), "python": platform.python_version(), "executable": sys.executable,
    "hashes": hashes,
}))
"""


class ProbeError(Exception):
    """The interpreter could not be probed (missing, broken, or no vllm installed)."""


@dataclass
class ProbeResult:
    vllm_path: Path
    distributions: list[str]
    vllm_version: str | None
    dist_versions: dict[str, str | None]
    torch: str | None
    python: str
    executable: str
    hashes: dict[str, str | None] = field(default_factory=dict)

    @property
    def site_root(self) -> Path:
        """The directory holding the `vllm` package (site-packages, or an overlay)."""
        return self.vllm_path.parent


def probe(python: str | Path, env: dict[str, str] | None = None, files: list[str] | None = None) -> ProbeResult:
    """Probe `python` (with `env` as its complete environment when given) for vllm and file hashes."""
    argv = [str(python), *(["-I"] if env is None else []), "-c", _PROBE, json.dumps(files or [])]
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise ProbeError(f"cannot run {python}: {e}") from e
    if proc.returncode != 0:
        raise ProbeError(f"probe of {python} failed: {proc.stderr.strip()[-2000:]}")
    data = json.loads(proc.stdout)
    if not data["vllm_path"]:
        raise ProbeError(f"{python} has no importable vllm package")
    return ProbeResult(
        vllm_path=Path(data["vllm_path"]),
        distributions=data["distributions"],
        vllm_version=data["vllm_version"],
        dist_versions=data["dist_versions"],
        torch=data["torch"],
        python=data["python"],
        executable=data["executable"],
        hashes=data["hashes"],
    )
