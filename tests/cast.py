"""The test world beyond conftest's people: what their teams have.

- make_incident / make_analysis: an Ops incident with a done analysis of two
  findings (disk-full, jvm-long-gc-pause), shaped like the result (docs/contract.md);
  conftest's `incident`, `analysis` and `other_incident` fixtures use them.
- build_world: a populated database for the access-control and rendering tests:
  team Ops (alice member, bob admin) with an incident, a done analysis, an
  annotation, a field note, feedback, a follow and a notification, all carrying
  SECRET in their text; team Other (mallory admin) with an incident of its own.
"""

from __future__ import annotations

import copy
import uuid
from dataclasses import dataclass
from typing import Any

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


SECRET = "OPS-SECRET-93c1"


@dataclass
class World:
    alice: Any
    bob: Any
    mallory: Any
    ops: Any
    other: Any
    incident: Any
    analysis: Any
    annotation: Any
    note: Any
    notification: Any
    other_incident: Any
    ops_runbook: Any
    proposal: Any = None
    symptom_proposal: Any = None


def build_world(*, alice, bob, mallory, team, other_team) -> World:
    from kb.models import Notification, Runbook
    from kb.services import collab

    incident = make_incident(team=team, user=alice, title=f"{SECRET} incident")
    analysis = make_analysis(incident=incident, user=alice, name=f"{SECRET}-bundle.tgz")
    annotation = collab.annotation_create(incident=incident, author=alice, body=f"{SECRET} note")
    note = collab.runbook_note_create(runbook=Runbook.objects.get(slug="disk-full"), team=team, author=alice,
                                      body=f"{SECRET} field note")
    collab.feedback_set(analysis=analysis, slug="disk-full", user=alice, verdict="confirm",
                        reason=f"{SECRET} reason")
    collab.follow_set(incident=incident, user=alice, follow=True)
    notification = Notification.objects.create(user=alice, incident=incident, verb="mention",
                                               text=f"{SECRET} notification", url=f"/incidents/{incident.pk}/")
    from kb.services.export import runbook_text
    from kb.services.governance import proposal_create

    disk_full = Runbook.objects.get(slug="disk-full")
    proposal = proposal_create(runbook=disk_full, team=team, user=bob, message=f"{SECRET} proposal",
                               text=runbook_text(runbook=disk_full).replace("## Summary", "## Proposed"))
    from kb.models import Symptom
    from kb.services.symptom_proposals import symptom_proposal_create
    from kb.services.symptoms import symptom_text

    symptom = Symptom.objects.get(id="no-space-left-on-device")
    symptom_proposal = symptom_proposal_create(
        symptom=symptom, team=team, user=bob, message=f"{SECRET} symptom proposal",
        text=symptom_text(symptom=symptom).replace(f"title: {symptom.title}", f"title: {SECRET} title"))
    # An Ops runbook of its own (not published: other teams do not see it).
    ops_runbook = Runbook.objects.get(slug="jvm-long-gc-pause")
    ops_runbook.team = team
    ops_runbook.save(update_fields=["team"])
    other_incident = make_incident(team=other_team, user=mallory, title="Other team's own incident")
    return World(alice, bob, mallory, team, other_team, incident, analysis, annotation, note, notification,
                 other_incident, ops_runbook, proposal, symptom_proposal)


def db_state() -> dict[str, list[dict]]:
    """Every row of every kb table and of the users (what a refused request must not change)."""
    from django.apps import apps
    from django.contrib.auth import get_user_model

    state = {}
    for model in list(apps.get_app_config("kb").get_models()) + [get_user_model()]:
        rows = list(model.objects.order_by("pk").values())
        for row in rows:
            row.pop("last_used", None)     # ApiToken: touched by every authenticated API call
            row.pop("last_login", None)    # User: force_login
        state[model.__name__] = rows
    return state
