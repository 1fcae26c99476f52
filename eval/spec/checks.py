"""Checks of a cohort file that the schema cannot make: the files it names exist, and the names it gives
(executor, agent, model generators) are registered. Each returns every problem it finds, for `load_spec` to list
together with the rest."""

from __future__ import annotations

from eval.spec.errors import SpecError
from eval.spec.models import DEFAULT_MODEL, CohortFile


def file_errors(spec: CohortFile, source: str) -> list[SpecError]:
    checks: list[tuple[str, str | None]] = []
    for bname, build in spec.builds.items():
        checks += [(f"builds.{bname}.patches[{i}].file", p.file) for i, p in enumerate(build.patches)]
        checks.append((f"builds.{bname}.wheel", build.wheel))
    checks.append(("model.chat_template", spec.model.chat_template))
    checks += [(f"models.{name}.chat_template", m.chat_template) for name, m in spec.models.items()]
    if spec.workloads.swebench is not None:
        checks.append(("workloads.swebench.exclude", spec.workloads.swebench.exclude))
    errors = [
        SpecError(field, f"file not found: {spec.resolve(value)}", source)
        for field, value in checks
        if value is not None and not spec.resolve(value).is_file()
    ]
    sw = spec.workloads.swebench
    generated = sw is not None and sw.dataset.startswith("specqual/")  # specqual makes these where `path` says
    if sw is not None and sw.enabled and sw.path and not generated and not spec.resolve(sw.path).exists():
        errors.append(
            SpecError("workloads.swebench.path", f"no such file or directory: {spec.resolve(sw.path)}", source)
        )
    return errors


def registry_errors(spec: CohortFile, source: str) -> list[SpecError]:
    from eval.registry import AGENTS, EXECUTORS, MODEL_GENERATORS, unknown

    names = [(EXECUTORS, spec.executor.kind, "executor.kind")]
    for name, m in spec.all_models().items():
        if m.generate is not None:
            where = "model" if name == DEFAULT_MODEL else f"models.{name}"
            names.append((MODEL_GENERATORS, m.generate.kind, f"{where}.generate.kind"))
    if spec.workloads.swebench is not None:
        names.append((AGENTS, spec.workloads.swebench.agent.kind, "workloads.swebench.agent.kind"))
    return [SpecError(field, why, source) for reg, name, field in names if (why := unknown(reg, name)) is not None]
