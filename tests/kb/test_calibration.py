"""Measured precision on the runbook page (feedback first, fixture precision as
a labelled fallback) and the feedback reliability table (manage.py calibration)."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.urls import reverse

from kb.selectors.calibration import FIXTURE_PRECISION, feedback_observations, runbook_precision
from kb.services import collab
from tests.helpers import catalog

pytestmark = pytest.mark.django_db


def test_without_feedback_the_page_shows_the_fixture_precision_labelled(client_alice, synced):
    row = json.loads(FIXTURE_PRECISION.read_text())["disk-full"]

    content = client_alice.get(reverse("runbook_detail", args=["disk-full"])).content.decode()

    assert "Fixture precision: <strong>100%</strong>" in content
    assert f"of {row['findings']} findings on the test fixtures" in content
    assert f"found in {row['found_in_positive']} of {row['positive_cases']} positive cases" in content
    assert "no feedback yet" in content


def test_feedback_replaces_the_fixture_precision_with_its_count(client_alice, synced, analysis, alice, bob):
    collab.feedback_set(analysis=analysis, slug="disk-full", user=alice, verdict="confirm")
    collab.feedback_set(analysis=analysis, slug="disk-full", user=bob, verdict="reject", reason="df showed room")

    content = client_alice.get(reverse("runbook_detail", args=["disk-full"])).content.decode()

    assert "Measured precision: <strong>50%</strong>" in content
    assert "of 2 confirm/reject verdicts on its findings (all teams)" in content
    assert "Fixture precision" not in content


def test_a_runbook_measured_by_neither_shows_no_precision(synced):
    assert runbook_precision(slug="no-such-runbook") is None


def test_the_feedback_reliability_table_uses_the_confidence_each_finding_was_shown_with(analysis, alice, bob):
    shown = {f.slug: f.confidence for f in analysis.findings.all()}
    collab.feedback_set(analysis=analysis, slug="disk-full", user=alice, verdict="confirm")
    collab.feedback_set(analysis=analysis, slug="jvm-long-gc-pause", user=bob, verdict="reject", reason="no GC log")

    observations = sorted(feedback_observations(), key=lambda o: o.runbook)

    assert [(o.runbook, o.confidence, o.correct) for o in observations] == [
        ("disk-full", shown["disk-full"], True), ("jvm-long-gc-pause", shown["jvm-long-gc-pause"], False)]
    out = StringIO()
    call_command("calibration", stdout=out)
    text = out.getvalue()
    assert text.startswith("calibration on feedback: 2 confirm/reject verdicts")
    assert "disk-full" in text and "1.00 precision (1/1 confirmed" in text
    assert "0.00 precision (0/1 confirmed" in text


def test_the_stored_fixture_precision_names_only_runbooks_of_the_catalog():
    table = json.loads(FIXTURE_PRECISION.read_text())
    slugs = set(catalog().runbooks)
    assert set(table) <= slugs and len(table) >= 100
    for row in table.values():
        assert row["correct"] <= row["findings"] and row["found_in_positive"] <= row["positive_cases"]
        assert row["precision"] is None or 0 <= row["precision"] <= 1
