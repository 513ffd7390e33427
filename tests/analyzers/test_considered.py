"""ruled_out and candidates: runbooks the evidence touched, why they are no
finding, and what would decide them (analyzers/considered.py)."""

from __future__ import annotations

import pytest

from analyzers.considered import considered
from analyzers.diagnose import diagnose
from analyzers.engine import analyze_paths
from tests.analyzers.test_diagnose import hit, rb, sym
from tests.helpers import CASES, SEED_BUNDLES, bundle_cases, bundle_copy, case_id, runbook_metas, runbook_specs


def _analyze(bundle, tmp_path):
    return analyze_paths([str(bundle_copy(bundle, tmp_path))], runbook_specs())


def test_seed_004_ranks_candidates_with_what_is_missing_how_to_tell_and_where_to_look(tmp_path):
    result = _analyze(SEED_BUNDLES / "004-flink-tm-heartbeat-timeout-buckets", tmp_path)
    assert result["findings"] == []
    cands = {c["runbook"]: c for c in result["candidates"]}
    assert list(cands)[:3] == ["flink-filesink-too-many-buckets", "jvm-long-gc-pause", "kernel-soft-lockup-stalls-jvm"]
    buckets = cands["flink-filesink-too-many-buckets"]
    assert buckets["found"] == ["flink-tm-heartbeat-timeout"]
    assert buckets["missing"] == [{"symptom": "flink-filesink-bucket-objects-in-heap",
                                   "title": "Heap histogram shows many Flink file-sink Bucket objects"}]
    assert buckets["next_step"].startswith("Look for 'Heap histogram shows many Flink file-sink Bucket objects'")
    assert "to tell it from jvm-long-gc-pause" in buckets["next_step"]
    assert "jmap -histo:live" in buckets["where"]   # the missing symptom's look_in
    gc = cands["jvm-long-gc-pause"]
    assert [m["symptom"] for m in gc["missing"]] == ["jvm-pause-gc-collections", "gc-log-long-pause"]  # alternatives
    assert "GC log" in gc["where"] and "Detected pause" in gc["where"]
    assert cands["kernel-soft-lockup-stalls-jvm"]["where"].startswith("the host's kernel log")
    ruled = {r["runbook"]: r for r in result["ruled_out"]}
    assert ruled["kernel-soft-lockup-stalls-jvm"] == {
        "runbook": "kernel-soft-lockup-stalls-jvm", "title": "Kernel soft lockups stall every JVM on the host",
        "kind": "missing-required", "symptoms": ["flink-tm-heartbeat-timeout"],
        "reason": "required kernel-soft-lockup (Kernel soft lockup (a CPU stuck in kernel mode)) not seen"}


def test_a_runbook_vetoed_by_an_excluding_symptom_is_ruled_out_as_excluded_and_is_no_candidate(tmp_path):
    result = _analyze(CASES / "kernel-soft-lockup-stalls-jvm" / "positive", tmp_path)
    (zk,) = [r for r in result["ruled_out"] if r["runbook"] == "flink-zk-suspended-lost-leadership"]
    assert zk["kind"] == "excluded"
    assert zk["reason"].startswith("excluded by kernel-soft-lockup (Kernel soft lockup")
    assert "kernel-soft-lockup" in zk["symptoms"]
    assert result["candidates"] == []  # there is a finding


def test_a_required_symptom_seen_only_outside_its_condition_is_named_with_the_condition(tmp_path):
    result = _analyze(CASES / "jvm-long-gc-pause" / "near-miss", tmp_path)
    (gc,) = [r for r in result["ruled_out"] if r["runbook"] == "jvm-long-gc-pause"]
    assert gc["kind"] == "condition"
    assert gc["reason"] == "required jvm-pause-gc-collections seen 2x but never with gc_ms >= 5000"


SHARED = [
    rb("a", [sym("shared", "required", 0.3), sym("a-only", "supporting", 0.1)]),
    rb("b", [sym("shared", "required", 0.3), sym("b-line", "required", 0.5)],
       relations=[{"first": "shared", "then": "b-line", "within": "1m", "role": "required"}]),
]


def test_shared_evidence_alone_and_a_failed_required_relation_are_conditions():
    occ = {"shared": [hit("shared")], "a-only": [hit("a-only")],
           "b-line": [hit("b-line", ts="2019-04-23T18:39:19.000")]}  # an hour after: the relation fails
    assert diagnose(occ, SHARED, {}, {}) == []
    ruled_out, candidates = considered(occ, SHARED, [])
    by = {r["runbook"]: r for r in ruled_out}
    assert by["a"]["kind"] == "condition" and by["a"]["reason"].startswith(
        "only shared evidence: shared is also required by b")
    assert by["b"]["kind"] == "condition" and by["b"]["reason"] == (
        "required relation shared -> b-line did not hold (within 1m, hosts any)")
    assert [(c["runbook"], c["score"], c["missing"]) for c in candidates] == [("b", 0.8, []), ("a", 0.4, [])]


def test_a_runbook_none_of_whose_symptoms_was_seen_is_not_considered():
    ruled_out, candidates = considered({"unrelated": [hit("unrelated")]}, SHARED, [])
    assert ruled_out == [] and candidates == []


CASE_LIST = bundle_cases()


@pytest.mark.parametrize("case", CASE_LIST, ids=[case_id(c) for c in CASE_LIST])
def test_every_considered_runbook_is_a_finding_or_ruled_out_never_both(case, tmp_path):
    result = _analyze(case, tmp_path)
    found = {f["runbook"] for f in result["findings"]}
    ruled = [r["runbook"] for r in result["ruled_out"]]
    seen = {s["id"] for s in result["symptoms"]}
    touched = {r["slug"] for r in runbook_metas()
               if any(s["id"] in seen and s["role"] != "excluding" for s in r["symptoms"])}
    assert len(ruled) == len(set(ruled)) and not found & set(ruled)
    assert found | set(ruled) == touched
    if found:
        assert result["candidates"] == []
    excluded = {r["runbook"] for r in result["ruled_out"] if r["kind"] == "excluded"}
    assert {c["runbook"] for c in result["candidates"]} <= set(ruled) - excluded
