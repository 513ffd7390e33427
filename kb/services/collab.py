"""Team work on incidents (writes): annotations, runbook field notes, finding
feedback and follows. The reads are in kb.selectors.collab, the activity
stream in kb.services.activity, who may do what in kb.access.

Rules:
- Everything belongs to a team and only its members act on it. Callers fetch
  objects through kb.access (another team's ids are 404s); these services
  check membership again and raise PermissionDenied.
- Annotations and notes are edited or deleted by their author or an admin of
  their team (kb.access).
- Feedback: one verdict per user per finding (confirm | reject), editable; a
  rejection needs a reason, a confirmation may have one.
- Runbook field notes are team-scoped: the runbook page shows each user the
  notes of their own teams. The feedback counts on a runbook page are totals
  over all teams (numbers only); the reasons listed are the user's teams'.
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.utils import timezone

from kb.access import annotation_can_edit, require_member, runbook_note_can_edit
from kb.models import Activity, Analysis, Annotation, FindingFeedback, Follow, Incident, Runbook, RunbookNote, Team
from kb.selectors.collab import annotation_target_label, finding_slugs
from kb.services.activity import activity_record
from kb.services.notifications import notify_mentions

MAX_BODY = 20_000
MAX_REASON = 2_000
MAX_LINE_NUMBER = 10**9


def _clean_body(body: str, limit: int = MAX_BODY) -> str:
    body = (body or "").strip()
    if not body:
        raise ValidationError({"body": "Write something."})
    if len(body) > limit:
        raise ValidationError({"body": f"At most {limit} characters."})
    return body


def _analysis_has_file(analysis: Analysis, path: str) -> bool:
    result = analysis.result or {}
    if any(isinstance(f, dict) and f.get("path") == path for f in result.get("files") or []):
        return True
    return any(isinstance(e, dict) and e.get("path") == path
               for f in result.get("findings") or [] for e in f.get("evidence") or [])


@transaction.atomic
def annotation_create(*, incident: Incident, author: Any, body: str, analysis: Analysis | None = None,
                      finding_slug: str = "", evidence_path: str = "",
                      evidence_line: int | None = None) -> Annotation:
    """A note on the incident, on one finding of one of its analyses, or on one
    line of one of the analysis's files (evidence_path + evidence_line)."""
    require_member(author, incident.team_id)
    body = _clean_body(body)
    if (finding_slug or evidence_path or evidence_line is not None) and analysis is None:
        raise ValidationError("A finding or a line needs its analysis.")
    if analysis is not None:
        if analysis.bundle.incident_id != incident.pk:
            raise ValidationError("That analysis belongs to another incident.")
        if finding_slug and finding_slug not in finding_slugs(analysis=analysis):
            raise ValidationError({"finding_slug": "No such finding in this analysis."})
        if evidence_path or evidence_line is not None:
            if not evidence_path or evidence_line is None or not 1 <= int(evidence_line) <= MAX_LINE_NUMBER:
                raise ValidationError("A line needs a file and a line number.")
            if not _analysis_has_file(analysis, evidence_path):
                raise ValidationError({"evidence_path": "No such file in this analysis."})
    annotation = Annotation.objects.create(
        team_id=incident.team_id, author=author, incident=incident, analysis=analysis,
        finding_slug=finding_slug, evidence_path=evidence_path,
        evidence_line=int(evidence_line) if evidence_line is not None else None, body=body,
    )
    activity_record(incident=incident, actor=author, verb=Activity.Verb.ANNOTATED,
                    target=annotation_target_label(annotation), annotation=annotation.pk, kind=annotation.kind)
    notify_mentions(annotation=annotation)
    return annotation


@transaction.atomic
def annotation_edit(*, annotation: Annotation, user: Any, body: str) -> Annotation:
    if not annotation_can_edit(annotation=annotation, user=user):
        raise PermissionDenied("Only the author or a team admin edits an annotation.")
    body = _clean_body(body)
    if body == annotation.body:
        return annotation
    previous = annotation.body
    annotation.body, annotation.edited = body, timezone.now()
    annotation.save(update_fields=["body", "edited"])
    activity_record(incident=annotation.incident, actor=user, verb=Activity.Verb.ANNOTATION_EDITED,
                    target=annotation_target_label(annotation), annotation=annotation.pk)
    notify_mentions(annotation=annotation, previous_body=previous)
    return annotation


