"""Differential diagnosis rules, on small runbooks written here (the real catalog is tested elsewhere)."""

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
