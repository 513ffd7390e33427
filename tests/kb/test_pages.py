from __future__ import annotations

import pytest
from django.urls import reverse

from kb.models import Runbook

pytestmark = pytest.mark.django_db


def _slugs(response) -> list[str]:
    return [r.slug for r in response.context["runbooks"]]


def test_it_shows_the_home_page(client_alice, synced):
    response = client_alice.get(reverse("home"))

    assert response.status_code == 200
    content = response.content.decode()
    assert "<title>Home · kb</title>" in content
    assert 'name="q"' in content
    assert reverse("runbook_detail", args=["disk-full"]) in content
    assert "alice" in content and "Ops" in content  # the user menu with the team


def test_it_lists_runbooks_most_severe_first(client_alice, synced):
    response = client_alice.get(reverse("runbook_list"))

    assert response.status_code == 200
    assert _slugs(response) == ["kernel-soft-lockup-stalls-jvm", "disk-full", "jvm-long-gc-pause"]
    assert b"<title>Runbooks" in response.content


@pytest.mark.parametrize(
    "params, expected",
    [
        ({"component": "hdfs"}, ["disk-full"]),
        ({"component": "jvm"}, ["jvm-long-gc-pause"]),
        ({"component": "os"}, ["disk-full"]),
        ({"component": "kafka"}, []),
        ({"severity": "critical"}, ["kernel-soft-lockup-stalls-jvm"]),
        ({"severity": "medium", "component": "flink"}, ["jvm-long-gc-pause"]),
        ({"severity": "high", "component": "flink"}, []),
    ],
)
def test_it_filters_the_list(client_alice, synced, params, expected):
    response = client_alice.get(reverse("runbook_list"), params)

    assert _slugs(response) == expected


def test_it_ignores_an_unknown_filter_value(client_alice, synced):
    response = client_alice.get(reverse("runbook_list"), {"component": "nonsense"})

    assert response.status_code == 200
    assert len(_slugs(response)) == 3


def test_it_answers_htmx_with_the_table_only(client_alice, synced):
    response = client_alice.get(reverse("runbook_list"), {"severity": "high"}, HTTP_HX_REQUEST="true")

    content = response.content.decode()
    assert content.lstrip().startswith('<div id="runbook-table">')
    assert "<html" not in content
    assert "disk-full" in content and "jvm-long-gc-pause" not in content
    assert "HX-Request" in response["Vary"]


def test_it_shows_a_runbook(client_alice, synced):
    response = client_alice.get(reverse("runbook_detail", args=["disk-full"]))

    assert response.status_code == 200
    content = response.content.decode()
    assert "<title>A disk filled up and writes fail · kb</title>" in content
    assert 'class="sev sev-high"' in content
    assert "No space left" in content  # summary
    # Knobs table, with the version-specific default.
    assert "<code>dfs.datanode.du.reserved</code>" in content
    assert "hdfs-site.xml" in content and "10737418240" in content and "&lt;3.0" in content
    # Fixes grouped by kind, commands with a copy button.
    assert content.index("Diagnose") < content.index("Mitigate now")
    assert "df -h /data" in content and 'class="copy"' in content
    # Tickets and references.
    assert 'href="https://issues.apache.org/jira/browse/HDFS-1234" rel="noopener noreferrer"' in content
    assert "2.8.0" in content and "Linux df manual" in content
    # The rendered body.
    assert "<h2>Resolution</h2>" in content
    assert "<code>dfs.datanode.du.reserved</code>" in content


def test_it_shows_the_other_runbooks_sharing_a_symptom(client_alice, synced):
    response = client_alice.get(reverse("runbook_detail", args=["jvm-long-gc-pause"]))

    content = response.content.decode()
    assert "flink-tm-heartbeat-timeout" in content
    assert "Also a symptom of:" in content
    assert reverse("runbook_detail", args=["kernel-soft-lockup-stalls-jvm"]) in content
    assert r"Heartbeat of TaskManager with id \S+ timed out" in content  # the pattern
    # The differential links to the look-alike runbook.
    assert "Look-alikes to rule out" in content and "GC logs show no pause" in content


def test_it_does_not_link_unsafe_urls_from_front_matter(client_alice, synced):
    runbook = Runbook.objects.get(slug="disk-full")
    runbook.tickets.update(url="javascript:alert(1)")
    runbook.references.update(url="data:text/html,<script>alert(1)</script>")

    content = client_alice.get(reverse("runbook_detail", args=["disk-full"])).content.decode()

    assert "javascript:" not in content
    assert 'href="data:' not in content
    assert "<script>alert(1)" not in content


def test_it_answers_404_for_an_unknown_runbook(client_alice, synced):
    assert client_alice.get(reverse("runbook_detail", args=["no-such-runbook"])).status_code == 404
