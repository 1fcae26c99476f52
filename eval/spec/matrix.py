"""Expand a cohort file's matrix into cohorts, and check that compared cohorts differ only where declared."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

from eval.spec.errors import SpecError
from eval.spec.models import (
    DEFAULT_MODEL,
    Build,
    CohortEntry,
    CohortFile,
    ModelSpec,
    PDTopology,
    SingleTopology,
    Speculative,
)

CORE_FACTORS = ("build", "speculative", "topology")
DEFAULT_COLUMNS = {"build": "Build", "speculative": "Speculative", "topology": "Topology"}


@dataclass(frozen=True)
class Cohort:
    """One serving stack configuration: a value for every factor plus the settings they imply."""

    name: str
    label: str
    factors: dict[str, str]
    factor_labels: dict[str, str]
    build: Build
    speculative: Speculative
    topology: SingleTopology | PDTopology
    model: ModelSpec
    model_name: str = DEFAULT_MODEL
    workloads: tuple[str, ...] = ()
    server_args: dict[str, Any] = field(default_factory=dict)
    env: dict[str, str] = field(default_factory=dict)
    control: str | None = None

    @property
    def gpus(self) -> int:
        return self.topology.gpus

    def runs(self, workload: str) -> bool:
        """Whether this cohort runs `workload` (canary | swebench)."""
        return workload in self.workloads

    def effective(self) -> dict[str, Any]:
        """Everything that defines this cohort's stack, for difference checks and hashing."""
        return {
            "build": self.build.model_dump(mode="json"),
            "speculative": self.speculative.vllm_config(),
            "topology": self.topology.model_dump(mode="json", exclude={"label"}),
            "model": self.model.model_dump(mode="json"),
            "server_args": self.server_args,
            "env": self.env,
        }


def factor_domains(spec: CohortFile) -> dict[str, dict[str, Any]]:
    """Factor name -> {value name -> declared value} for core and custom factors."""
    domains: dict[str, dict[str, Any]] = {
        "build": dict(spec.builds),
        "speculative": dict(spec.speculative),
        "topology": dict(spec.topologies),
    }
    for name, factor in spec.factors.items():
        domains[name] = dict(factor.values)
    return domains


def columns(spec: CohortFile) -> dict[str, str]:
    """Factor -> report column title."""
    cols = dict(DEFAULT_COLUMNS)
    cols.update({n: f.column or n for n, f in spec.factors.items()})
    cols.update(spec.matrix.columns)
    return cols


def _entries(spec: CohortFile, domains: dict[str, dict[str, Any]]) -> list[CohortEntry]:
    if spec.matrix.cohorts is not None:
        return list(spec.matrix.cohorts)
    product = spec.matrix.product or {k: list(v) for k, v in domains.items()}
    for fname, values in product.items():
        if fname not in domains:
            raise SpecError(f"matrix.product.{fname}", f"unknown factor (known: {', '.join(domains)})")
        for v in values:
            if v not in domains[fname]:
                raise SpecError(f"matrix.product.{fname}", f"unknown value {v!r} (known: {', '.join(domains[fname])})")
    names = list(product)
    varying = [n for n in names if len(product[n]) > 1]
    entries = []
    for combo in itertools.product(*(product[n] for n in names)):
        chosen = dict(zip(names, combo, strict=True))
        name = "-".join(chosen[n] for n in varying) or chosen.get("build") or spec.name
        core = {k: chosen[k] for k in CORE_FACTORS if k in chosen}
        custom = {k: v for k, v in chosen.items() if k not in CORE_FACTORS}
        entries.append(CohortEntry(name=name, factors=custom, **core))
    return entries


def _single_default(domains: dict[str, dict[str, Any]], fname: str, where: str) -> str:
    values = list(domains[fname])
    if len(values) != 1:
        raise SpecError(f"{where}.{fname}", f"choose one of {', '.join(values)}")
    return values[0]


