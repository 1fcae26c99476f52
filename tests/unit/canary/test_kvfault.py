"""The fault-injecting KV connector's seeded decisions, the KV-connector server configurations and the cohort file
that carries them, and how the oracles read a server that fails requests on purpose (no vLLM here)."""

from __future__ import annotations

from pathlib import Path

import pytest

from eval.canary.fuzz import kvfault
from eval.canary.fuzz.oracles import CrashOracle, ReferenceOracle
from eval.canary.fuzz.space import KV_FAULT_MODULE, KV_SERVER_CONFIGS, kv_faults_of, kv_server_args
from eval.canary.records import ProbeRecord
from eval.spec.load import load_spec

ROOT = Path(__file__).resolve().parents[3]
PROMPTS = [[i, i + 1, 7 * i % 13] for i in range(400)]


def test_settings_fill_defaults_and_refuse_unknown_keys() -> None:
    assert kvfault.settings(None) == kvfault.DEFAULTS
    assert kvfault.settings({"fault_injection": {"seed": 3}})["seed"] == 3
    with pytest.raises(ValueError, match="unknown"):
        kvfault.settings({"fault_injection": {"async": 1}})
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        kvfault.settings({"fault_injection": {"invalid_rate": 2}})


def test_draw_is_seeded_by_seed_prompt_and_decision() -> None:
    a = kvfault.draw(1, [1, 2, 3], "async")
    assert a == kvfault.draw(1, [1, 2, 3], "async") and 0 <= a < 1
    assert len({a, kvfault.draw(2, [1, 2, 3], "async"), kvfault.draw(1, [1, 2, 4], "async")}) == 3
    assert a != kvfault.draw(1, [1, 2, 3], "invalid")


def test_async_decisions_follow_the_rate_and_the_delay_bound() -> None:
    cfg = kvfault.settings({"fault_injection": {"seed": 1, "async_rate": 0.5, "async_delay_steps": 2}})
    share = sum(kvfault.make_async(cfg, p) for p in PROMPTS) / len(PROMPTS)
    assert 0.4 < share < 0.6
    assert {kvfault.async_delay(cfg, p) for p in PROMPTS} == {0, 1, 2}
    never = {**cfg, "async_rate": 0.0, "async_delay_steps": 0}
    assert not any(kvfault.make_async(never, p) for p in PROMPTS)
    assert {kvfault.async_delay(never, p) for p in PROMPTS} == {0}
    assert all(kvfault.make_async({**cfg, "async_rate": 1.0}, p) for p in PROMPTS)


def test_failed_receives_follow_their_rate_off_by_default() -> None:
    cfg = kvfault.settings({"fault_injection": {"seed": 1, "failed_recv_rate": 0.5}})
    share = sum(kvfault.failed_recv(cfg, p) for p in PROMPTS) / len(PROMPTS)
    assert 0.4 < share < 0.6
    assert not any(kvfault.failed_recv(kvfault.settings(None), p) for p in PROMPTS)
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        kvfault.settings({"fault_injection": {"failed_recv_rate": -0.1}})


class _Results:
    def __init__(self, recving: set[str], sending: set[str] | None = None) -> None:
        self.finished_sending: set[str] = set(sending or ())
        self.finished_recving = set(recving)
        self.failed_recving: set[str] = set()


class _Inner:
    def get_finished(self, finished_req_ids: set[str]) -> tuple[set[str] | None, set[str] | None]:
        return None, None

    def get_transfer_results(self, finished_req_ids: set[str]) -> _Results:
        sending, recving = self.get_finished(finished_req_ids)  # type: ignore[attr-defined]
        return _Results(recving or set(), sending)

    def get_block_ids_with_load_errors(self) -> set[int]:
        return set()


class _Faulty(kvfault.FaultMixin, _Inner):
    pass


