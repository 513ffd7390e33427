"""Incidents: create, update, and the lines around a piece of evidence.

A bundle path from a request is only ever looked up among the analysis's own
`result["files"]` and then in its context store's manifest
(kb.services.context_store; for analyses from before it, the staging manifest
of kb.services.staged, whose files must stay inside the bundle's directory),
so a request can never name an arbitrary file on the server.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction

from kb.access import is_member
from kb.models import Analysis, Incident, Team
from kb.services.activity import activity_record
from kb.services.context_store import context_store_lines
from kb.services.staged import analysis_staged_file

CONTEXT_RADIUS = 10
MAX_LINE_CHARS = 4000
MAX_LINE_NUMBER = 10**9
RECORD_SPAN = 400      # the longest record whose lines one context request shows


def incident_create(*, team: Team, title: str, severity: str, user: Any) -> Incident:
    if not is_member(user, team):
        raise ValidationError({"team": "You are not a member of this team."})
    if severity not in Incident.Severity.values:
        raise ValidationError({"severity": "Unknown severity."})
    incident = Incident.objects.create(team=team, title=title.strip(), severity=severity,
                                       created_by=user, owner=user)
    activity_record(incident=incident, actor=user, verb="created", target=incident.title)
    return incident


@transaction.atomic
def incident_update(*, incident: Incident, status: str | None = None, severity: str | None = None,
                    owner: Any = None, set_owner: bool = False, actor: Any = None) -> Incident:
    """Change status, severity and/or owner. The owner must be a member of the
    incident's team (or nobody: pass owner=None with set_owner=True). Each real
    change goes into the incident's activity stream, by `actor`."""
    fields = []
    before = {"status": incident.status, "severity": incident.severity,
              "owner": incident.owner.get_username() if incident.owner_id else ""}
    if status is not None:
        if status not in Incident.Status.values:
            raise ValidationError({"status": "Unknown status."})
        incident.status = status
        fields.append("status")
    if severity is not None:
        if severity not in Incident.Severity.values:
            raise ValidationError({"severity": "Unknown severity."})
        if severity != incident.severity:
            incident.severity_set_by_person = actor is not None
            fields.append("severity_set_by_person")
        incident.severity = severity
        fields.append("severity")
    if set_owner:
        if owner is not None and not is_member(owner, incident.team):
            raise ValidationError({"owner": "The owner must be a member of the incident's team."})
        incident.owner = owner
        fields.append("owner")
    if fields:
        incident.save(update_fields=fields + ["updated"])
    after = {"status": incident.status, "severity": incident.severity,
             "owner": incident.owner.get_username() if incident.owner_id else ""}
    for field in fields:
        if field in before and before[field] != after[field]:
            activity_record(incident=incident, actor=actor, verb=field, target=field,
                            **{"from": before[field], "to": after[field]})
    return incident


def incident_severity_follow(*, incident_id: int, result: dict[str, Any]) -> None:
    """The incident's severity becomes its new top finding's, unless a person set it."""
    findings = result.get("findings") or []
    severity = findings[0].get("severity") if findings else None
    if severity not in Incident.Severity.values:
        return
    incident = Incident.objects.filter(pk=incident_id, severity_set_by_person=False).first()
    if incident is None or incident.severity == severity:
        return
    before = incident.severity
    Incident.objects.filter(pk=incident_id, severity_set_by_person=False).update(severity=severity)
    activity_record(incident=incident, actor=None, verb="severity", target="severity",
                    **{"from": before, "to": severity, "why": f"top finding {findings[0].get('runbook')}"})


# -- evidence context ---------------------------------------------------------------

def analysis_file_entry(*, analysis: Analysis, path: str) -> dict[str, Any] | None:
    """The entry of result["files"] whose bundle path is exactly `path`, or None."""
    for entry in (analysis.result or {}).get("files") or []:
        if isinstance(entry, dict) and entry.get("path") == path:
            return entry
    return None


def analysis_context(*, analysis: Analysis, path: str, line: int,
                     radius: int = CONTEXT_RADIUS, end: int | None = None) -> dict[str, Any] | None:
    """The lines around `line` of bundle file `path` (through `end`, the last
    line of a multi-line record, at most RECORD_SPAN further), or None when
    `path` is not one of the analysis's files. {"available": False} when the file is gone."""
    entry = analysis_file_entry(analysis=analysis, path=path)
    if entry is None or not 1 <= line <= MAX_LINE_NUMBER:
        return None
    ctx: dict[str, Any] = {"path": path, "line": line, "host": entry.get("host"), "lines": [],
                           "available": False}
    first, last = max(1, line - radius), line + radius
    if end is not None and line < end <= line + RECORD_SPAN:
        last = end + radius
    stored = context_store_lines(analysis=analysis, path=path, first=first, last=last,
                                 max_line_bytes=MAX_LINE_CHARS * 4)
    if stored is not None:
        ctx["lines"] = [_line(s.number, s.raw, s.cut, line) for s in stored]
    else:   # an analysis from before the context store keeps its staged tree
        disk = analysis_staged_file(analysis=analysis, path=path)
        if disk is None:
            return ctx
        ctx["lines"] = _read_lines(disk, first, last, line)
    ctx["available"] = True
    ctx["past_end"] = not any(item["target"] for item in ctx["lines"])
    return ctx


def _read_lines(disk: Path, first: int, last: int, target: int) -> list[dict[str, Any]]:
    """Lines first..last of a file, 1-based, in bounded reads (a line can be huge)."""
    out: list[dict[str, Any]] = []
    n, current, cut = 1, b"", False
    with open(disk, "rb") as fh:
        while n <= last:
            chunk = fh.readline(64 * 1024)
            if not chunk:
                break
            if n >= first:
                room = MAX_LINE_CHARS * 4 - len(current)
                cut = cut or len(chunk) > room
                current += chunk[:max(room, 0)]
            if chunk.endswith(b"\n"):
                if n >= first:
                    out.append(_line(n, current, cut, target))
                n, current, cut = n + 1, b"", False
    if current and first <= n <= last:
        out.append(_line(n, current, cut, target))
    return out


def _line(n: int, raw: bytes, cut: bool, target: int) -> dict[str, Any]:
    text = raw.decode("utf-8", errors="replace").rstrip("\r\n")
    cut = cut or len(text) > MAX_LINE_CHARS
    return {"n": n, "text": text[:MAX_LINE_CHARS], "cut": cut, "target": n == target}
