"""Docker builds: a `vllm/vllm-openai`-style image, or a derived image with the build's patches applied.

The derived image copies the patches and specqual's own patcher (`eval.stacks.patchfile`, stdlib only) into
the image and applies them to the image's installed `vllm` in a `RUN` step, so a docker build patches exactly
like a local overlay; `/specqual/patched.json` in the image records the patched files' sha256. The `docker`
SDK is imported only here (optional dependency).
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

from eval.stacks.builds import BuildEnv
from eval.stacks.envs import BuildError, short_hash
from eval.stacks.overlay import PatchRef

APPLY = r"""
import hashlib, importlib.util, json, os, sys
sys.path.insert(0, "/specqual")
from patchfile import apply_patch
root = os.path.dirname(os.path.dirname(importlib.util.find_spec("vllm").origin))
edited = set()
for name, reverse in json.load(open("/specqual/patches.json")):
    text = open(os.path.join("/specqual/patches", name), encoding="utf-8").read()
    edited.update(apply_patch(__import__("pathlib").Path(root), text, reverse, name))
hashes = {rel: hashlib.sha256(open(os.path.join(root, rel), "rb").read()).hexdigest() for rel in sorted(edited)}
json.dump({"root": root, "patched_files": hashes}, open("/specqual/patched.json", "w"), indent=2)
"""


def image_tag(build_name: str, base: str, patches: list[PatchRef]) -> str:
    key = short_hash({"base": base, "patches": [(p.sha256, p.reverse) for p in patches]})
    return f"specqual/{build_name}:{key}"


def write_context(ctx: Path, base: str, patches: list[PatchRef]) -> None:
    """The docker build context: Dockerfile, patches, the patcher and its driver."""
    (ctx / "patches").mkdir(parents=True)
    order = []
    for i, p in enumerate(patches):
        name = f"{i:02d}-{p.file.name}"
        shutil.copy2(p.file, ctx / "patches" / name)
        order.append([name, p.reverse])
    (ctx / "patches.json").write_text(json.dumps(order))
    shutil.copy2(Path(__file__).with_name("patchfile.py"), ctx / "patchfile.py")
    (ctx / "apply.py").write_text(APPLY)
    (ctx / "Dockerfile").write_text(
        f"FROM {base}\n"
        "COPY patchfile.py apply.py patches.json /specqual/\n"
        "COPY patches/ /specqual/patches/\n"
        "RUN python3 /specqual/apply.py\n"
    )


def ensure_image(build_name: str, base: str, patches: list[PatchRef], root: Path) -> BuildEnv:
    """The image to run: `base` itself without patches, else a derived image built (once) with the patches."""
    if not patches:
        return _env(build_name, base, {})
    try:
        import docker
    except ImportError as e:
        raise BuildError("image builds need the docker SDK: pip install docker") from e
    client = docker.from_env()
    tag = image_tag(build_name, _image_id(client, base), patches)
    try:
        client.images.get(tag)
    except docker.errors.ImageNotFound:
        root.mkdir(parents=True, exist_ok=True)  # a fresh cache: the build context lives under it
        with tempfile.TemporaryDirectory(dir=root) as td:
            write_context(Path(td), base, patches)
            try:
                client.images.build(path=td, tag=tag, rm=True)
            except docker.errors.BuildError as e:
                log = "".join(str(x.get("stream", x.get("error", ""))) for x in e.build_log)
                raise BuildError(f"derived image for {build_name} failed:\n{log[-4000:]}") from e
    record = json.loads(_read_file(client, tag, "/specqual/patched.json"))
    return _env(build_name, tag, record["patched_files"], patches)


def _image_id(client: Any, base: str) -> str:
    """The base image's id where it is local: a rebuilt base under the same name gets a new derived image (keyed
    on the name, a reused engine kept serving the one derived from the old base). Else the name (docker pulls)."""
    import docker

    try:
        return str(client.images.get(base).id)
    except docker.errors.ImageNotFound:
        return base


def _read_file(client: Any, image: str, path: str) -> bytes:
    """One file of an image, through the archive API of a created (never started) container: the output of a
    `cat` run came back cut short once on a loaded engine."""
    import io
    import tarfile

    container = client.containers.create(image, ["true"], entrypoint="")
    try:
        stream, _ = container.get_archive(path)
        with tarfile.open(fileobj=io.BytesIO(b"".join(stream))) as tar:
            member = tar.extractfile(tar.getmembers()[0])
            if member is None:
                raise BuildError(f"{path} in {image} is not a file")
            return member.read()
    finally:
        container.remove(force=True)


def _env(name: str, image: str, hashes: dict[str, str], patches: list[PatchRef] | None = None) -> BuildEnv:
    return BuildEnv(
        name=name,
        source_kind="image",
        python=None,
        env_dir=None,
        overlay=None,
        vllm_version=None,
        distribution=None,
        wheel_sha256=None,
        torch=None,
        patches=list(patches or []),
        patched_files=hashes,
        image=image,
    )