def test_a_failed_receive_is_reported_failed_and_finished_when_its_delay_is_over() -> None:
    conn = _Faulty()
    conn._fault_waiting = {"a": [1, [], True], "b": [0, [5], False]}
    conn._fault_failed_recv = set()
    conn._fault_errors = set()
    conn._fault_sending = {}
    first = conn.get_transfer_results(set())
    assert first.finished_recving == {"b"} and first.failed_recving == set()
    assert conn.get_block_ids_with_load_errors() == {5}
    second = conn.get_transfer_results(set())
    assert second.finished_recving == {"a"} and second.failed_recving == {"a"}
    assert conn.get_block_ids_with_load_errors() == set()
    assert conn.get_transfer_results(set()).failed_recving == set()


class _Req:
    def __init__(self, rid: str, tokens: list[int]) -> None:
        self.request_id, self.prompt_token_ids = rid, tokens


class _Output:
    def __init__(self, recving: set[str]) -> None:
        self.finished_recving = recving


class _SchedInner:
    """The scheduler-side calls a wrapped connector answers (a hit of 64 tokens, nothing pending, no stats)."""

    def get_num_new_matched_tokens(self, request: object, num_computed_tokens: int) -> tuple[int | None, bool]:
        return 64, False

    def request_finished(self, request: object, block_ids: object) -> tuple[bool, None]:
        return False, None

    def update_connector_output(self, connector_output: object) -> None:
        return None

    def has_pending_block_frees(self) -> bool:
        return False

    def get_kv_connector_stats(self) -> None:
        return None

    def take_events(self) -> tuple[object, ...]:
        return ()

    def reset_cache(self) -> bool | None:
        return None


class _SchedFaulty(kvfault.FaultMixin, _SchedInner):
    def __init__(self, **faults: object) -> None:
        self._kv_transfer_config = type("C", (), {"kv_connector_extra_config": {"fault_injection": faults}})()
        self._fault_init()


class _Stats:
    def __init__(self, data: dict[str, int]) -> None:
        self.data = data


def test_new_settings_are_off_by_default_and_checked() -> None:
    cfg = kvfault.settings(None)
    assert (cfg["pending_lookup_rate"], cfg["report"], cfg["refuse_reset"]) == (0.0, False, False)
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        kvfault.settings({"fault_injection": {"pending_lookup_rate": 1.5}})
    with pytest.raises(ValueError, match="true or false"):
        kvfault.settings({"fault_injection": {"report": 1}})


def test_pending_lookups_follow_their_rate_and_the_delay_bound() -> None:
    cfg = kvfault.settings({"fault_injection": {"seed": 1, "pending_lookup_rate": 0.5, "async_delay_steps": 2}})
    counts = [kvfault.pending_lookups(cfg, p) for p in PROMPTS]
    assert 0.4 < sum(c > 0 for c in counts) / len(counts) < 0.6
    assert set(counts) == {0, 1, 2, 3}
    assert not any(kvfault.pending_lookups(kvfault.settings(None), p) for p in PROMPTS)


def test_a_pending_lookup_answers_none_then_the_wrapped_connector() -> None:
    conn = _SchedFaulty(seed=1, pending_lookup_rate=1.0, async_rate=0.0, async_delay_steps=0)
    req = _Req("a", PROMPTS[0])
    assert conn.get_num_new_matched_tokens(req, 0) == (None, False)
    assert conn.get_num_new_matched_tokens(req, 0) == (64, False)
    assert conn.get_num_new_matched_tokens(req, 0) == (64, False)  # asked once, not again
    assert conn._fault_stats["pending_lookups"] == 1
    conn.request_finished(req, [])
    assert "a" not in conn._fault_lookups


def test_a_request_finished_during_its_asynchronous_load_holds_blocks_until_the_load_ends() -> None:
    conn = _SchedFaulty()
    conn._fault_inflight = {"a", "b"}
    assert not conn.has_pending_block_frees()
    conn.request_finished(_Req("a", [1]), [])
    assert conn.has_pending_block_frees()
    conn.update_connector_output(_Output({"b"}))
    assert conn.has_pending_block_frees()
    conn.update_connector_output(_Output({"a"}))
    assert not conn.has_pending_block_frees() and not conn._fault_inflight


