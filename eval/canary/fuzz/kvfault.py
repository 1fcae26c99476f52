"""A fault-injecting KV connector for vLLM 0.32 (issue 27): a real connector whose loads fail on purpose, seeded.

vLLM loads it through `--kv-transfer-config` (no specqual import inside the server: this file imports only the
standard library at the top, and vLLM when a connector class is first asked for):

    {"kv_connector": "FaultyExampleConnector", "kv_connector_module_path": "eval.canary.fuzz.kvfault",
     "kv_role": "kv_both", "kv_load_failure_policy": "recompute",
     "kv_connector_extra_config": {"shared_storage_path": "/tmp/...", "fault_injection": {"seed": 1, ...}}}

`Faulty<Name>` is the registered connector `<Name>` (ExampleConnector, ...) with these faults, each decided from
the seed and the request's prompt token ids only (the same case gets the same faults on every run):
- `async_rate`: a load the connector would do synchronously is made asynchronous: the request waits in
  WAITING_FOR_REMOTE_KVS, the worker loads its blocks in the next step (with or without a forward pass) and reports
  it finished receiving 0..`async_delay_steps` steps later (ExampleConnector only: the other connectors' loads are
  left as they are);
- `invalid_rate`: some blocks a load brought in are overwritten with noise and reported through
  `get_block_ids_with_load_errors` (in the step that loaded them; for an asynchronous load, in the step that
  reports it finished);
- `failed_recv_rate` (default 0): an asynchronous load fails as a whole: its blocks are overwritten with noise
  and the request is reported in `failed_recving` (and `finished_recving`, as vLLM's connectors do) when it
  finishes (ExampleConnector only, asynchronous loads only; no invalid blocks are reported for it);
- `pending_lookup_rate` (default 0): the connector cannot tell yet how many tokens it holds: the first 1..
  `async_delay_steps` + 1 lookups of a request answer None (vLLM skips the request and asks again next step), as
  a connector with an asynchronous lookup does (LMCache);
- `report` (default off): what connectors with a remote store send beside the KV: scheduler-side transfer stats
  (`get_kv_connector_stats`, counters of the faults drawn; `build_kv_connector_stats` rebuilds them in the API
  server) and KV events (`take_events`: a BlockStored for each prompt the wrapped connector saves);
- `refuse_reset` (default off): `reset_cache` answers False (a store that cannot be cleared on request);
- `held_free_rate` (default 0): a finished request's blocks are held while the connector sends its KV (what a
  P/D prefill worker's connector does: `request_finished` answers True) and reported in `finished_sending`
  0..`async_delay_steps` steps later; meanwhile `has_pending_block_frees` says so.
A request finished (aborted) while its asynchronous load is still in flight keeps its blocks until the load is
reported finished: `has_pending_block_frees` says so, and vLLM waits for them instead of preempting.
vLLM's `kv_load_failure_policy` decides: `recompute` must give the same output as a server
  without faults, `fail` must end the request with an error, never with other text.

The server imports it from its working directory (`python -m` puts the directory first on sys.path; specqual
launches servers from the repository root); the decisions are plain functions, tested without vLLM
(tests/unit/canary/test_kvfault.py).
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

PREFIX = "Faulty"
MODULE = "eval.canary.fuzz.kvfault"
EXTRA_KEY = "fault_injection"  # key of kv_connector_extra_config holding the settings below
DEFAULTS: dict[str, Any] = {
    "seed": 0,
    "async_rate": 0.5,
    "invalid_rate": 0.5,
    "async_delay_steps": 2,
    "failed_recv_rate": 0.0,
    "pending_lookup_rate": 0.0,
    "report": False,
    "refuse_reset": False,
    "held_free_rate": 0.0,
}
STAT_KEYS = ("pending_lookups", "async_loads", "failed_recv", "invalid_blocks")
_log = logging.getLogger("vllm.specqual.kvfault")


def settings(extra: dict[str, Any] | None) -> dict[str, Any]:
    """The fault settings of a connector's extra config, defaults filled in; unknown keys are an error."""
    given = dict((extra or {}).get(EXTRA_KEY) or {})
    unknown = sorted(set(given) - set(DEFAULTS))
    if unknown:
        raise ValueError(f"unknown {EXTRA_KEY} settings: {unknown} (known: {sorted(DEFAULTS)})")
    out = {**DEFAULTS, **given}
    for key in ("async_rate", "invalid_rate", "failed_recv_rate", "pending_lookup_rate", "held_free_rate"):
        if not 0.0 <= float(out[key]) <= 1.0:
            raise ValueError(f"{EXTRA_KEY}.{key} must be in [0, 1], got {out[key]!r}")
    if int(out["async_delay_steps"]) < 0:
        raise ValueError(f"{EXTRA_KEY}.async_delay_steps must be >= 0")
    for key in ("report", "refuse_reset"):
        if not isinstance(out[key], bool):
            raise ValueError(f"{EXTRA_KEY}.{key} must be true or false, got {out[key]!r}")
    return out


