"""The incident header of issue 15: resolve / mark duplicate / reopen in one
click, the severity following the top finding unless a person set it, and
the result keys other engineers add (`ruled_out`, `candidates`, `leads`)
rendered from the golden results of the seed bundles (real engine output)."""

from __future__ import annotations

import copy
import json

import pytest
from django.urls import reverse

from kb.models import Activity, Incident
from kb.services.incidents import incident_severity_follow, incident_update
from tests.cast import make_analysis
from tests.helpers import ROOT, SEED_BUNDLES

pytestmark = pytest.mark.django_db

GOLDEN = ROOT / "tests" / "golden"


def _golden(seed: str) -> dict:
    return json.loads((GOLDEN / f"seed-bundles__{seed}.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("status, message", [("resolved", "Incident resolved."),
                                             ("duplicate", "Incident marked as a duplicate.")])
def test_one_click_resolves_or_marks_duplicate_and_another_reopens(client_alice, incident, status, message):
    url = reverse("incident_quick_status", args=[incident.pk])

    response = client_alice.post(url, {"status": status}, follow=True)

    incident.refresh_from_db()
    assert incident.status == status
    assert message.encode() in response.content
    assert b'value="open">Reopen</button>' in response.content
    assert Activity.objects.filter(incident=incident, verb="status", data__to=status).exists()
    client_alice.post(url, {"status": "open"})
    incident.refresh_from_db()
    assert incident.status == "open"


def test_one_click_refuses_an_unknown_status_and_a_get(client_alice, incident):
    url = reverse("incident_quick_status", args=[incident.pk])
    client_alice.post(url, {"status": "investigating; drop table"})
    assert client_alice.get(url).status_code == 405
    incident.refresh_from_db()
    assert incident.status == "open"


def test_one_click_never_reaches_another_teams_incident(client_alice, other_incident):
    url = reverse("incident_quick_status", args=[other_incident.pk])
    assert client_alice.post(url, {"status": "resolved"}).status_code == 404
    other_incident.refresh_from_db()
    assert other_incident.status == "open"


def test_the_severity_follows_the_top_finding_until_a_person_sets_it(incident, alice):
    incident.severity = "low"
    incident.save()
    seed_000 = _golden("000-flink-hdfs-openforwrite-after-soft-lockup")   # top: high

    incident_severity_follow(incident_id=incident.pk, result=seed_000)
    incident.refresh_from_db()
    assert (incident.severity, incident.severity_set_by_person) == ("high", False)
    assert Activity.objects.filter(incident=incident, verb="severity", actor=None, data__to="high").exists()

    incident_update(incident=incident, severity="medium", actor=alice)
    critical = copy.deepcopy(seed_000)
    critical["findings"] = critical["findings"][1:]                      # kernel soft lockup: critical
    incident_severity_follow(incident_id=incident.pk, result=critical)
    incident.refresh_from_db()
    assert (incident.severity, incident.severity_set_by_person) == ("medium", True)


def test_no_finding_leaves_the_severity_alone(incident):
    before = incident.severity
    incident_severity_follow(incident_id=incident.pk, result=_golden("004-flink-tm-heartbeat-timeout-buckets"))
    assert Incident.objects.get(pk=incident.pk).severity == before


def _lead_from_seed_000() -> dict:
    """A lead shaped as docs/contract.md §2 agrees, built from seed 000's own unmatched record."""
    log = SEED_BUNDLES / "000-flink-hdfs-openforwrite-after-soft-lockup" / "hadoop-081-159" / "flink-taskmanager.log"
    lines = log.read_text(encoding="utf-8").splitlines()
    record = lines[46:62]                                                  # line 47 and its trace
    return {"rank": 1, "host": "hadoop-081-159", "path": "hadoop-081-159/flink-taskmanager.log", "line": 47,
            "timestamp": "2019-04-23T17:38:05.591", "text": "\n".join(record), "headline": record[1],
            "template": "Error during disposal of stream operator.", "count": 1, "kind": "exception",
            "reason": "an ERROR with a stack trace no runbook explains", "score": 0.8}