def test_held_frees_follow_their_rate_and_are_reported_sent_after_their_delay() -> None:
    cfg = kvfault.settings({"fault_injection": {"seed": 1, "held_free_rate": 0.5, "async_delay_steps": 2}})
    held = [kvfault.held_free(cfg, p) for p in PROMPTS]
    assert 0.4 < sum(h is not None for h in held) / len(held) < 0.6
    assert {h for h in held if h is not None} == {0, 1, 2}
    assert all(kvfault.held_free(kvfault.settings(None), p) is None for p in PROMPTS)
    sched = _SchedFaulty(seed=1, held_free_rate=1.0, async_delay_steps=0)
    assert sched.request_finished(_Req("a", [1, 2]), []) == (True, None)
    assert sched.has_pending_block_frees() and sched._fault_pending_sends == {"a": 0}
    sched._fault_inflight.add("b")  # still loading: vLLM frees it when the load ends, never held twice
    assert sched.request_finished(_Req("b", [1, 2]), []) == (False, None)
    sched.update_connector_output(type("O", (), {"finished_recving": {"b"}, "finished_sending": {"a"}})())
    assert not sched.has_pending_block_frees()
    worker = _Faulty()
    worker._fault_waiting, worker._fault_failed_recv, worker._fault_errors = {}, set(), set()
    worker._fault_sending = {"a": 1, "c": 0}
    assert worker.get_transfer_results(set()).finished_sending == {"c"}
    assert worker.get_transfer_results(set()).finished_sending == {"a"}
    assert worker.get_transfer_results(set()).finished_sending == set()


def test_stats_events_and_resets_only_when_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(kvfault._CLASSES, "stats", _Stats)
    quiet, loud = _SchedFaulty(), _SchedFaulty(report=True, refuse_reset=True)
    for conn in (quiet, loud):
        conn._fault_stats["async_loads"] = 2
        conn._fault_events.append("event")
    assert quiet.get_kv_connector_stats() is None and quiet.reset_cache() is None
    stats = loud.get_kv_connector_stats()
    assert stats.data == {"pending_lookups": 0, "async_loads": 2, "failed_recv": 0, "invalid_blocks": 0}
    assert loud.get_kv_connector_stats() is None  # the interval's counters were handed over
    assert loud.take_events() == ["event"] and loud.take_events() == []
    assert loud.reset_cache() is False
    assert kvfault.add_stats({"a": 1, "b": 2}, {"b": 3, "c": 1}) == {"a": 1, "b": 5, "c": 1}


def test_block_hashes_chain_the_full_blocks() -> None:
    a = kvfault.block_hashes(list(range(10)), 4)
    assert len(a) == 2 and len(set(a)) == 2 and all(0 <= h < 2**63 for h in a)
    assert kvfault.block_hashes(list(range(8)), 4) == a
    assert kvfault.block_hashes([9, *range(1, 10)], 4)[1] != a[1]  # a block's hash depends on its parents
    assert kvfault.block_hashes([1, 2, 3], 4) == []


def test_invalid_blocks_are_loaded_blocks_one_or_a_broken_off_tail() -> None:
    cfg = kvfault.settings({"fault_injection": {"seed": 1, "invalid_rate": 0.5}})
    loaded = [11, 12, 13, 14]
    picks = [kvfault.invalid_blocks(cfg, p, loaded) for p in PROMPTS]
    hit = [b for b in picks if b]
    assert 0.4 < len(hit) / len(picks) < 0.6
    for bad in hit:
        first = loaded.index(bad[0])
        assert bad == [loaded[first]] or bad == loaded[first:]
    assert any(len(b) > 1 for b in hit) and any(len(b) == 1 for b in hit)
    assert picks == [kvfault.invalid_blocks(cfg, p, loaded) for p in PROMPTS]  # the same case, the same faults
    assert kvfault.invalid_blocks({**cfg, "invalid_rate": 0.0}, PROMPTS[0], loaded) == []
    assert kvfault.invalid_blocks({**cfg, "invalid_rate": 1.0}, PROMPTS[0], []) == []