def draw(seed: int, tokens: Sequence[int], what: str) -> float:
    """A number in [0, 1) from the seed, the prompt and the decision's name (stable across processes and runs)."""
    text = f"{int(seed)}:{what}:" + ",".join(str(int(t)) for t in tokens)
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big") / 2**64


def make_async(cfg: dict[str, Any], tokens: Sequence[int]) -> bool:
    return draw(cfg["seed"], tokens, "async") < float(cfg["async_rate"])


def failed_recv(cfg: dict[str, Any], tokens: Sequence[int]) -> bool:
    """Whether an asynchronous load fails as a whole (reported in failed_recving)."""
    return draw(cfg["seed"], tokens, "failed-recv") < float(cfg["failed_recv_rate"])


def async_delay(cfg: dict[str, Any], tokens: Sequence[int]) -> int:
    """Steps between the load and its report of finished receiving (0: the same step)."""
    steps = int(cfg["async_delay_steps"])
    return int(draw(cfg["seed"], tokens, "delay") * (steps + 1)) if steps else 0


def held_free(cfg: dict[str, Any], tokens: Sequence[int]) -> int | None:
    """Steps a finished request's blocks stay held after it finished (None: freed at once)."""
    if draw(cfg["seed"], tokens, "held") >= float(cfg["held_free_rate"]):
        return None
    return int(draw(cfg["seed"], tokens, "held-n") * (int(cfg["async_delay_steps"]) + 1))


def pending_lookups(cfg: dict[str, Any], tokens: Sequence[int]) -> int:
    """How many of a request's first lookups answer None (the connector cannot tell yet): 0, or 1 to
    `async_delay_steps` + 1."""
    if draw(cfg["seed"], tokens, "pending") >= float(cfg["pending_lookup_rate"]):
        return 0
    return 1 + int(draw(cfg["seed"], tokens, "pending-n") * (int(cfg["async_delay_steps"]) + 1))


def block_hashes(tokens: Sequence[int], block_size: int) -> list[int]:
    """Chained 63-bit hashes of the full blocks of `tokens` (the ids of a BlockStored event)."""
    out: list[int] = []
    parent = b""
    for end in range(block_size, len(tokens) + 1, block_size):
        text = parent + ",".join(str(int(t)) for t in tokens[end - block_size : end]).encode()
        parent = hashlib.sha256(text).digest()
        out.append(int.from_bytes(parent[:8], "big") >> 1)
    return out


def add_stats(a: dict[str, Any], b: dict[str, Any]) -> dict[str, int]:
    """Two stats payloads summed key by key (what aggregating the scheduler's intervals does)."""
    return {k: int(a.get(k, 0)) + int(b.get(k, 0)) for k in sorted(set(a) | set(b))}


def invalid_blocks(cfg: dict[str, Any], tokens: Sequence[int], loaded: Sequence[int]) -> list[int]:
    """The loaded blocks (in load order) to report as failed: none, or one of them and, one time in three, the
    blocks after it too (a transfer that broke off)."""
    if not loaded or draw(cfg["seed"], tokens, "invalid") >= float(cfg["invalid_rate"]):
        return []
    first = int(draw(cfg["seed"], tokens, "invalid-at") * len(loaded))
    if draw(cfg["seed"], tokens, "invalid-tail") < 1 / 3:
        return list(loaded[first:])
    return [loaded[first]]


def load_tokens(tokens: Sequence[int], hit: int) -> list[int]:
    """The prompt prefix whose saved KV an asynchronous load reads: the `hit` tokens the lookup matched, in the form
    ExampleConnector's metadata expects (it keeps the first `(len - 1) // block_size * block_size` tokens, so one
    token more). The whole prompt would read a longer saved prefix than the blocks allocated for the hit whenever
    its length is one past a block boundary (a crash: cov-sched9-1208)."""
    return list(tokens[: hit + 1])


