"""Drafting a runbook from a lead (issue 12): a lead's real line generalised into a symptom
pattern (named captures for the variable parts, the wording escaped), checked against the
runbook validator and the literal prefilter, and a draft runbook the engine then reports as
the finding of the incident it came from.

Lines: tests/fixtures/leads/<case>/ (real incidents; provenance in each SOURCE.md and in
tests/fixtures/README.md).
"""

from __future__ import annotations

import re
import shutil

import pytest

from analyzers.draft import DraftError, draft_runbook, draft_slug, generalise
from analyzers.engine import analyze_paths
from analyzers.leads import line_key
from analyzers.literals import required_literals
from analyzers.runbooks import parse_runbook, parse_symptom
from tests.helpers import FIXTURES, runbook_metas

LEADS = FIXTURES / "leads"


def lines_of(case: str, path: str) -> list[str]:
    return (LEADS / case / path).read_text(encoding="utf-8").splitlines()


def first_line(case: str, path: str, contains: str) -> str:
    return next(line for line in lines_of(case, path) if contains in line)


# (case, file, a substring of the real line, captures the pattern must have, text that must stay literal)
REAL_LINES = [
    ("fluentd-kafka-producer-buffer-overflow", "td-agent.log", "error_class=Kafka::BufferOverflow",
     {"number": "float", "time": "str", "hex": "str"}, r"failed\s+to\s+flush\s+the\s+buffer"),
    ("hbase-master-npe-waiting-for-meta", "hbase-master.log", "Failed to become active master",
     {"number": "float"}, r"master\.HMaster:\s+Failed\s+to\s+become\s+active\s+master"),
    ("celery-worker-postgres-socket-missing", "celery-worker.log", "in get_new_connection",
     {"path": "path", "number": "float"}, r"in\s+get_new_connection"),
    ("go-grmon-nil-pointer-panic", "grmon.log", "SIGSEGV", {"hex": "str"}, r"segmentation\s+violation"),
    ("airflow-worker-db-connection-dropped-timestamps", "airflow-worker.log", "server closed the connection",
     {}, r"\(psycopg2\.OperationalError\)"),
]


@pytest.mark.parametrize("case, path, contains, kinds, literal", REAL_LINES, ids=[c[0] for c in REAL_LINES])
def test_a_real_line_becomes_a_pattern_of_named_captures_and_escaped_wording(case, path, contains, kinds, literal):
    line = first_line(case, path, contains)
    g = generalise(line)
    compiled = re.compile(g.pattern)
    assert compiled.search(line)
    assert literal in g.pattern
    assert ".*" not in g.pattern and ".+" not in g.pattern
    for name, typ in kinds.items():
        assert g.captures.get(name) == typ, (name, g.captures)
    assert set(compiled.groupindex) == set(g.captures)
    assert not g.pattern.startswith("(?P<"), "a pattern may not begin with an unbounded capture"
    assert min(map(len, required_literals(g.pattern))) >= 4
    # The library validator accepts it as a symptom, with the line as its example.
    parse_symptom(f"id: drafted\ntitle: drafted\npatterns: [{_q(g.pattern)}]\ncaptures: {g.captures}\n"
                  f"examples: [{_q(line)}]\n", "drafted.yaml", "drafted")


