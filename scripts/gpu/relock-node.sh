#!/usr/bin/env bash
# Re-hash scripts/gpu/node-requirements.txt: download each pinned wheel for the H200 node (CPython 3.12,
# manylinux x86_64, the same platform tags `specqual stack pack` uses) and write `--hash=sha256:` for it.
# Change a version in the file first, then run this; `specqual stack pack --requirements` refuses a wheel whose
# hash is not the locked one.
set -euo pipefail
cd "$(dirname "$0")/../.."
.venv/bin/python - <<'PY'
import subprocess, sys, tempfile
from pathlib import Path
from eval.stacks.bundle import PLATFORMS, requirement_name, split_hash_pins, wheel_key
from eval.stacks.envs import sha256_file

path = Path("scripts/gpu/node-requirements.txt")
lines = path.read_text(encoding="utf-8").splitlines()
reqs = [ln.split("#")[0].strip() for ln in lines if ln.split("#")[0].strip()]
pins, _ = split_hash_pins(reqs)
with tempfile.TemporaryDirectory() as tmp:
    cmd = [sys.executable, "-m", "pip", "download", "-q", "-d", tmp, "--only-binary", ":all:", "--no-deps",
           "--python-version", "3.12", "--implementation", "cp", *[x for p in PLATFORMS for x in ("--platform", p)], *pins]
    subprocess.run(cmd, check=True)
    digest = {wheel_key(w.name)[0]: sha256_file(w) for w in Path(tmp).glob("*.whl")}
out = []
for ln in lines:
    body = ln.split("#")[0].strip()
    if not body:
        out.append(ln)
        continue
    req = " ".join(w for w in body.split() if not w.startswith("--hash="))
    out.append(f"{req} --hash=sha256:{digest[requirement_name(req)]}")
path.write_text("\n".join(out) + "\n", encoding="utf-8")
print(f"hashed {len(digest)} wheels into {path}")
PY
