"""The pure parts of the incident page (issue 15): evidence records
(kb.lib.evidence), candidate causes without a verdict for a result stored
before the engine ranked them (kb.lib.candidates, over analyzers.considered) and
the timeline at scale (kb.lib.timeline), fed the real results of the seed
bundles analyzed by the local engine over the shipped runbooks."""

from __future__ import annotations

import doctest
import re
from datetime import datetime, timedelta
from functools import lru_cache

import pytest

import kb.lib.evidence
import kb.lib.timeline
from analyzers.engine import analyze_paths
from kb.lib.candidates import derive_candidates
from kb.lib.evidence import records, short_path, symptom_weights
from kb.lib.timeline import DENSE_BUCKET_PX, DENSE_FAN_MAX, timeline_build
from kb.lib.timeline_labels import short_name
from tests.helpers import SEED_BUNDLES, bundle_copy, catalog, runbook_specs

SEED_000 = SEED_BUNDLES / "000-flink-hdfs-openforwrite-after-soft-lockup"
SEED_004 = SEED_BUNDLES / "004-flink-tm-heartbeat-timeout-buckets"


@lru_cache(maxsize=None)
def _result(seed, tmp):
    return analyze_paths([str(bundle_copy(seed, tmp))], runbook_specs())


@pytest.fixture(scope="module")
def seed_000(tmp_path_factory):
    return _result(SEED_000, tmp_path_factory.mktemp("s000"))


def test_it_passes_its_doctests():
    assert doctest.testmod(kb.lib.evidence).failed == 0


def test_a_trace_is_one_record_with_its_deepest_caused_by(seed_000):
    finding = seed_000["findings"][0]
    recs = records(finding["evidence"], symptom_weights(finding))

    by_first = {r["line"]: r for r in recs}
    assert [e["line"] for e in by_first[2]["lines"]] == [2, 21]
    assert by_first[2]["caused_by"]["text"].startswith("Caused by: java.lang.Exception: Job leader")
    assert [e["line"] for e in by_first[48]["lines"]] == [48, 55, 56]   # the close and its BucketingSink frames
    assert by_first[48]["caused_by"] is None
    assert sum(len(r["lines"]) for r in recs) == len(finding["evidence"])
    # the decisive (required) symptom's record first, one record per symptom before any repeat
    assert recs[0]["line"] == 48
    firsts = [r["symptoms"][0] for r in recs[:3]]
    assert len(set(firsts)) == 3
    assert recs[0]["short_path"] == "flink-taskmanager.log"


def test_the_path_is_shown_relative_to_its_host():
    assert short_path("hadoop-081-159/flink-taskmanager.log", "hadoop-081-159") == "flink-taskmanager.log"
    assert short_path("flink-taskmanager/taskmanager.log", None) == "flink-taskmanager/taskmanager.log"
    assert short_path("pods.log/flink-tm-1/taskmanager/taskmanager.log", "flink-tm-1") == "taskmanager/taskmanager.log"
    assert short_path("dn1.log", "dn1") == "dn1.log"


def _stored_before_candidates(result: dict) -> dict:
    """`result` as stored before the engine wrote `candidates` and `ruled_out`."""
    return {k: v for k, v in result.items() if k not in ("candidates", "ruled_out")}


def test_seed_004_ranks_three_candidates_with_what_confirms_them(tmp_path):
    result = _result(SEED_004, tmp_path)
    metas = {slug: rb.meta for slug, rb in catalog().runbooks.items()}
    titles = {sid: d.get("title", sid) for sid, d in catalog().symptoms.items()}

    candidates = derive_candidates(_stored_before_candidates(result), metas)

    assert [c["runbook"] for c in candidates] == [
        "flink-filesink-too-many-buckets", "jvm-long-gc-pause", "kernel-soft-lockup-stalls-jvm"]
    assert [c["score"] for c in candidates] == [0.1, 0.1, 0.05]
    buckets, gc, lockup = candidates
    assert buckets["missing"] == [{"symptom": "flink-filesink-bucket-objects-in-heap",
                                   "title": titles["flink-filesink-bucket-objects-in-heap"]}]
    assert "jmap -histo:live" in buckets["where"]
    # a group of alternatives: either one confirms it
    assert {m["symptom"] for m in gc["missing"]} == {"jvm-pause-gc-collections", "gc-log-long-pause"}
    assert " or " in gc["next_step"]
    assert lockup["where"].startswith("the host's kernel log: dmesg -T")
    # the runbooks' differential tells the rivals apart
    assert "to tell it from jvm-long-gc-pause" in buckets["next_step"]
    # one ranker: an old stored result gets what the engine gives a new one
    assert candidates == result["candidates"]


def test_findings_leave_no_candidates_of_their_own(seed_000):
    metas = {slug: rb.meta for slug, rb in catalog().runbooks.items()}
    stored = _stored_before_candidates(seed_000)
    # as the engine: candidates only when there is no finding
    assert stored["findings"] and derive_candidates(stored, metas) == seed_000["candidates"] == []


def _crowd(seed_000, hosts: int, events: int) -> list[dict]:
    """`events` timeline items over `hosts` hosts in ten minutes, each a real line of seed 000."""
    real = seed_000["timeline"]
    start = datetime(2019, 4, 23, 17, 30)
    return [{**real[n % len(real)], "host": f"worker-{n % hosts:02d}", "line": n + 1,
             "timestamp": (start + timedelta(milliseconds=60 * n)).isoformat(timespec="milliseconds")}
            for n in range(events)]


