"""Differential diagnosis rules, on small runbooks written here (the real catalog is tested elsewhere)."""

from analyzers.considered import considered
from analyzers.diagnose import diagnose, symptom_summary
from analyzers.model import Hit
from analyzers.runbook_spec import runbook_spec


def hit(sid, ts="2019-04-23T17:39:19.000", host="h1", line=1, **caps):
    return Hit(symptom=sid, path=f"{host}/x.log", line=line, text=f"{sid} line", captures=caps,
               timestamp=ts, level="WARN", host=host, component="x")


def rb(slug, symptoms, **extra):
    return runbook_spec({"slug": slug, "title": slug, "symptoms": symptoms, "fixes": [], **extra})


def sym(sid, role, weight=0.5, **extra):
    return {"id": sid, "title": sid, "role": role, "weight": weight, **extra}


HEARTBEAT = "flink-tm-heartbeat-timeout"
CATALOG = [
    rb("buckets", [sym("bucket-histogram", "required", 0.6), sym(HEARTBEAT, "supporting", 0.1)]),
    rb("gc", [sym("gc-pause", "required", 0.5, where=[{"capture": "pause_ms", "op": ">=", "value": 10000}]),
              sym(HEARTBEAT, "supporting", 0.1), sym("no-gcs", "excluding")]),
    rb("lockup", [sym("soft-lockup", "required", 0.55), sym(HEARTBEAT, "supporting", 0.1)],
       relations=[{"first": "soft-lockup", "then": HEARTBEAT, "within": "5m", "hosts": "same", "weight": 0.15}]),
]


def test_it_gives_no_finding_for_a_shared_symptom_alone():
    occ = {HEARTBEAT: [hit(HEARTBEAT)]}
    assert diagnose(occ, CATALOG, {}, {}) == []
    (s,) = symptom_summary(occ, CATALOG, {})
    assert s["candidate_runbooks"] == ["buckets", "gc", "lockup"]


def test_it_needs_every_required_symptom_and_its_conditions():
    short = {"gc-pause": [hit("gc-pause", pause_ms=2000.0)]}
    long = {"gc-pause": [hit("gc-pause", pause_ms=25000.0)]}
    assert diagnose(short, CATALOG, {}, {}) == []
    (f,) = diagnose(long, CATALOG, {}, {})
    assert f["runbook"] == "gc" and f["confidence"] == 0.5


def test_an_excluding_symptom_vetoes_the_finding():
    occ = {"gc-pause": [hit("gc-pause", pause_ms=25000.0)], "no-gcs": [hit("no-gcs")]}
    assert diagnose(occ, CATALOG, {}, {}) == []


def test_relations_add_weight_only_when_time_and_host_fit():
    near = {"soft-lockup": [hit("soft-lockup", ts="2019-04-23T17:39:19.000")],
            HEARTBEAT: [hit(HEARTBEAT, ts="2019-04-23T17:40:00.000")]}
    other_host = {"soft-lockup": [hit("soft-lockup")], HEARTBEAT: [hit(HEARTBEAT, host="h2")]}
    too_late = {"soft-lockup": [hit("soft-lockup", ts="2019-04-23T17:39:19.000")],
                HEARTBEAT: [hit(HEARTBEAT, ts="2019-04-23T18:39:19.000")]}
    assert diagnose(near, CATALOG, {}, {})[0]["confidence"] == 0.8
    assert diagnose(other_host, CATALOG, {}, {})[0]["confidence"] == 0.65
    assert diagnose(too_late, CATALOG, {}, {})[0]["confidence"] == 0.65


def test_findings_are_ranked_by_confidence_and_explained():
    occ = {"soft-lockup": [hit("soft-lockup")], "bucket-histogram": [hit("bucket-histogram")],
           HEARTBEAT: [hit(HEARTBEAT, ts="2019-04-23T17:39:30.000")]}
    findings = diagnose(occ, CATALOG, {}, {})
    assert [f["runbook"] for f in findings] == ["lockup", "buckets"]
    assert any("soft-lockup -> flink-tm-heartbeat-timeout" in w for w in findings[0]["explanation"])


def test_version_evidence_moves_confidence():
    book = rb("lease", [sym("interrupted-close", "required", 0.6)],
              affected_versions=[{"component": "hadoop", "range": "<2.8"}])
    occ = {"interrupted-close": [hit("interrupted-close")]}
    assert diagnose(occ, [book], {"hadoop": ["2.5.0-cdh5.2.0"]}, {})[0]["confidence"] == 0.65
    assert diagnose(occ, [book], {"hadoop": ["3.3.0"]}, {})[0]["confidence"] == 0.45


def test_knobs_report_the_value_found_in_the_bundle():
    book = rb("replicas", [sym("not-enough-replicas", "required", 0.6)], knobs=[{
        "key": "dfs.client.block.write.locateFollowingBlock.retries", "default": "5", "recommended": "10",
        "why": "more time for a slow NameNode"}])
    (f,) = diagnose({"not-enough-replicas": [hit("not-enough-replicas")]}, [book], {},
                    {"dfs.client.block.write.locateFollowingBlock.retries": "5"})
    assert f["knobs"][0]["found"] == "5" and f["knobs"][0]["recommended"] == "10"


def test_a_symptom_others_only_support_still_diagnoses_the_runbook_that_requires_it():
    heap = [rb("heap-oom", [sym("java-heap-oom", "required", 0.6)]),
            rb("buckets", [sym("bucket-histogram", "required", 0.6), sym("java-heap-oom", "supporting", 0.1)])]
    (f,) = diagnose({"java-heap-oom": [hit("java-heap-oom")]}, heap, {}, {})
    assert f["runbook"] == "heap-oom"