def _q(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


# Files with several records of one template whose values differ (fixture cases with their own SOURCE.md).
REPEATED = [
    ("kafka-advertised-listeners-unreachable/near-miss/ambari-m1/kafka-service-check.log", "Connection to node", "address"),
    ("hdfs-block-missing/positive/worker-2/spark-executor-7.log", "DFS chooseDataNode: got #", "number"),
    ("zookeeper-too-many-connections/positive-bitnami-k8s/zoo-0/zookeeper.log", "Too many connections from", "ip_3"),
]


@pytest.mark.parametrize("path, contains, varying", REPEATED, ids=[r[0].split("/")[0] for r in REPEATED])
def test_the_pattern_matches_the_other_records_of_the_lead_template_not_other_lines(path, contains, varying):
    lines = (FIXTURES / "cases" / path).read_text(encoding="utf-8").splitlines()
    line = next(ln for ln in lines if contains in ln)
    same = [ln for ln in lines if line_key(ln) == line_key(line) and ln != line]
    assert same, "the fixture has more records of this template"
    g = generalise(line, others=same)
    compiled = re.compile(g.pattern)
    assert all(compiled.search(ln) for ln in same)
    assert not any(compiled.search(ln) for ln in lines if contains not in ln)
    # The values differ from record to record and are captured, not spelled out.
    assert len({compiled.search(ln).group(varying) for ln in [line, *same]}) > 1, g.pattern


def test_the_library_example_keeps_the_wording_and_drops_the_incidents_hosts_and_addresses():
    path = FIXTURES / "cases" / "kafka-advertised-listeners-unreachable/near-miss/ambari-m1/kafka-service-check.log"
    line = next(ln for ln in path.read_text(encoding="utf-8").splitlines() if "Connection to node" in ln)
    g = generalise(line)
    assert "192.168.25." not in g.neutral and "bigdata.local" not in g.neutral
    assert "could not be established" in g.neutral and re.search(g.pattern, g.neutral)


def test_a_record_the_pattern_cannot_match_is_refused_with_the_line():
    line = first_line("hbase-master-npe-waiting-for-meta", "hbase-master.log", "Failed to become active master")
    with pytest.raises(DraftError, match="does not match"):
        generalise(line, others=["2023-09-18 14:17:40,452 ERROR [main] master.HMaster: Failed to start"])


def test_a_line_of_ids_and_numbers_only_gives_no_pattern():
    with pytest.raises(DraftError):
        generalise("2023-09-18 14:17:40,452 ERROR 10.0.0.1:2181 blk_1073741825_1001 42")


def test_slugs_come_from_component_and_wording_and_are_unique():
    template = "[master/hmaster:<NUM>:becomeActiveMaster] master.HMaster: Failed to become active master"
    assert draft_slug("hbase", template) == "hbase-hmaster-failed-become-active-master"
    assert draft_slug("hbase", template, taken={"hbase-hmaster-failed-become-active-master"}) == \
        "hbase-hmaster-failed-become-active-master-2"


def test_a_lead_of_a_real_bundle_drafts_a_runbook_that_becomes_its_finding(tmp_path):
    case = LEADS / "hbase-master-npe-waiting-for-meta"
    bundle = tmp_path / "bundle"
    shutil.copytree(case, bundle, ignore=shutil.ignore_patterns("SOURCE.md", "expected.json"))
    metas = runbook_metas()
    before = analyze_paths([str(bundle)], metas, engine="local")
    assert not before["findings"]
    lead = before["leads"][0]
    draft = draft_runbook(lead, incident="incident 1 (analysis 1)", taken={m["slug"] for m in metas})
    assert "TODO" in draft.runbook_text and lead["text"].split("\n")[0] in draft.runbook_text
    library = {draft.symptom_id: parse_symptom(draft.symptom_text, "s.yaml", draft.symptom_id)}
    runbook = parse_runbook(draft.runbook_text, f"{draft.slug}.md", draft.slug, library=library)
    assert runbook.meta["components"] == ["hbase"]
    after = analyze_paths([str(bundle)], [*metas, runbook.meta], engine="local")
    assert [f["runbook"] for f in after["findings"]] == [draft.slug]
    assert lead["text"] not in [ld["text"] for ld in after["leads"]]


@pytest.mark.slow
@pytest.mark.parametrize("case", sorted(p for p in LEADS.iterdir() if p.is_dir()), ids=lambda p: p.name)
def test_the_top_lead_of_every_real_incident_drafts_a_runbook_that_finds_it(case, tmp_path):
    bundle = tmp_path / "bundle"
    shutil.copytree(case, bundle, ignore=shutil.ignore_patterns("SOURCE.md", "expected.json"))
    metas = runbook_metas()
    before = analyze_paths([str(bundle)], metas, engine="local")
    if not before["leads"]:     # the leads engine's own misses, listed with their reason
        assert case.name in (LEADS / "MISSES.md").read_text(encoding="utf-8")
        return
    lead = before["leads"][0]
    draft = draft_runbook(lead, incident=case.name, taken={m["slug"] for m in metas})
    library = {draft.symptom_id: parse_symptom(draft.symptom_text, "s.yaml", draft.symptom_id)}
    runbook = parse_runbook(draft.runbook_text, f"{draft.slug}.md", draft.slug, library=library)
    after = analyze_paths([str(bundle)], [*metas, runbook.meta], engine="local")
    assert draft.slug in [f["runbook"] for f in after["findings"]]