def test_external_blocks_are_those_after_the_local_hit() -> None:
    blocks = [5, 6, 7, 8]
    assert kvfault.external_blocks(blocks, 64, 64, 64) == [6]
    assert kvfault.external_blocks(blocks, 0, 130, 64) == [5, 6, 7]
    assert kvfault.external_blocks(blocks, 64, 0, 64) == []


def test_connector_classes_need_the_prefix() -> None:
    with pytest.raises(AttributeError):
        kvfault.connector_class("ExampleConnector")
    with pytest.raises(AttributeError):
        getattr(kvfault, "SomethingElse")  # noqa: B009


def test_server_configs_put_the_user_ones_first() -> None:
    users = [c.user for c in KV_SERVER_CONFIGS]
    assert users[0] and users == sorted(users, reverse=True) and not users[-1]
    plain = kv_server_args(KV_SERVER_CONFIGS[0], "off")
    assert plain == {
        "kv_transfer_config": {
            "kv_connector": "ExampleConnector",
            "kv_role": "kv_both",
            "kv_connector_extra_config": {"shared_storage_path": "/tmp/specqual-kv/kv-off"},
        },
        "enable_chunked_prefill": False,
        "max_num_batched_tokens": 2048,
    }
    assert kv_faults_of(plain) is None
    for c in KV_SERVER_CONFIGS:
        args = kv_server_args(c, "self4")
        faults = kv_faults_of(args)
        assert (faults is not None) == c.faults
        if faults is not None:
            assert args["kv_transfer_config"]["kv_connector_module_path"] == KV_FAULT_MODULE
            assert faults["policy"] == c.policy and faults["connector"] == "Faulty" + c.connector
            kvfault.settings(args["kv_transfer_config"]["kv_connector_extra_config"])  # valid settings


def test_cohort_file_carries_the_space_configs() -> None:
    loaded = load_spec([str(ROOT / "cohorts/kv-connector-cpu.yaml")])
    by_name = {c.name: c for c in KV_SERVER_CONFIGS}
    base = dict(loaded.spec.server.args)  # every cohort's server_args are the file's, then the entry's
    seen = set()
    for cohort in loaded.cohorts:
        if cohort.name == "stock-off":
            assert cohort.server_args == base
            continue
        config, spec = cohort.name.rsplit("-", 1)
        assert cohort.server_args == {**base, **kv_server_args(by_name[config], spec)}, cohort.name
        seen.add(config)
    assert seen == set(by_name)


def _rec(finish: str, out: list[int], policy: str | None) -> ProbeRecord:
    r = ProbeRecord(
        probe_id="fuzz-000-r0", cohort="c", mode="fuzz", index=0, role="r0", output_token_ids=out,
        output_text="", finish_reason=finish, params={"max_tokens": 4},
    )  # fmt: skip
    if policy:
        r.extra["kv_faults"] = {"connector": "FaultyExampleConnector", "policy": policy}
    return r


def test_an_error_under_policy_fail_is_a_fact_and_its_tokens_still_count() -> None:
    ref = _rec("length", [1, 2, 3, 4], None)
    ref.cohort = "ref"
    fact = CrashOracle().judge(None, _rec("error", [], "fail"), ref)
    assert fact is not None and fact.verdict == "fact"
    crash = CrashOracle().judge(None, _rec("error", [], "recompute"), ref)
    assert crash is not None and crash.verdict == "fail"
    assert ReferenceOracle().judge(None, _rec("error", [], "fail"), ref) is None
    same = ReferenceOracle().judge(None, _rec("error", [1, 2], "fail"), ref)
    assert same is not None and same.verdict == "pass"
    wrong = ReferenceOracle().judge(None, _rec("error", [1, 9], "fail"), ref)
    assert wrong is not None and wrong.verdict == "fail"


def test_an_asynchronous_load_reads_the_matched_prefix_only() -> None:
    # ExampleConnector keeps (len - 1) // 64 * 64 tokens of the list it is given: one token past the hit
    prompt = list(range(129))
    for hit in (64, 128):
        got = kvfault.load_tokens(prompt, hit)
        assert (len(got) - 1) // 64 * 64 == hit and got == prompt[: hit + 1]