def external_blocks(block_ids: Sequence[int], local_tokens: int, external_tokens: int, block_size: int) -> list[int]:
    """The blocks an external load of `external_tokens` after `local_tokens` cached ones writes into."""
    if external_tokens <= 0:
        return []
    first = local_tokens // block_size
    end = -(-(local_tokens + external_tokens) // block_size)
    return list(block_ids[first:end])


@dataclass
class FaultMeta:
    """Scheduler -> worker, around the wrapped connector's own metadata (pickled with the scheduler output)."""

    inner: Any
    # req_id -> (prompt token ids, the request's block ids, steps until reported finished)
    async_loads: dict[str, tuple[list[int], list[int], int]] = field(default_factory=dict)
    # req_id -> block ids to overwrite and report (synchronous loads: this step; asynchronous: when finished)
    invalid: dict[str, list[int]] = field(default_factory=dict)
    # req_id -> the blocks an asynchronous load that fails as a whole was to write (overwritten with noise)
    failed: dict[str, list[int]] = field(default_factory=dict)
    seed: int = 0
    # req_id -> steps until a finished request whose blocks the connector holds is reported finished sending
    sends: dict[str, int] = field(default_factory=dict)


class _AnyLayer(dict):
    """An attention-metadata dict for a step without a forward pass: every layer maps to None (a non-MLA layer)."""

    def __missing__(self, key: str) -> None:
        return None


class _StepContext:
    """A forward context for loads made outside the step's forward pass (ExampleConnector reads these two)."""

    def __init__(self, layers: dict[str, Any]) -> None:
        self.attn_metadata = _AnyLayer()
        self.no_compile_layers = layers


class FaultMixin:
    """The faults, over any KVConnectorBase_V1 subclass (mixed in before it)."""

    _fault: dict[str, Any]

    def _fault_init(self) -> None:
        cfg = self._kv_transfer_config  # type: ignore[attr-defined]
        self._fault = settings(cfg.kv_connector_extra_config)
        self._fault_local: dict[str, int] = {}  # req_id -> locally cached tokens (scheduler)
        self._fault_tried: set[str] = set()  # requests whose first load had its faults drawn (scheduler)
        self._fault_async: set[str] = set()  # made asynchronous, blocks not allocated yet (scheduler)
        self._fault_pending_async: dict[str, tuple[list[int], list[int], int]] = {}  # to send (scheduler)
        self._fault_pending_invalid: dict[str, list[int]] = {}  # to send (scheduler)
        self._fault_pending_failed: dict[str, list[int]] = {}  # to send (scheduler)
        self._fault_failed_recv: set[str] = set()  # to report this step (worker)
        self._fault_waiting: dict[str, list[Any]] = {}  # req_id -> [steps left, invalid blocks] (worker)
        self._fault_errors: set[int] = set()  # to report this step (worker)
        self._fault_meta: FaultMeta | None = None
        self._fault_layers: dict[str, Any] = {}
        self._fault_counts = {"async": 0, "invalid_requests": 0, "invalid_blocks": 0, "failed_recv": 0}
        self._fault_lookups: dict[str, int] = {}  # req_id -> lookups still to answer None (scheduler)
        self._fault_inflight: set[str] = set()  # asynchronous loads not yet reported finished (scheduler)
        self._fault_orphans: set[str] = set()  # of those, requests already finished: blocks held (scheduler)
        self._fault_stats = dict.fromkeys(STAT_KEYS, 0)  # since the last get_kv_connector_stats (scheduler)
        self._fault_events: list[Any] = []  # KV events to hand over (scheduler)
        self._fault_holding: set[str] = set()  # finished requests whose blocks this connector holds (scheduler)
        self._fault_pending_sends: dict[str, int] = {}  # to send (scheduler)
        self._fault_sending: dict[str, int] = {}  # req_id -> steps left until reported finished sending (worker)
        _log.warning("specqual fault injection on %s: %s", type(self).__name__, self._fault)

    # ---------------------------------------------------------------- scheduler side

    def get_num_new_matched_tokens(self, request: Any, num_computed_tokens: int) -> tuple[int | None, bool]:
        rid = request.request_id
        tokens = list(request.prompt_token_ids or [])
        fresh = rid not in self._fault_tried  # a retry after an injected fault loads cleanly (else: a livelock)
        if fresh and rid not in self._fault_lookups:
            self._fault_lookups[rid] = pending_lookups(self._fault, tokens)
        if fresh and self._fault_lookups.get(rid, 0) > 0:
            self._fault_lookups[rid] -= 1
            self._fault_stats["pending_lookups"] += 1
            return None, False  # not known yet: vLLM skips the request this step and asks again
        n, is_async = super().get_num_new_matched_tokens(request, num_computed_tokens)  # type: ignore[misc]
        self._fault_local[rid] = num_computed_tokens
        if n and n > 0 and fresh and not is_async and self._fault_supports_async() and make_async(self._fault, tokens):
            self._fault_async.add(rid)
            return n, True
        return n, is_async

    def update_state_after_alloc(self, request: Any, blocks: Any, num_external_tokens: int) -> None:
        rid = request.request_id
        tokens = list(request.prompt_token_ids or [])
        made_async = rid in self._fault_async and num_external_tokens > 0
        self._fault_async.discard(rid)
        if num_external_tokens > 0 and rid not in self._fault_tried:
            self._fault_tried.add(rid)
            block_ids = list(blocks.get_block_ids()[0])
            bs = self._vllm_config.cache_config.block_size  # type: ignore[attr-defined]
            loaded = external_blocks(block_ids, self._fault_local.get(rid, 0), num_external_tokens, bs)
            failed = made_async and failed_recv(self._fault, tokens)
            bad = [] if failed else invalid_blocks(self._fault, tokens, loaded)
            if failed:
                self._fault_pending_failed[rid] = loaded
                self._fault_counts["failed_recv"] += 1
                self._fault_stats["failed_recv"] += 1
            if bad:
                self._fault_pending_invalid[rid] = bad
                self._fault_counts["invalid_requests"] += 1
                self._fault_counts["invalid_blocks"] += len(bad)
                self._fault_stats["invalid_blocks"] += len(bad)
            if made_async:
                hit = self._fault_local.get(rid, 0) + num_external_tokens
                self._fault_pending_async[rid] = (load_tokens(tokens, hit), block_ids, async_delay(self._fault, tokens))
                self._fault_counts["async"] += 1
                self._fault_stats["async_loads"] += 1
                self._fault_inflight.add(rid)
                _log.info("specqual kvfault: %s loads asynchronously; invalid blocks %s; fails %s", rid, bad, failed)
                return  # the wrapped connector never hears of it: this class loads it (worker side)
            if bad:
                _log.info("specqual kvfault: %s loads; invalid blocks %s", rid, bad)
        super().update_state_after_alloc(request, blocks, num_external_tokens)  # type: ignore[misc]

    def build_connector_meta(self, scheduler_output: Any) -> Any:
        inner = super().build_connector_meta(scheduler_output)  # type: ignore[misc]
        meta = FaultMeta(inner, dict(self._fault_pending_async), dict(self._fault_pending_invalid))
        meta.seed = int(self._fault["seed"])
        meta.failed = dict(self._fault_pending_failed)
        meta.sends = dict(self._fault_pending_sends)
        self._fault_pending_sends.clear()
        self._fault_pending_async.clear()
        self._fault_pending_invalid.clear()
        self._fault_pending_failed.clear()
        if self._fault["report"]:
            self._fault_events.extend(self._fault_store_events(inner))
        return meta

    def request_finished(self, request: Any, block_ids: Any) -> Any:
        rid = request.request_id
        self._fault_local.pop(rid, None)
        self._fault_tried.discard(rid)
        self._fault_async.discard(rid)
        self._fault_lookups.pop(rid, None)
        loading = rid in self._fault_inflight
        if loading:
            self._fault_orphans.add(rid)  # vLLM keeps its blocks until the load is reported finished
        delay_free, params = super().request_finished(request, block_ids)  # type: ignore[misc]
        # a request still loading is freed when its load ends (vLLM holds it already): never held twice
        held = None if delay_free or loading else held_free(self._fault, list(request.prompt_token_ids or []))
        if held is not None:
            self._fault_holding.add(rid)  # the blocks stay until the worker reports rid finished sending
            self._fault_pending_sends[rid] = held
            return True, params
        return delay_free, params

    def update_connector_output(self, connector_output: Any) -> None:
        for rid in getattr(connector_output, "finished_recving", None) or ():
            self._fault_inflight.discard(rid)
            self._fault_orphans.discard(rid)
        for rid in getattr(connector_output, "finished_sending", None) or ():
            self._fault_holding.discard(rid)
        super().update_connector_output(connector_output)  # type: ignore[misc]

    def has_pending_block_frees(self) -> bool:
        pending = bool(self._fault_orphans) or bool(self._fault_holding)
        return pending or bool(super().has_pending_block_frees())  # type: ignore[misc]

    def get_kv_connector_stats(self) -> Any:
        inner = super().get_kv_connector_stats()  # type: ignore[misc]
        if not self._fault["report"] or not any(self._fault_stats.values()):
            return inner
        stats = stats_class()(data=dict(self._fault_stats))
        self._fault_stats = dict.fromkeys(STAT_KEYS, 0)
        return stats if inner is None else inner.aggregate(stats)

    @classmethod
    def build_kv_connector_stats(cls, data: dict[str, Any] | None = None) -> Any:
        return stats_class()(data=dict(data or {}))

    def take_events(self) -> Any:
        events, self._fault_events = self._fault_events, []
        return [*super().take_events(), *events]  # type: ignore[misc]

    def reset_cache(self) -> bool | None:
        if self._fault["refuse_reset"]:
            _log.info("specqual kvfault: reset_cache refused")
            return False
        return super().reset_cache()  # type: ignore[misc]

    def _fault_store_events(self, inner: Any) -> list[Any]:
        """A BlockStored for each prompt the wrapped connector saves this step (ExampleConnector's metadata lists
        them with is_store)."""
        from vllm.distributed.kv_events import BlockStored

        bs = self._vllm_config.cache_config.block_size  # type: ignore[attr-defined]
        out = []
        for req in getattr(inner, "requests", None) or ():
            if not getattr(req, "is_store", False):
                continue
            tokens = [int(t) for t in req.token_ids.tolist()]
            hashes = block_hashes(tokens, bs)
            if hashes:
                out.append(
                    BlockStored(
                        block_hashes=hashes,
                        parent_block_hash=None,
                        token_ids=tokens[: len(hashes) * bs],
                        block_size=bs,
                        lora_id=None,
                        medium="DISK",
                        lora_name=None,
                    )
                )
        return out

    # ---------------------------------------------------------------- worker side

    def bind_connector_metadata(self, connector_metadata: Any) -> None:
        if isinstance(connector_metadata, FaultMeta):
            self._fault_meta = connector_metadata
            self._fault_sending.update(connector_metadata.sends)
            connector_metadata = connector_metadata.inner
        super().bind_connector_metadata(connector_metadata)  # type: ignore[misc]

    def handle_preemptions(self, kv_connector_metadata: Any) -> None:
        if isinstance(kv_connector_metadata, FaultMeta):
            kv_connector_metadata = kv_connector_metadata.inner
        super().handle_preemptions(kv_connector_metadata)  # type: ignore[misc]

    def clear_connector_metadata(self) -> None:
        self._fault_meta = None
        super().clear_connector_metadata()  # type: ignore[misc]

    def start_load_kv(self, forward_context: Any, **kwargs: Any) -> None:
        super().start_load_kv(forward_context, **kwargs)  # type: ignore[misc]
        meta = self._fault_meta
        if meta is None:
            return
        self._fault_meta = None  # once per step (start_load_kv may run before or after the forward pass)
        layers = getattr(forward_context, "no_compile_layers", None) or {}
        if layers:
            self._fault_layers = layers
        for rid, (tokens, block_ids, delay) in meta.async_loads.items():
            self._fault_load(tokens, block_ids)
            self._fault_waiting[rid] = [delay, meta.invalid.get(rid, []), rid in meta.failed]
            if meta.failed.get(rid):
                self._fault_corrupt(meta.failed[rid], meta.seed)
        for rid, bad in meta.invalid.items():
            self._fault_corrupt(bad, meta.seed)
            if rid not in meta.async_loads:
                self._fault_errors.update(bad)

    def get_finished(self, finished_req_ids: set[str]) -> tuple[set[str] | None, set[str] | None]:
        sending, recving = super().get_finished(finished_req_ids)  # type: ignore[misc]
        sent = set(sending or ())
        for rid, left in list(self._fault_sending.items()):
            if left <= 0:
                sent.add(rid)
                del self._fault_sending[rid]
            else:
                self._fault_sending[rid] = left - 1
        sending = sent or sending
        done = set(recving or ())
        for rid, state in list(self._fault_waiting.items()):
            if state[0] <= 0:
                done.add(rid)
                self._fault_errors.update(state[1])
                if state[2]:
                    self._fault_failed_recv.add(rid)
                del self._fault_waiting[rid]
            else:
                state[0] -= 1
        return sending, (done or recving)

    def get_transfer_results(self, finished_req_ids: set[str]) -> Any:
        results = super().get_transfer_results(finished_req_ids)  # type: ignore[misc]
        if self._fault_failed_recv:
            results.failed_recving.update(self._fault_failed_recv)
            results.finished_recving.update(self._fault_failed_recv)
            self._fault_failed_recv = set()
        return results

    def get_block_ids_with_load_errors(self) -> set[int]:
        out = set(super().get_block_ids_with_load_errors()) | self._fault_errors  # type: ignore[misc]
        self._fault_errors = set()
        return out

    # ---------------------------------------------------------------- per connector

    def _fault_supports_async(self) -> bool:
        return False

    def _fault_load(self, tokens: list[int], block_ids: list[int]) -> None:
        raise NotImplementedError

    def _fault_corrupt(self, block_ids: list[int], seed: int) -> None:
        """Noise into the blocks reported invalid, in every KV layer: a server that keeps using them differs."""
        import torch

        gen = torch.Generator().manual_seed(int(seed) * 1000003 + min(block_ids))
        for layer in self._fault_layers.values():
            kv = getattr(layer, "kv_cache", None)
            if not isinstance(kv, torch.Tensor):
                continue
            for b in block_ids:
                noise = torch.randn(kv[b].shape, generator=gen, dtype=torch.float32)
                kv[b].copy_(noise.to(kv.dtype))


class _ExampleFaults(FaultMixin):
    """ExampleConnector (KV to local disk): asynchronous loads are read from its files by this class."""

    def _fault_supports_async(self) -> bool:
        return True

    def _fault_load(self, tokens: list[int], block_ids: list[int]) -> None:
        from vllm.distributed.kv_transfer.kv_connector.v1.example_connector import ExampleConnectorMetadata

        meta = ExampleConnectorMetadata()
        bs = self._vllm_config.cache_config.block_size  # type: ignore[attr-defined]
        meta.add_request(token_ids=tokens, block_ids=block_ids, block_size=bs, is_store=False, mm_hashes=[])
        saved = self._connector_metadata  # type: ignore[has-type]
        self._connector_metadata = meta
        try:
            super(FaultMixin, self).start_load_kv(_StepContext(self._fault_layers))  # type: ignore[misc]
        finally:
            self._connector_metadata = saved


_CLASSES: dict[str, type] = {}


def stats_class() -> type:
    """KVConnectorStats of the fault counters (built on first use: vLLM is imported only inside the server)."""
    if "stats" in _CLASSES:
        return _CLASSES["stats"]
    from vllm.distributed.kv_transfer.kv_connector.v1.metrics import KVConnectorStats

    class FaultStats(KVConnectorStats):
        def reset(self) -> None:
            self.data = dict.fromkeys(STAT_KEYS, 0)

        def aggregate(self, other: Any) -> Any:
            return FaultStats(data=add_stats(self.data, other.data))

        def reduce(self) -> dict[str, int | float]:
            return {k: int(v) for k, v in self.data.items()}

        def is_empty(self) -> bool:
            return not any(self.data.values())

    _CLASSES["stats"] = FaultStats
    return FaultStats


def connector_class(name: str) -> type:
    """`Faulty<Name>`: the registered vLLM connector `<Name>` with the faults (built once, on first use)."""
    if name in _CLASSES:
        return _CLASSES[name]
    if not name.startswith(PREFIX) or len(name) == len(PREFIX):
        raise AttributeError(name)
    from vllm.distributed.kv_transfer.kv_connector.factory import KVConnectorFactory

    inner_name = name[len(PREFIX) :]
    registry = KVConnectorFactory._registry
    if inner_name not in registry:
        raise AttributeError(f"{name}: no vLLM connector {inner_name!r} to wrap")
    inner = registry[inner_name]()
    mixin = _ExampleFaults if inner_name == "ExampleConnector" else FaultMixin

    def __init__(self: Any, vllm_config: Any, role: Any, kv_cache_config: Any = None) -> None:
        inner.__init__(self, vllm_config, role, kv_cache_config)
        self._fault_init()

    cls = type(name, (mixin, inner), {"__init__": __init__, "__module__": __name__})
    _CLASSES[name] = cls
    return cls


def __getattr__(name: str) -> Any:  # PEP 562: vLLM's getattr(module, "FaultyExampleConnector")
    if name.startswith(PREFIX):
        return connector_class(name)
    raise AttributeError(name)
