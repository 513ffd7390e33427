"""Ranking: among linked findings the root cause comes first, whatever the confidences.

The rules on small runbooks written here (analyzers/ranking.py), then every
fixture and seed bundle of the real catalog that gives two linked findings.
"""

import pytest

from analyzers.diagnose import diagnose
from analyzers.engine import analyze_paths
from tests.analyzers.test_diagnose import hit, rb, sym
from tests.helpers import CASES, SEED_BUNDLES, bundle_copy, runbook_specs


def _catalog(link):
    """'pause' (weaker) can lead to 'expiry' (stronger) through `link`."""
    return [
        rb("pause", [sym("gc-pause", "required", 0.55)], leads_to=[link]),
        rb("expiry", [sym("session-expired", "required", 0.9)]),
    ]


def _both(host_b="h1", ts_b="2019-04-23T17:40:00.000"):
    return {"gc-pause": [hit("gc-pause", host="h1")],
            "session-expired": [hit("session-expired", host=host_b, ts=ts_b)]}


def test_a_cause_ranks_above_its_consequence_and_explains_it():
    link = {"slug": "expiry", "as": "cause", "why": "the pause outlasted the session", "hosts": "same", "within": "5m"}
    pause, expiry = diagnose(_both(), _catalog(link), {}, {})
    assert (pause["runbook"], expiry["runbook"]) == ("pause", "expiry")
    assert pause["confidence"] < expiry["confidence"]
    assert expiry["explained_by"] == "pause" and pause["explained_by"] is None
    assert expiry["rank_reason"] == "consequence of pause: the pause outlasted the session"
    assert pause["rank_reason"] == "root cause of expiry: the pause outlasted the session"


def test_a_trigger_ranks_below_the_defect_it_set_off_and_explains_nothing():
    link = {"slug": "expiry", "as": "trigger", "why": "the pause only set it off"}
    catalog = [rb("pause", [sym("gc-pause", "required", 0.95)], leads_to=[link]),
               rb("expiry", [sym("session-expired", "required", 0.6)])]
    expiry, pause = diagnose(_both(), catalog, {}, {})
    assert (expiry["runbook"], pause["runbook"]) == ("expiry", "pause")
    assert expiry["explained_by"] is None and pause["explained_by"] is None
    assert pause["rank_reason"].startswith("trigger of expiry")
    assert expiry["rank_reason"].startswith("root cause; pause only triggered it")


@pytest.mark.parametrize("host_b,ts_b", [
    ("h2", "2019-04-23T17:40:00.000"),   # the link wants the same host
    ("h1", "2019-04-23T18:40:00.000"),   # an hour apart: another incident
    ("h1", None),                        # no time to check the window against
])
def test_findings_the_evidence_does_not_connect_keep_the_confidence_order(host_b, ts_b):
    link = {"slug": "expiry", "as": "cause", "why": "w", "hosts": "same", "within": "5m"}
    expiry, pause = diagnose(_both(host_b, ts_b), _catalog(link), {}, {})
    assert (expiry["runbook"], pause["runbook"]) == ("expiry", "pause")
    assert expiry["explained_by"] is None
    assert expiry["rank_reason"] == "confidence 0.90; no runbook link ties it to another finding"


def _findings(bundle, tmp_path):
    result = analyze_paths([str(bundle_copy(bundle, tmp_path))], runbook_specs())
    return [(f["runbook"], f["explained_by"]) for f in result["findings"]]


def test_seed_000_ranks_the_interrupted_close_above_the_soft_lockup_that_triggered_it(tmp_path):
    # The write-up: the lockup is the trigger (起因), the failed close the main
    # cause (主要原因) of the data loss, and the fix is on the HDFS client side.
    found = _findings(SEED_BUNDLES / "000-flink-hdfs-openforwrite-after-soft-lockup", tmp_path)
    assert found == [("hdfs-openforwrite-after-interrupted-close", None), ("kernel-soft-lockup-stalls-jvm", None)]


def test_too_many_buckets_explain_the_long_gc_pauses_they_cause(tmp_path):
    found = _findings(CASES / "flink-filesink-too-many-buckets" / "positive", tmp_path)
    assert found == [("flink-filesink-too-many-buckets", None),
                     ("jvm-long-gc-pause", "flink-filesink-too-many-buckets")]


@pytest.mark.parametrize("case", ["positive-wrapped-youaredead"])
def test_a_gc_pause_ranks_above_the_session_expiry_it_explains_even_when_less_confident(case, tmp_path):
    result = analyze_paths([str(bundle_copy(CASES / "hbase-regionserver-session-expired" / case, tmp_path))],
                           runbook_specs())
    pause, expiry = result["findings"]
    assert (pause["runbook"], expiry["runbook"]) == ("jvm-long-gc-pause", "hbase-regionserver-session-expired")
    assert pause["confidence"] <= expiry["confidence"]
    assert expiry["explained_by"] == "jvm-long-gc-pause"
    assert expiry["rank_reason"].startswith("consequence of jvm-long-gc-pause")


@pytest.mark.parametrize("cause_case,consequence_case", [
    ("jvm-long-gc-pause/positive", "flink-checkpoint-expired/positive"),  # linked within 10m
    ("hdfs-datanode-clusterid-mismatch/positive", "hdfs-no-live-datanodes/positive"),  # linked within 24h
])
def test_two_unrelated_incidents_in_one_bundle_are_not_chained(cause_case, consequence_case, tmp_path):
    # A positive fixture of each runbook: real lines from different clusters and years.
    a = bundle_copy(CASES / cause_case, tmp_path / "a")
    b = bundle_copy(CASES / consequence_case, tmp_path / "b")
    cause, consequence = cause_case.split("/")[0], consequence_case.split("/")[0]
    result = analyze_paths([str(a), str(b)], runbook_specs())
    by = {f["runbook"]: f for f in result["findings"]}
    assert {cause, consequence} <= set(by)
    assert by[consequence]["explained_by"] is None
    assert by[consequence]["rank_reason"].startswith("confidence ")
