"""Pin a trained organism: `python -m eval.models.organism.pin MODEL_DIR` copies its weights, tokenizer and training
record into `build.PINNED_DIR`, under its cache name, where every machine installs it from (build.py's docstring).

MODEL_DIR is a directory `specqual stack model` or the demo trained (`organism-KEY`, or `organism-KEY-trained`
when it was retrained beside a pinned one). Commit the new directory and remove the one it replaces.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

from eval.models.organism.build import DONE_MARKER, PINNED_DIR, PINNED_FILES, weights_sha256


def pin(model_dir: Path, pinned_dir: Path = PINNED_DIR) -> Path:
    record = json.loads((model_dir / DONE_MARKER).read_text())
    if "pinned_from" in record:
        raise ValueError(f"{model_dir} was installed from a pinned organism ({record['pinned_from']}), not trained")
    if weights_sha256(model_dir) != record.get("weights_sha256"):
        raise ValueError(f"{model_dir}: the weights' sha256 is not the one its training record holds")
    name = model_dir.name.removesuffix("-trained")
    if not name.startswith("organism-"):
        raise ValueError(f"{model_dir}: not an organism directory (organism-KEY)")
    out = pinned_dir / name
    tmp = out.with_name(name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    for f in PINNED_FILES:
        shutil.copy2(model_dir / f, tmp / f)
    shutil.rmtree(out, ignore_errors=True)
    tmp.rename(out)
    return out


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        out = pin(Path(argv[0]))
    except (OSError, ValueError, KeyError) as e:
        print(f"pin: {e}", file=sys.stderr)
        return 1
    print(f"pinned {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