def test_ten_thousand_events_on_thirty_hosts_become_bins_per_host(seed_000):
    tl = timeline_build(_crowd(seed_000, 30, 10_000), colours={"hdfs-openforwrite-after-interrupted-close": "#0072b2"})

    assert len(tl["lanes"]) == 30
    assert tl["bins"] and sum(b["count"] for b in tl["bins"]) + len(tl["marks"]) == 10_000
    assert len(tl["bins"]) + len(tl["marks"]) <= 30 * (tl["plot_x1"] - tl["plot_x0"]) / DENSE_BUCKET_PX + 30
    assert all(b["count"] > DENSE_FAN_MAX and b["start"] < b["end"] for b in tl["bins"])
    # what is left as single marks is at most a fan of three per bucket
    assert len(tl["marks"]) <= 30 * ((tl["plot_x1"] - tl["plot_x0"]) / DENSE_BUCKET_PX + 1) * DENSE_FAN_MAX


def test_clusters_of_marks_carry_their_symptoms_short_names_without_overlap(seed_000):
    titles = {s["id"]: s["title"] for s in seed_000["symptoms"]}
    tl = timeline_build(seed_000["timeline"], colours={}, symptom_titles=titles)

    labelled = [m for m in tl["marks"] if m["label"]]
    assert len(labelled) >= 2                           # one per host lane at least
    for m in labelled:
        cluster = {o["short"] for o in tl["marks"] if (o["lane"], o["bucket"]) == (m["lane"], m["bucket"])}
        names = re.sub(r" \+\d+$", "", m["label"]).split(", ")
        assert set(names) <= cluster, (names, cluster)
    assert any(m["label"].startswith("Kernel soft lockup") for m in labelled)
    for lane in {m["lane"] for m in labelled}:
        spans = sorted((m["label_start"], m["label_start"] + 5.6 * len(m["label"])) for m in labelled if m["lane"] == lane)
        assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:]))
        assert all(tl["plot_x0"] <= start and end <= tl["width"] for start, end in spans)


def test_a_timeline_drawn_wholly_as_bins_still_names_its_symptoms(seed_000):
    """Ten thousand events on three hosts: every stretch of every lane is a bin (but
    for a few events in a bucket cut by the plot's edge), and each lane still says
    which symptoms its bins hold."""
    titles = {s["id"]: s["title"] for s in seed_000["symptoms"]}
    items = _crowd(seed_000, 3, 10_000)
    tl = timeline_build(items, colours={}, symptom_titles=titles)

    assert len(tl["lanes"]) == 3 and len(tl["marks"]) <= 3 * 2 * DENSE_FAN_MAX
    assert sum(b["count"] for b in tl["bins"]) >= 10_000 - len(tl["marks"])
    labelled = [b for b in tl["bins"] if b["label"]]
    assert {b["lane"] for b in labelled} == {0, 1, 2}
    for lane in range(3):
        host = tl["lanes"][lane]["host"]
        held = {short_name(titles[i["symptom"]]) for i in items if i["host"] == host}
        for b in (b for b in labelled if b["lane"] == lane):
            names = re.sub(r" \+\d+$", "", b["label"]).split(", ")
            assert set(names) <= held and names == b["shorts"][:2], (names, b["shorts"])
            assert b["label_y"] <= b["y"] - 8                        # above the bin, not over its count
        spans = sorted((b["label_start"], b["label_start"] + 5.6 * len(b["label"])) for b in labelled if b["lane"] == lane)
        assert all(a[1] <= c[0] for a, c in zip(spans, spans[1:]))
        assert all(tl["plot_x0"] <= start and end <= tl["width"] for start, end in spans)
    # a run of neighbouring bins with the same symptoms is labelled once, not bin by bin
    assert len(labelled) < len(tl["bins"]) and all(b["label_run"] >= 1 for b in labelled)


def test_zoom_keeps_only_the_range_and_offers_narrower_ones(seed_000):
    items = _crowd(seed_000, 3, 600)
    zoom = {"start": datetime(2019, 4, 23, 17, 30, 10), "end": datetime(2019, 4, 23, 17, 30, 20)}

    tl = timeline_build(items, colours={}, zoom=zoom)

    assert tl["zoomed"] and tl["count"] == sum(1 for i in items if "17:30:10" <= i["timestamp"][11:19] < "17:30:20"
                                              ) + sum(1 for i in items if i["timestamp"][11:23] == "17:30:20.000")
    assert tl["start"] == zoom["start"] and tl["end"] == zoom["end"]
    assert tl["spans"] and all(zoom["start"].isoformat() <= s["start"] < s["end"] for s in tl["spans"])
    assert timeline_build(items, colours={})["full_start"] == tl["full_start"]


def test_a_line_two_symptoms_match_is_one_record_naming_both(tmp_path):
    result = _result(SEED_BUNDLES / "003-hbase-rs-abort-pipeline-recovery", tmp_path)
    finding = result["findings"][0]
    recs = records(finding["evidence"], symptom_weights(finding))

    at = [(r["path"], r["line"]) for r in recs]
    assert len(at) == len(set(at))
    need = next(r for r in recs if r["path"] == "dn-src/hadoop-hdfs-datanode.log" and r["line"] == 2)
    assert set(need["symptoms"]) == {"hdfs-pipeline-datanode-replacement-failed", "hdfs-transfer-source-short-replica"}
    assert sum(len(r["lines"]) + len(r["also"]) for r in recs) == len(finding["evidence"])