@transaction.atomic
def annotation_delete(*, annotation: Annotation, user: Any) -> None:
    if not annotation_can_edit(annotation=annotation, user=user):
        raise PermissionDenied("Only the author or a team admin deletes an annotation.")
    activity_record(incident=annotation.incident, actor=user, verb=Activity.Verb.ANNOTATION_DELETED,
                    target=annotation_target_label(annotation), annotation=annotation.pk)
    annotation.delete()


def runbook_note_create(*, runbook: Runbook, team: Team, author: Any, body: str) -> RunbookNote:
    require_member(author, team)
    return RunbookNote.objects.create(runbook=runbook, team=team, author=author, body=_clean_body(body))


def runbook_note_edit(*, note: RunbookNote, user: Any, body: str) -> RunbookNote:
    if not runbook_note_can_edit(note=note, user=user):
        raise PermissionDenied("Only the author or a team admin edits a note.")
    note.body, note.edited = _clean_body(body), timezone.now()
    note.save(update_fields=["body", "edited"])
    return note


def runbook_note_delete(*, note: RunbookNote, user: Any) -> None:
    if not runbook_note_can_edit(note=note, user=user):
        raise PermissionDenied("Only the author or a team admin deletes a note.")
    note.delete()


@transaction.atomic
def feedback_set(*, analysis: Analysis, slug: str, user: Any, verdict: str, reason: str = "") -> FindingFeedback:
    """Confirm or reject one finding (one verdict per user per finding; a new
    verdict replaces the user's previous one). Recorded in the activity stream."""
    require_member(user, analysis.team_id)
    if verdict not in FindingFeedback.Verdict.values:
        raise ValidationError({"verdict": "Confirm or reject."})
    if slug not in finding_slugs(analysis=analysis):
        raise ValidationError({"slug": "No such finding in this analysis."})
    reason = (reason or "").strip()
    if len(reason) > MAX_REASON:
        raise ValidationError({"reason": f"At most {MAX_REASON} characters."})
    if verdict == FindingFeedback.Verdict.REJECT and not reason:
        raise ValidationError({"reason": "Say why it is not the root cause."})
    feedback = FindingFeedback.objects.filter(analysis=analysis, slug=slug, user=user).first()
    if feedback is not None and feedback.verdict == verdict and feedback.reason == reason:
        return feedback
    if feedback is None:
        feedback = FindingFeedback.objects.create(team_id=analysis.team_id, analysis=analysis, slug=slug,
                                                  user=user, verdict=verdict, reason=reason)
    else:
        feedback.verdict, feedback.reason = verdict, reason
        feedback.save(update_fields=["verdict", "reason", "updated"])
    activity_record(incident=analysis.bundle.incident, actor=user, verb=Activity.Verb.FEEDBACK,
                    target=slug, analysis=analysis.pk, slug=slug, verdict=verdict, reason=reason[:300])
    return feedback


@transaction.atomic
def feedback_clear(*, analysis: Analysis, slug: str, user: Any) -> bool:
    require_member(user, analysis.team_id)
    deleted, _ = FindingFeedback.objects.filter(analysis=analysis, slug=slug, user=user).delete()
    if deleted:
        activity_record(incident=analysis.bundle.incident, actor=user, verb=Activity.Verb.FEEDBACK,
                        target=slug, analysis=analysis.pk, slug=slug, verdict="withdrawn")
    return bool(deleted)


def follow_set(*, incident: Incident, user: Any, follow: bool = True) -> bool:
    """Follow (or stop following) an incident; returns whether the user follows it now."""
    require_member(user, incident.team_id)
    if follow:
        Follow.objects.get_or_create(incident=incident, user=user)
    else:
        Follow.objects.filter(incident=incident, user=user).delete()
    return follow
