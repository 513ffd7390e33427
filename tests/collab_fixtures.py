"""Fixtures for the team-work tests: an Ops incident with a done analysis of
two findings (disk-full, jvm-long-gc-pause), shaped like CONTRACT section 2.

Import the fixtures you use into a test module:

    from tests.collab_fixtures import analysis, incident  # noqa: F401
"""

from __future__ import annotations

import copy
import uuid

import pytest
from django.utils import timezone

DN_LOG = "dn1/hadoop-hdfs-datanode.log"
TM_LOG = "tm1/flink-taskmanager.log"
HTML_LINE = 'java.io.IOException: No space left on device <img src=x onerror=alert(1)><script>alert(2)</script>'

RESULT = {
    "findings": [
        {
            "runbook": "disk-full", "title": "A disk filled up and writes fail", "confidence": 0.91,
            "evidence": [
                {"path": DN_LOG, "line": 12, "host": "dn1", "timestamp": "2024-03-02T10:00:01.000",
                 "symptom": "no-space-left-on-device", "text": HTML_LINE},
                {"path": DN_LOG, "line": 30, "host": "dn1", "timestamp": "2024-03-02T10:00:09.000",
                 "symptom": "no-space-left-on-device", "text": "java.io.IOException: No space left on device"},
            ],
            "knobs": [], "fixes": [],
        },
        {
            "runbook": "jvm-long-gc-pause", "title": "Long stop-the-world GC pause stalls the JVM",
            "confidence": 0.55,
            "evidence": [
                {"path": TM_LOG, "line": 7, "host": "tm1", "timestamp": "2024-03-02T09:59:00.000",
                 "symptom": "jvm-pause-detected",
                 "text": "Detected pause in JVM or host machine (eg GC): pause of approximately 12000ms"},
            ],
            "knobs": [], "fixes": [],
        },
    ],
    "symptoms": [],
    "unmatched": [],
    "files": [
        {"path": DN_LOG, "host": "dn1", "component": "hdfs-datanode", "bytes": 4000},
        {"path": TM_LOG, "host": "tm1", "component": "flink-taskmanager", "bytes": 2000},
    ],
    "stats": {"files": 2, "lines": 60, "bytes": 6000, "seconds": 0.1, "startup_seconds": 0.0, "engine": "local"},
}


def make_incident(*, team, user, title: str = "Checkpoints fail on the Flink cluster", owner=None):
    from kb.models import Incident

    return Incident.objects.create(team=team, title=title, severity="high", created_by=user,
                                   owner=owner if owner is not None else user)


def make_analysis(*, incident, user, result: dict | None = None, status: str = "done",
                  name: str = "bundle.tar.gz"):
    """A bundle of `incident` and an analysis of it, with Finding rows like the pipeline writes."""
    from kb.models import Analysis, Bundle, Finding

    result = copy.deepcopy(RESULT if result is None else result)
    bundle = Bundle.objects.create(code=uuid.uuid4(), team=incident.team, incident=incident, uploaded_by=user,
                                   original_name=name, stored_path="")
    analysis = Analysis.objects.create(
        team=incident.team, bundle=bundle, status=status, progress=100 if status == "done" else 0,
        engine="local", result=result if status == "done" else None,
        finished=timezone.now() if status in ("done", "failed") else None,
        error="bundle is not an archive" if status == "failed" else "",
    )
    if status == "done":
        for rank, f in enumerate(result["findings"], start=1):
            Finding.objects.create(analysis=analysis, slug=f["runbook"], rank=rank, confidence=f["confidence"])
    return analysis


@pytest.fixture
def incident(team, alice):
    return make_incident(team=team, user=alice)


@pytest.fixture
def analysis(incident, alice):
    return make_analysis(incident=incident, user=alice)


@pytest.fixture
def other_incident(other_team, mallory):
    """Mallory's incident in team Other, with an analysis of the same runbooks."""
    incident = make_incident(team=other_team, user=mallory, title="Other team's disk problem")
    make_analysis(incident=incident, user=mallory)
    return incident
