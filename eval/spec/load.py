"""Read cohort files and `key.path=value` overrides in order, merge them, validate the whole tree at once.

`load_spec(["base.yaml", "other.yaml", "sampling.temperature=0.6"])` returns a `LoadedSpec` or raises one
`SpecError` whose text names the file (or override) and the field. Nothing is started here.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from eval.spec.checks import file_errors, registry_errors
from eval.spec.errors import SpecError, raise_all
from eval.spec.matrix import Cohort, expand
from eval.spec.models import CohortFile

# Paths (dotted, `*` = any key) that do not change what a model outputs: changing them may resume a run.
NON_OUTPUT_PATHS = (
    "description",
    "executor",
    "policy",
    "comparisons",
    "matrix.labels",
    "matrix.columns",
    "server.startup_timeout_s",
    "server.max_restarts",
    "workloads.swebench.concurrency",
    "workloads.swebench.grader.workers",
    "workloads.swebench.grade_during_run",
    "workloads.swebench.max_infra_retries",
    "workloads.swebench.agent.request_timeout_s",
    "workloads.swebench.agent.request_retries",
    "builds.*.label",
    "speculative.*.label",
    "topologies.*.label",
    "factors.*.column",
    "factors.*.values.*.label",
)

Provenance = dict[tuple[str, ...], str]


class _Loader(yaml.SafeLoader):
    """YAML 1.2 booleans: only true/false. `off: {...}` is a key named "off", not False."""


_Loader.yaml_implicit_resolvers = {
    ch: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:bool"]
    for ch, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF")
)


def parse_yaml(text: str) -> Any:
    return yaml.load(text, Loader=_Loader)


@dataclass(frozen=True)
class LoadedSpec:
    spec: CohortFile
    cohorts: list[Cohort]
    sources: list[str]
    merged: dict[str, Any]

    @property
    def output_hash(self) -> str:
        return output_hash(self.spec)

    def cohort(self, name: str) -> Cohort:
        for c in self.cohorts:
            if c.name == name:
                return c
        raise SpecError("--cohort", f"no cohort {name!r} (cohorts: {', '.join(c.name for c in self.cohorts)})")


def is_override(source: str) -> bool:
    return "=" in source and not Path(source).exists()


def _read_yaml(path: Path, chain: tuple[Path, ...] = ()) -> list[tuple[dict[str, Any], str]]:
    """A file and the files it `extends`, base first, as (mapping, source name) pairs."""
    if not path.is_file():
        raise SpecError("", "no such cohort file", str(path))
    if path.resolve() in chain:
        raise SpecError("extends", "files extend each other in a cycle", str(path))
    try:
        data = parse_yaml(path.read_text(encoding="utf-8"))
    except (yaml.YAMLError, UnicodeDecodeError) as e:
        raise SpecError("", f"not valid YAML: {' '.join(str(e).split())}", str(path)) from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise SpecError("", f"the top level must be a mapping, not {type(data).__name__}", str(path))
    parents = data.pop("extends", None) or []
    if isinstance(parents, str):
        parents = [parents]
    if not isinstance(parents, list) or not all(isinstance(p, str) for p in parents):
        raise SpecError("extends", "must be a path or a list of paths", str(path))
    layers: list[tuple[dict[str, Any], str]] = []
    for parent in parents:
        layers += _read_yaml((path.parent / parent), (*chain, path.resolve()))
    layers.append((data, str(path)))
    return layers


def _merge(dst: dict[str, Any], src: dict[str, Any], source: str, prov: Provenance, prefix: tuple[str, ...]) -> None:
    for key, value in src.items():
        here = (*prefix, str(key))
        if isinstance(value, dict) and isinstance(dst.get(key), dict):
            _merge(dst[key], value, source, prov, here)
        else:
            dst[key] = value
            prov[here] = source


def _parse_override(text: str) -> tuple[list[str], Any]:
    key, _, raw = text.partition("=")
    parts = key.strip().split(".")
    if not key.strip() or any(not p for p in parts):
        raise SpecError("", f"bad override path {key!r}: use dotted keys like sampling.temperature=0.6", text)
    try:
        value = parse_yaml(raw) if raw.strip() else ""
    except yaml.YAMLError:
        value = raw
    return parts, value


def _apply_override(merged: dict[str, Any], text: str, prov: Provenance) -> None:
    parts, value = _parse_override(text)
    node: Any = merged
    for depth, part in enumerate(parts[:-1]):
        here = ".".join(parts[: depth + 1])
        if isinstance(node, list):
            if not part.isdigit() or int(part) >= len(node):
                raise SpecError(here, f"bad override path: index {part!r} is not in a list of {len(node)}", text)
            node = node[int(part)]
            continue
        if not isinstance(node, dict):
            raise SpecError(here, f"bad override path: {here} is a {type(node).__name__}, not a mapping", text)
        node = node.setdefault(part, {})
    last = parts[-1]
    if isinstance(node, list):
        if not last.isdigit() or int(last) >= len(node):
            raise SpecError(".".join(parts), f"bad override path: index {last!r} is not in a list of {len(node)}", text)
        node[int(last)] = value
    elif isinstance(node, dict):
        node[last] = value
    else:
        raise SpecError(".".join(parts), "bad override path: its parent is not a mapping", text)
    prov[tuple(parts)] = text


def _loc(loc: tuple[int | str, ...]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif part in ("SingleTopology", "PDTopology") or part.startswith(("function-", "tagged-union")):
            continue
        else:
            out += f".{part}" if out else str(part)
    return out


def _source_for(loc: tuple[int | str, ...], prov: Provenance, default: str) -> str:
    keys = tuple(str(p) for p in loc)
    for n in range(len(keys), 0, -1):
        if keys[:n] in prov:
            return prov[keys[:n]]
    return default


def _validation_errors(e: ValidationError, prov: Provenance, default: str) -> list[SpecError]:
    """One SpecError per field pydantic found wrong (a value that fits no member of a union: its first error)."""
    out: dict[str, SpecError] = {}
    for err in e.errors():
        msg = err["msg"].removeprefix("Value error, ")
        if err["type"] not in ("missing", "extra_forbidden", "value_error") and "input" in err:  # ours say it
            shown = repr(err["input"])
            msg += f" (got {shown[:60]}{'...' if len(shown) > 60 else ''})"
        field = _loc(err["loc"]) or "(top level)"
        out.setdefault(field, SpecError(field, msg, _source_for(err["loc"], prov, default)))
    return list(out.values())


def load_spec(sources: list[str]) -> LoadedSpec:
    """Merge files and overrides in order; validate everything; expand the matrix."""
    files = [s for s in sources if not is_override(s)]
    if not files:
        raise SpecError("", "give at least one cohort file (overrides alone are not a cohort file)")
    merged: dict[str, Any] = {}
    prov: Provenance = {}
    for source in sources:
        if is_override(source):
            _apply_override(merged, source, prov)
            continue
        for data, name in _read_yaml(Path(source)):
            _merge(merged, data, name, prov, ())
    first = files[0]
    invalid: list[SpecError] = []
    try:
        spec = CohortFile.model_validate(merged)
    except ValidationError as e:
        invalid = _validation_errors(e, prov, first)
    raise_all(invalid)  # outside the except: the CLI shows these, not pydantic's traceback
    spec._base_dir = Path(first).resolve().parent
    errors = file_errors(spec, first) + registry_errors(spec, first)
    cohorts: list[Cohort] = []
    try:
        cohorts = expand(spec)
    except SpecError as e:
        errors.append(e.with_source(_source_for(tuple(e.field.split(".")), prov, first)))
    raise_all(errors)
    return LoadedSpec(spec=spec, cohorts=cohorts, sources=list(sources), merged=merged)


def _drop(tree: Any, path: list[str]) -> None:
    if not isinstance(tree, dict) or not path:
        return
    head, rest = path[0], path[1:]
    keys = list(tree) if head == "*" else [head]
    for k in keys:
        if k not in tree:
            continue
        if rest:
            _drop(tree[k], rest)
        else:
            del tree[k]


def _drop_unset_choices(tree: dict[str, Any]) -> None:
    """Per-cohort models and workloads left at their defaults leave the hash as it was before they existed."""
    if not tree.get("models"):
        tree.pop("models", None)
    for entry in (tree.get("matrix") or {}).get("cohorts") or []:
        for key in ("model", "workloads"):
            if entry.get(key) is None:
                entry.pop(key, None)


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def output_hash(spec: CohortFile) -> str:
    """sha256 over everything that can change what a model outputs (patch contents included)."""
    tree = spec.model_dump(mode="json")
    for p in NON_OUTPUT_PATHS:
        _drop(tree, p.split("."))
    _drop_unset_choices(tree)
    patches = {p.file: _digest(spec.resolve(p.file)) for b in spec.builds.values() for p in b.patches}
    blob = json.dumps({"spec": tree, "patches": patches}, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()
