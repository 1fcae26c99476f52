"""Build the images specqual makes here, ahead of time (CI does so once per run, before the docker tier).

python -m eval.images base                  # the base image (debootstrap + docker import), cached by hash
python -m eval.images instances DIR         # the instance images of the local task set in DIR
"""

from __future__ import annotations

import sys
import time
from pathlib import Path


def main(argv: list[str]) -> int:
    import docker

    from eval.images.base import ImageError, ensure_base

    if not argv or argv[0] not in ("base", "instances") or (argv[0] == "instances" and len(argv) != 2):
        print(__doc__, file=sys.stderr)
        return 2
    started = time.monotonic()
    try:
        client = docker.from_env()
        tag, _ = ensure_base(client)
        print(f"{tag} ({time.monotonic() - started:.1f} s)")
        if argv[0] == "instances":
            from eval.images.instance import ensure_instance_image
            from eval.spec.models import SWEBenchWorkload
            from eval.tasks.load import load_tasks

            path = Path(argv[1])
            workload = SWEBenchWorkload.model_validate({"dataset": "specqual/local", "path": str(path)})
            for task in load_tasks(workload, path):
                print(f"{ensure_instance_image(client, task)} ({time.monotonic() - started:.1f} s)")
    except (ImageError, docker.errors.DockerException) as e:
        print(f"specqual images: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
