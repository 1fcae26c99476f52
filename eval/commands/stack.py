"""CLI commands of the stack stage: `serve`, `stack build`, `stack pack`, `stack unpack`."""

from __future__ import annotations

import signal
import time
from pathlib import Path
from typing import Annotated, Any

import typer

from eval.commands.common import ConfigArg, ConfigOpt, fail, load, spec_errors

CacheOpt = Annotated[Path | None, typer.Option(help="build cache (default $SPECQUAL_CACHE or ~/.cache/specqual)")]
stack_app = typer.Typer(help="Build vLLM stacks and move them to offline nodes.", no_args_is_help=True)


def _build_or_fail(spec: Any, name: str, cache: Path | None) -> Any:
    from eval.stacks import BuildError, ensure_build

    try:
        return ensure_build(spec, name, cache)
    except BuildError as e:
        fail(str(e))


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


@spec_errors
def serve(
    files: ConfigArg,
    cohort: Annotated[str, typer.Option("--cohort", help="cohort to serve")],
    config: ConfigOpt = None,
    run_dir: Annotated[Path | None, typer.Option(help="write logs and stack.json under RUN_DIR/<cohort>/")] = None,
    cache: Annotated[
        Path | None, typer.Option(help="build cache (default $SPECQUAL_CACHE or ~/.cache/specqual)")
    ] = None,
) -> None:
    """Bring one cohort's stack up (on the file's executor: local processes or a Slurm job) and hold it until
    Ctrl-C; print the base URL and the commands.

    Example: specqual serve cohorts/smollm2-cpu.yaml --cohort stock-ngram
    """
    from eval.executors import pick
    from eval.spec.errors import SpecError
    from eval.stacks.local import StackError
    from eval.stacks.models import model_dir

    loaded = load(files, config)
    try:
        c = loaded.cohort(cohort)
    except SpecError as e:
        fail(str(e))
    build = _build_or_fail(loaded.spec, c.factors["build"], cache)
    model = model_dir(loaded.spec, name=c.model_name)
    stack = pick(loaded).stack(c, model, run_dir, build)
    signal.signal(signal.SIGTERM, _interrupt)  # `kill` stops the stack as cleanly as Ctrl-C
    try:
        with stack:
            for line in stack.command_lines():
                typer.echo(f"command: {line}")
            typer.echo(f"base_url: {stack.base_url}")
            typer.echo(f"logs: {stack.log_dir}  (Ctrl-C stops the stack)")
            while stack.alive():
                time.sleep(1.0)
            fail("a process of the stack exited; see the logs", 1)
    except StackError as e:  # SlurmStackError is one too
        fail(str(e), 1)
    except KeyboardInterrupt:
        typer.echo("stopped")


@stack_app.command("build")
@spec_errors
def build_cmd(
    files: ConfigArg,
    build: Annotated[list[str] | None, typer.Option("--build", help="build name (repeatable; default all)")] = None,
    config: ConfigOpt = None,
    cache: Annotated[
        Path | None, typer.Option(help="build cache (default $SPECQUAL_CACHE or ~/.cache/specqual)")
    ] = None,
) -> None:
    """Create (or reuse) the environment and overlay of each build; print what each will run.

    Example: specqual stack build cohorts/smollm2-cpu.yaml --build fix-reverted
    """
    loaded = load(files, config)
    for name in build or list(loaded.spec.builds):
        b = _build_or_fail(loaded.spec, name, cache)
        typer.echo(f"{name}: vllm {b.vllm_version} ({b.distribution}) python={b.python} overlay={b.overlay}")
        for rel, sha in b.patched_files.items():
            typer.echo(f"  patched {rel} sha256={sha}")


@stack_app.command("model")
@spec_errors
def model_cmd(files: ConfigArg, config: ConfigOpt = None) -> None:
    """Generate (or take from the cache) every model the cohort file generates, and print each directory (a
    trained organism to carry to an offline node, say); named models given by path are printed as they are.

    Example: specqual stack model cohorts/organism-h200.yaml
    """
    from eval.stacks.models import model_dir

    loaded = load(files, config)
    for name in loaded.spec.all_models():
        typer.echo(f"{name}: {model_dir(loaded.spec, name=name)}")


@stack_app.command("pack")
@spec_errors
def pack_cmd(
    files: ConfigArg,
    build: Annotated[str, typer.Option("--build", help="build to pack")],
    out: Annotated[Path, typer.Option("--out", help="bundle directory to write")],
    gpu_arch: Annotated[str | None, typer.Option(help="slim the wheel to one GPU architecture, e.g. sm_90")] = None,
    have: Annotated[Path | None, typer.Option(help="`pip freeze` of the target node: pack only what it lacks")] = None,
    python_version: Annotated[str | None, typer.Option(help="target Python, e.g. 3.12")] = None,
    requirements: Annotated[
        Path | None, typer.Option(help="exact dependency pins to pack instead of resolving (installed --no-deps)")
    ] = None,
    drop: Annotated[
        list[str] | None, typer.Option(help="with --gpu-arch: also leave out wheel members matching this glob")
    ] = None,
    archive: Annotated[
        bool, typer.Option(help="all wheels in one reproducible wheels.tar.xz (stored inside, xz outside)")
    ] = False,
    config: ConfigOpt = None,
) -> None:
    """Write an offline bundle: the vLLM wheel, missing dependency wheels, patches and a manifest with hashes.

    Example: specqual stack pack cohorts/pr55178-qualification.yaml --build unpatched --out /tmp/bundle --gpu-arch sm_90
    """
    from eval.stacks.bundle import BundleError, pack

    loaded = load(files, config)
    try:
        reqs = None
        if requirements is not None:
            lines = (ln.split("#")[0].strip() for ln in requirements.read_text(encoding="utf-8").splitlines())
            reqs = [ln for ln in lines if ln]
        manifest = pack(
            loaded.spec,
            build,
            out,
            gpu_arch=gpu_arch,
            have=have,
            python_version=python_version,
            requirements=reqs,
            drop=drop,
            archive=archive,
        )
    except BundleError as e:
        fail(str(e))
    typer.echo(f"wrote {out}: {len(manifest['wheels'])} wheels, {len(manifest['patches'])} patches")


@stack_app.command("unpack")
def unpack_cmd(
    bundle: Annotated[Path, typer.Argument(help="bundle directory written by `specqual stack pack`")],
    target: Annotated[Path, typer.Option("--target", help="environment to create")] = Path(".venv-vllm"),
) -> None:
    """Install a bundle with no network: check every hash, create the environment, apply the patches.

    Example: specqual stack unpack /tmp/bundle --target /scratch/vllm-env
    """
    from eval.stacks.bundle import BundleError, unpack

    try:
        info = unpack(bundle, target)
    except BundleError as e:
        fail(str(e))
    typer.echo(f"installed {info['vllm']} into {target}; overlay {info['overlay']}")


def register(app: typer.Typer) -> None:
    """Add this stage's commands to the app."""
    app.command()(serve)
    app.add_typer(stack_app, name="stack")