def test_a_symptom_two_runbooks_require_is_not_a_finding_alone():
    two = [rb("a", [sym("shared", "required")]), rb("b", [sym("shared", "required")])]
    assert diagnose({"shared": [hit("shared")]}, two, {}, {}) == []


def test_one_required_symptom_of_a_group_is_enough():
    book = rb("gc", [sym("gc-log-pause", "required", 0.5, group="pause"),
                     sym("pause-monitor-gc", "required", 0.5, group="pause"),
                     sym(HEARTBEAT, "supporting", 0.1)])
    (f,) = diagnose({"gc-log-pause": [hit("gc-log-pause")]}, [book], {}, {})
    assert f["runbook"] == "gc" and f["confidence"] == 0.5
    assert diagnose({HEARTBEAT: [hit(HEARTBEAT)]}, [book], {}, {}) == []


# A burst: a real server line (shayhatsor/zookeeper#34, a ZooKeeper 3.5 server log); the
# tests vary only when and where it was logged.
EXPIRY = ("2018-12-09 18:21:09,031 [myid:] - INFO  [SessionTracker:ZooKeeperServer@354] - "
          "Expiring session 0x10000085bd30000, timeout of 4000ms exceeded")


def expiry(at: str | None, host="zk1", line=1):
    return Hit(symptom="expiry", path=f"{host}/zookeeper.log", line=line, text=EXPIRY, captures={"timeout_ms": 4000.0},
               timestamp=f"2018-12-09T18:{at}" if at else None, level="INFO", host=host, component="zookeeper")


def storm_book(hosts="any"):
    return rb("storm", [sym("expiry", "required", 0.6, burst={"count": 3, "within": "10s", "hosts": hosts}),
                        sym("slow-fsync", "supporting", 0.1)])


def _expiries(*ats, host="zk1"):
    return [expiry(at, host, line=i + 1) for i, at in enumerate(ats)]


def test_a_burst_is_met_by_that_many_occurrences_within_the_window():
    (f,) = diagnose({"expiry": _expiries("21:09.031", "21:10.500", "21:11.002")}, [storm_book()], {}, {})
    assert f["runbook"] == "storm" and f["confidence"] == 0.6
    assert f["explanation"] == ["+0.60 expiry (3x, required; 3 occurrences within 10s "
                                "(from 2018-12-09T18:21:09 to 2018-12-09T18:21:11))"]


def test_a_burst_spread_out_is_missing_and_the_considered_list_says_by_how_much():
    occ = {"expiry": _expiries("21:09.031", "21:30.000", "21:51.000"), "slow-fsync": [hit("slow-fsync")]}
    assert diagnose(occ, [storm_book()], {}, {}) == []
    (ruled,), (cand,) = considered(occ, [storm_book()], [])
    assert ruled["reason"] == "required expiry seen 3 times, at most 1 within 10s; needs 3"
    assert cand["missing"] == [{"symptom": "expiry", "title": "expiry"}]
    assert cand["next_step"].startswith("Look for 'expiry' (seen 3 times, at most 1 within 10s; needs 3)")


def test_a_burst_window_counts_whole_seconds_at_most_within_apart():
    assert diagnose({"expiry": _expiries("21:00.000", "21:05.000", "21:10.999")}, [storm_book()], {}, {})
    assert not diagnose({"expiry": _expiries("21:00.999", "21:05.000", "21:11.000")}, [storm_book()], {}, {})


def test_hits_without_a_timestamp_never_make_a_burst():
    occ = {"expiry": _expiries(None, None, None, None, "21:00.000")}
    assert diagnose(occ, [storm_book()], {}, {}) == []
    (ruled,), _ = considered(occ, [storm_book()], [])
    assert ruled["reason"] == "required expiry seen 5 times, at most 1 within 10s; needs 3"


def test_a_burst_on_two_hosts_counts_for_hosts_any_not_for_hosts_same():
    occ = {"expiry": _expiries("21:09.031", "21:10.000") + _expiries("21:11.000", host="zk2")}
    assert [f["runbook"] for f in diagnose(occ, [storm_book("any")], {}, {})] == ["storm"]
    assert diagnose(occ, [storm_book("same")], {}, {}) == []
    (ruled,), _ = considered(occ, [storm_book("same")], [])
    assert ruled["reason"] == "required expiry seen 3 times, at most 2 within 10s on one host; needs 3"
    more = _expiries("21:12.000", "21:13.000", host="zk2")
    (f,) = diagnose({"expiry": occ["expiry"] + more}, [storm_book("same")], {}, {})
    assert "on zk2" in f["explanation"][0]


def test_a_burst_finding_shows_the_densest_window_not_the_routine_hits_before_it():
    routine = _expiries(*(f"{m:02d}:00.000" for m in range(0, 20, 2)))              # one every 2 minutes
    storm = [expiry(f"30:{s:02d}.{ms:03d}", line=100 + s * 10 + ms) for s in range(3) for ms in (0, 1, 2, 3)]
    (f,) = diagnose({"expiry": routine + storm}, [storm_book()], {}, {})
    assert {e["timestamp"][:16] for e in f["evidence"]} == {"2018-12-09T18:30"}
    assert len(f["evidence"]) == 10 and "12 occurrences within 10s" in f["explanation"][0]
