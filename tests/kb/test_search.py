from __future__ import annotations

import pytest
from django.urls import reverse

from kb.services.search import runbook_search_log, runbook_search_words

pytestmark = pytest.mark.django_db

STACK_TRACE = """\
2024-01-01 10:00:00,000 ERROR org.apache.hadoop.hdfs.server.datanode.DataNode: IOException in BlockReceiver
java.io.IOException: No space left on device
\tat java.io.FileOutputStream.writeBytes(Native Method)
\tat java.io.FileOutputStream.write(FileOutputStream.java:326)
"""


def _slugs(hits) -> list[str]:
    return [h.runbook.slug for h in hits]


def test_it_ranks_a_title_match_first(synced):
    assert _slugs(runbook_search_words(q="disk", team=None))[0] == "disk-full"


def test_it_ranks_runbooks_matching_more_words_first(synced):
    # "heartbeat" is in two runbooks' symptoms; only one also says "garbage".
    hits = runbook_search_words(q="heartbeat garbage", team=None)

    assert _slugs(hits) == ["jvm-long-gc-pause", "kernel-soft-lockup-stalls-jvm"]
    assert hits[0].matched_words == 2 and hits[1].matched_words == 1


def test_it_finds_a_runbook_by_knob_key(synced):
    hits = runbook_search_words(q="dfs.datanode.du.reserved", team=None)

    assert _slugs(hits) == ["disk-full"]
    assert "knobs" in hits[0].fields


def test_it_finds_nothing_for_unknown_or_empty_words(synced):
    assert runbook_search_words(q="zebra", team=None) == []
    assert runbook_search_words(q="  ", team=None) == []


def test_it_shows_word_results_on_the_page(client_alice, synced):
    response = client_alice.get("/search", {"q": "soft lockup"})

    assert response.status_code == 200
    content = response.content.decode()
    assert "<title>Search: soft lockup · kb</title>" in content
    assert reverse("runbook_detail", args=["kernel-soft-lockup-stalls-jvm"]) in content


def test_it_escapes_the_query(client_alice, synced):
    response = client_alice.get("/search", {"q": "<script>alert(1)</script>"})

    assert b"<script>alert(1)" not in response.content


def test_it_finds_the_runbook_of_a_pasted_stack_trace(client_alice, synced):
    response = client_alice.post(reverse("search"), {"log": STACK_TRACE})

    assert response.status_code == 200
    findings = response.context["log_result"]["findings"]
    assert [f["runbook"] for f in findings] == ["disk-full"]
    assert findings[0]["evidence"][0]["line"] == 2
    content = response.content.decode()
    assert reverse("runbook_detail", args=["disk-full"]) in content
    assert "java.io.IOException: No space left on device" in content
    assert "line 2" in content


def test_it_lists_a_shared_symptom_as_possible_causes(client_alice, synced):
    log = "2024-01-01 10:00:05,000 WARN x: Heartbeat of TaskManager with id container_1 timed out.\n"

    response = client_alice.post(reverse("search"), {"log": log})

    result = response.context["log_result"]
    # A shared symptom alone is not a finding: both runbooks are candidates.
    assert result["findings"] == []
    (symptom,) = result["symptoms"]
    assert symptom["id"] == "flink-tm-heartbeat-timeout"
    assert sorted(r.slug for r in symptom["candidates"]) == ["jvm-long-gc-pause", "kernel-soft-lockup-stalls-jvm"]
    assert "Possible causes" in response.content.decode()


def test_it_escapes_pasted_log_lines(client_alice, synced):
    log = "java.io.IOException: No space left on device <img src=x onerror=alert(1)>\n"

    response = client_alice.post(reverse("search"), {"log": log})

    assert b"<img src=x" not in response.content
    assert b"&lt;img src=x onerror=alert(1)&gt;" in response.content


def test_the_analysis_engine_matches_a_pasted_log(synced):
    result = runbook_search_log(text=STACK_TRACE + "Heartbeat of TaskManager with id tm-1 timed out\n", team=None)

    assert result["engine"] == "local"
    assert [f["runbook"] for f in result["findings"]] == ["disk-full"]
    assert result["findings"][0]["evidence"][0]["text"] == "java.io.IOException: No space left on device"
    shared = next(s for s in result["symptoms"] if s["id"] == "flink-tm-heartbeat-timeout")
    assert sorted(r.slug for r in shared["candidates"]) == ["jvm-long-gc-pause", "kernel-soft-lockup-stalls-jvm"]


def test_it_requires_a_log_to_match(client_alice, synced):
    response = client_alice.post(reverse("search"), {"log": ""})

    assert response.status_code == 200
    assert response.context["log_result"] is None
    assert b"This field is required" in response.content