def test_the_page_shows_ruled_out_runbooks_candidates_and_leads(client_alice, incident, alice):
    result = _golden("000-flink-hdfs-openforwrite-after-soft-lockup")
    result["ruled_out"] = [{"runbook": "flink-zk-suspended-lost-leadership", "title": "Flink treats a suspended ZooKeeper connection as lost leadership",
                            "kind": "excluded", "reason": "excluded by kernel-soft-lockup: evidence of another cause",
                            "symptoms": ["curator-connection-suspended", "flink-jm-lost-leadership"]}]
    result["leads"] = [_lead_from_seed_000()]
    analysis = make_analysis(incident=incident, user=alice, result=result)

    html = client_alice.get(reverse("analysis_detail", args=[analysis.pk])).content.decode()

    ruled = html[html.index('id="ruled-out"'):html.index('id="bundle-facts"')]
    assert "Flink treats a suspended ZooKeeper connection as lost leadership" in ruled and "excluded by kernel-soft-lockup" in ruled
    finding_1 = html[html.index('id="finding-1"'):html.index('id="finding-2"')]
    assert "Ruled out (1)" in finding_1                       # it shares flink-jm-lost-leadership with #1
    leads = html[html.index('id="leads"'):html.index('id="ruled-out"')]
    assert "java.io.InterruptedIOException: Interrupted while waiting for data to be acknowledged by pipeline" in leads
    assert "flink-taskmanager.log:<strong>47</strong>" in leads and "The whole record" in leads


def test_a_result_without_a_finding_shows_its_candidates_first(client_alice, incident, alice):
    result = _golden("004-flink-tm-heartbeat-timeout-buckets")
    result["candidates"] = [{"runbook": "jvm-long-gc-pause", "title": "Long stop-the-world GC pause stalls the JVM",
                             "score": 0.1, "found": ["flink-tm-heartbeat-timeout"],
                             "missing": [{"symptom": "gc-log-long-pause", "title": "Long stop-the-world pause in a GC log"}],
                             "next_step": "Look for 'Long stop-the-world pause in a GC log'",
                             "where": "the JVM's GC log: -Xloggc:<file>"}]
    make_analysis(incident=incident, user=alice, result=result)

    html = client_alice.get(reverse("incident_detail", args=[incident.pk])).content.decode()

    verdict = html[html.index('id="verdict"'):html.index('id="findings"')]
    assert "No verdict" in verdict and "Long stop-the-world GC pause stalls the JVM" in verdict
    assert "Look for &#x27;Long stop-the-world pause in a GC log&#x27;" in verdict
    assert '<mark class="placeholder"' in verdict and "&lt;file&gt;</mark>" in verdict


def test_an_old_result_without_candidates_ranks_them_as_the_engine_does(client_alice, incident, alice):
    # Stored before the engine wrote `candidates`: the page re-derives them through
    # the engine's ranker (kb.lib.candidates over analyzers.considered).
    from kb.services.sync import runbook_sync
    from tests.helpers import RUNBOOKS_DIR

    runbook_sync(directory=RUNBOOKS_DIR)
    new = _golden("004-flink-tm-heartbeat-timeout-buckets")
    old = {k: v for k, v in new.items() if k not in ("candidates", "ruled_out")}
    make_analysis(incident=incident, user=alice, result=old)

    html = client_alice.get(reverse("incident_detail", args=[incident.pk])).content.decode()

    verdict = html[html.index('id="verdict"'):html.index('id="findings"')]
    assert "No verdict" in verdict
    titles = [c["title"] for c in new["candidates"]]
    assert len(titles) == 3 and all(t in verdict for t in titles)
    assert [verdict.index(t) for t in titles] == sorted(verdict.index(t) for t in titles)
    assert verdict.count("Look for") == 3 and "jmap -histo:live" in verdict