def _cohort(spec: CohortFile, entry: CohortEntry, idx: int, domains: dict[str, dict[str, Any]]) -> Cohort:
    where = f"matrix.cohorts[{idx}]" if spec.matrix.cohorts is not None else "matrix.product"
    chosen: dict[str, str] = {}
    for fname in domains:
        given = getattr(entry, fname, None) if fname in CORE_FACTORS else entry.factors.get(fname)
        value = given if given is not None else _single_default(domains, fname, where)
        if value not in domains[fname]:
            raise SpecError(f"{where}.{fname}", f"unknown value {value!r} (known: {', '.join(domains[fname])})")
        chosen[fname] = value
    unknown = set(entry.factors) - set(domains)
    if unknown:
        raise SpecError(f"{where}.factors", f"unknown factor(s) {sorted(unknown)} (known: {', '.join(domains)})")
    args: dict[str, Any] = dict(spec.server.args)
    env: dict[str, str] = dict(spec.server.env)
    labels: dict[str, str] = {}
    for fname, value in chosen.items():
        declared = domains[fname][value]
        labels[fname] = getattr(declared, "label", None) or value
        if fname not in CORE_FACTORS:
            args.update(declared.server_args)
            env.update(declared.env)
    args.update(entry.server_args)
    env.update(entry.env)
    name = entry.name or "-".join(chosen[f] for f in CORE_FACTORS)
    model_name, model = _model(spec, entry, where)
    return Cohort(
        name=name,
        label=entry.label or spec.matrix.labels.get(name, name),
        factors=chosen,
        factor_labels=labels,
        build=spec.builds[chosen["build"]],
        speculative=spec.speculative[chosen["speculative"]],
        topology=spec.topologies[chosen["topology"]],
        model=model,
        model_name=model_name,
        workloads=_workloads(spec, entry, where),
        server_args=args,
        env=env,
    )


def _model(spec: CohortFile, entry: CohortEntry, where: str) -> tuple[str, ModelSpec]:
    models = spec.all_models()
    name = entry.model or DEFAULT_MODEL
    if name not in models:
        raise SpecError(f"{where}.model", f"unknown model {name!r} (models: {', '.join(models)})")
    return name, models[name]


def _workloads(spec: CohortFile, entry: CohortEntry, where: str) -> tuple[str, ...]:
    """The enabled workloads the entry names (default: all); `enabled: false` turns one off for every cohort."""
    enabled = spec.workloads.enabled()
    if entry.workloads is None:
        return tuple(enabled)
    declared = [n for n in ("canary", "swebench") if getattr(spec.workloads, n) is not None]
    for w in entry.workloads:
        if w not in declared:
            raise SpecError(
                f"{where}.workloads",
                f"workload {w!r} is not declared under workloads (declared: {', '.join(declared) or 'none'})",
            )
    return tuple(w for w in enabled if w in entry.workloads)


def expand(spec: CohortFile) -> list[Cohort]:
    """All cohorts of the file, with their controls, after every cross-cohort check."""
    domains = factor_domains(spec)
    cohorts = [_cohort(spec, e, i, domains) for i, e in enumerate(_entries(spec, domains))]
    seen: set[str] = set()
    for c in cohorts:
        if c.name in seen:
            raise SpecError("matrix", f"two cohorts are named {c.name!r}: give explicit names")
        seen.add(c.name)
    for label_name in spec.matrix.labels:
        if label_name not in seen:
            raise SpecError(f"matrix.labels.{label_name}", f"no such cohort (cohorts: {', '.join(sorted(seen))})")
    by_name = {c.name: c for c in cohorts}
    controls: dict[str, str] = {}
    for i, comp in enumerate(spec.comparisons):
        where = f"comparisons[{i}]"
        for key in ("cohort", "control"):
            if getattr(comp, key) not in by_name:
                raise SpecError(
                    f"{where}.{key}", f"no such cohort {getattr(comp, key)!r} (cohorts: {', '.join(by_name)})"
                )
        if comp.cohort in controls:
            raise SpecError(f"{where}.cohort", f"{comp.cohort!r} already has a control")
        check_comparable(by_name[comp.cohort], by_name[comp.control], comp.differs_in, where, domains)
        controls[comp.cohort] = comp.control
    out = [Cohort(**{**c.__dict__, "control": controls.get(c.name)}) for c in cohorts]
    canary_reference(spec, out)
    return out


