"""The activity stream of an incident: activity_record is the one way to write
it (uploads, analyses, incident updates, annotations and feedback all call it)."""

from __future__ import annotations

from typing import Any

from kb.models import Activity, Incident


def activity_record(*, incident: Incident, actor: Any, verb: str, target: str = "", **data: Any) -> Activity:
    """Append to the incident's activity stream. `verb` is an Activity.Verb value;
    `data` must be JSON-serialisable (ids and short strings, never log text)."""
    if verb not in Activity.Verb.values:
        raise ValueError(f"unknown activity verb {verb!r}")
    if actor is not None and not getattr(actor, "is_authenticated", False):
        actor = None
    return Activity.objects.create(team_id=incident.team_id, incident=incident, actor=actor, verb=verb,
                                   target=str(target)[:300], data=data)
