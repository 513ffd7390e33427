"""A populated database for the access-control and rendering tests: team Ops
(alice member, bob admin) with an incident, a done analysis, an annotation, a
field note, feedback, a follow and a notification, all carrying SECRET in their
text; team Other (mallory admin) with an incident of its own."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

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


def build_world(*, alice, bob, mallory, team, other_team) -> World:
    from kb.models import Notification, Runbook
    from kb.services import collab
    from tests.collab_fixtures import make_analysis, make_incident

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
    ops_runbook = Runbook.objects.get(slug="jvm-long-gc-pause")
    ops_runbook.team = team
    ops_runbook.save(update_fields=["team"])
    other_incident = make_incident(team=other_team, user=mallory, title="Other team's own incident")
    return World(alice, bob, mallory, team, other_team, incident, analysis, annotation, note, notification,
                 other_incident, ops_runbook)


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