def canary_reference(spec: CohortFile, cohorts: list[Cohort]) -> str | None:
    """The cohort whose canary outputs the others are compared with, after checking the canary's cohorts:
    `workloads.canary.reference`, else the first canary cohort without a control. None without a canary."""
    canary = [c for c in cohorts if c.runs("canary")]
    cfg = spec.workloads.canary
    if cfg is None or not cfg.enabled:
        return None
    if not canary:
        raise SpecError("workloads.canary", "no cohort runs the canary (see matrix.cohorts[].workloads)")
    if cfg.reference is not None:
        names = [c.name for c in cohorts]
        if cfg.reference not in names:
            raise SpecError("workloads.canary.reference", f"no cohort {cfg.reference!r} (cohorts: {', '.join(names)})")
        ref = next(c for c in cohorts if c.name == cfg.reference)
        if not ref.runs("canary"):
            raise SpecError(
                "workloads.canary.reference",
                f"{ref.name!r} does not run the canary (canary cohorts: {', '.join(c.name for c in canary)})",
            )
    else:
        ref = next((c for c in canary if c.control is None), canary[0])
    # Canary outputs are compared token by token (with the control or the reference): one model for all of them.
    other = [c.name for c in canary if c.model_name != ref.model_name]
    if other:
        raise SpecError(
            "workloads.canary.reference",
            f"canary cohorts {other} use another model than the reference {ref.name} ({ref.model_name}): "
            "canary outputs are compared token by token, so every canary cohort needs the same model",
        )
    return ref.name


def check_comparable(
    a: Cohort, b: Cohort, differs_in: list[str], where: str, domains: dict[str, dict[str, Any]]
) -> None:
    """Refuse a comparison whose cohorts differ in anything beyond the declared factors (or model, or workloads)."""
    for f in differs_in:
        if f not in domains and f != "model":
            raise SpecError(f"{where}.differs_in", f"unknown factor {f!r} (known: {', '.join([*domains, 'model'])})")
    if a.model_name != b.model_name and "model" not in differs_in:
        raise SpecError(
            where,
            f"{a.name} and {b.name} use different models ({a.model_name} vs {b.model_name}); "
            "add model to differs_in or compare cohorts of one model",
        )
    missing = [w for w in a.workloads if not b.runs(w)]
    if missing:
        raise SpecError(where, f"{a.name} runs {missing} but its control {b.name} does not: nothing to compare with")
    for fname in domains:
        if fname not in differs_in and a.factors[fname] != b.factors[fname]:
            raise SpecError(
                where,
                f"{a.name} and {b.name} differ in undeclared factor {fname!r} "
                f"({a.factors[fname]} vs {b.factors[fname]}); add it to differs_in or compare other cohorts",
            )
    # Settings a cohort entry adds on its own (not through a factor) must match too.
    for key in ("server_args", "env"):
        own_a, own_b = getattr(a, key), getattr(b, key)
        factor_keys = _factor_keys(domains, key, differs_in)
        diff = sorted(k for k in set(own_a) | set(own_b) if k not in factor_keys and own_a.get(k) != own_b.get(k))
        if diff:
            raise SpecError(
                where,
                f"{a.name} and {b.name} differ in {key} {diff} outside the declared factors {differs_in}",
            )


def _factor_keys(domains: dict[str, dict[str, Any]], key: str, differs_in: list[str]) -> set[str]:
    keys: set[str] = set()
    for fname in differs_in:
        if fname in CORE_FACTORS or fname not in domains:  # `model` is no factor: it sets no args or env
            continue
        for value in domains[fname].values():
            keys.update(getattr(value, key))
    return keys
