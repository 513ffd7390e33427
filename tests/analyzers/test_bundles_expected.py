"""Every fixture bundle gives exactly its expected findings, root cause first."""

import pytest

from analyzers.engine import analyze_paths
from tests.helpers import SEED_BUNDLES, bundle_cases, bundle_copy, bundle_file, case_id, expected, runbook_specs

CASES = bundle_cases()


@pytest.mark.parametrize("case", CASES, ids=[case_id(c) for c in CASES])
def test_it_finds_the_expected_root_causes(case, tmp_path):
    want = expected(case)
    result = analyze_paths([str(bundle_copy(case, tmp_path))], runbook_specs())
    found = [f["runbook"] for f in result["findings"]]
    allowed = set(want["expected"]) | set(want.get("acceptable", []))
    assert set(want["expected"]) <= set(found), f"missing {set(want['expected']) - set(found)}; got {found}"
    assert set(found) <= allowed, f"unexpected findings {set(found) - allowed}"
    if want["expected"]:
        assert found[0] == want["expected"][0], f"root cause should rank first: {found}"
    for f in result["findings"]:
        assert 0 <= f["confidence"] <= 1 and f["evidence"] and f["explanation"]
        for ev in f["evidence"]:
            file, section = bundle_file(case, ev["path"])
            text = file.read_text(encoding="utf-8", errors="replace")
            # A section's line numbers count within the section; its text is in the stream.
            assert ev["text"] in (text if section else text.splitlines()[ev["line"] - 1])


def test_seed_004_lists_candidates_for_the_heartbeat_symptom_and_claims_none():
    result = analyze_paths([str(SEED_BUNDLES / "004-flink-tm-heartbeat-timeout-buckets")], runbook_specs())
    assert result["findings"] == []
    (hb,) = [s for s in result["symptoms"] if s["id"] == "flink-tm-heartbeat-timeout"]
    assert {"flink-filesink-too-many-buckets", "jvm-long-gc-pause", "kernel-soft-lockup-stalls-jvm"} <= set(hb["candidate_runbooks"])


def test_seed_000_chain_runs_from_the_soft_lockup_to_the_interrupted_close():
    result = analyze_paths([str(SEED_BUNDLES / "000-flink-hdfs-openforwrite-after-soft-lockup")], runbook_specs())
    hosts = {ev["host"] for f in result["findings"] for ev in f["evidence"]}
    assert {"hadoop-080-037", "hadoop-081-159"} <= hosts
    lockup = next(f for f in result["findings"] if f["runbook"] == "kernel-soft-lockup-stalls-jvm")
    assert any("soft lockup" in ev["text"] for ev in lockup["evidence"])
    times = [t["timestamp"] for t in result["timeline"] if t["timestamp"]]
    assert times == sorted(times)
