"""Expand a cohort file's matrix into cohorts, and check that compared cohorts differ only where declared."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

from eval.spec.errors import SpecError
from eval.spec.models import (
    Build,
    CohortEntry,
    CohortFile,
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
    server_args: dict[str, Any] = field(default_factory=dict)
    env: dict[str, str] = field(default_factory=dict)
    control: str | None = None

    @property
    def gpus(self) -> int:
        return self.topology.gpus

    def effective(self) -> dict[str, Any]:
        """Everything that defines this cohort's stack, for difference checks and hashing."""
        return {
            "build": self.build.model_dump(mode="json"),
            "speculative": self.speculative.vllm_config(),
            "topology": self.topology.model_dump(mode="json", exclude={"label"}),
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
    return Cohort(
        name=name,
        label=entry.label or spec.matrix.labels.get(name, name),
        factors=chosen,
        factor_labels=labels,
        build=spec.builds[chosen["build"]],
        speculative=spec.speculative[chosen["speculative"]],
        topology=spec.topologies[chosen["topology"]],
        server_args=args,
        env=env,
    )


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
    return [Cohort(**{**c.__dict__, "control": controls.get(c.name)}) for c in cohorts]


def check_comparable(
    a: Cohort, b: Cohort, differs_in: list[str], where: str, domains: dict[str, dict[str, Any]]
) -> None:
    """Refuse a comparison whose cohorts differ in anything beyond the declared factors."""
    for f in differs_in:
        if f not in domains:
            raise SpecError(f"{where}.differs_in", f"unknown factor {f!r} (known: {', '.join(domains)})")
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
        if fname in CORE_FACTORS:
            continue
        for value in domains[fname].values():
            keys.update(getattr(value, key))
    return keys
