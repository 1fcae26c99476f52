"""Build the images specqual makes here, ahead of time (CI does so once per run, before the docker tier).

python -m eval.images base                  # the base image (debootstrap + docker import), cached by hash
python -m eval.images instances DIR         # the instance images of the local task set in DIR
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from eval.images.base import ImageError


def main(argv: list[str]) -> int:
    import docker

    from eval.images.base import ensure_base

    arity = {"base": 1, "instances": 2, "env": 3}
    if not argv or arity.get(argv[0]) != len(argv):
        print(__doc__, file=sys.stderr)
        return 2
    started = time.monotonic()
    try:
        client = docker.from_env()
        tag, _ = ensure_base(client)
        print(f"{tag} ({time.monotonic() - started:.1f} s)", file=sys.stderr if argv[0] == "env" else sys.stdout)
        if argv[0] == "env":
            print(env_image(client, argv[1], argv[2]))
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


def env_image(client: object, cohort_file: str, build: str) -> str:
    """Create (or reuse) the build's cached environment, then its env image."""
    from eval.images.env import ensure_env_image
    from eval.spec.load import load_spec
    from eval.stacks import ensure_build

    env = ensure_build(load_spec([cohort_file]).spec, build)
    if env.env_dir is None:
        raise ImageError(f"build {build} has no environment of its own (it is an image already)")
    return ensure_env_image(client, Path(env.env_dir))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
