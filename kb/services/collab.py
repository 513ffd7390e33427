"""Team work on incidents: annotations, runbook field notes, finding feedback,
the activity stream and follows (writes), plus the reads the pages need.

Rules:
- Everything belongs to a team and only its members act on it. Callers fetch
  objects through kb.access (another team's ids are 404s); these services
  check membership again and raise PermissionDenied.
- Annotations and notes are edited or deleted by their author or an admin of
  their team.
- Feedback: one verdict per user per finding (confirm | reject), editable; a
  rejection needs a reason, a confirmation may have one.
- Runbook field notes are team-scoped: the runbook page shows each user the
  notes of their own teams. The feedback counts on a runbook page are totals
  over all teams (numbers only); the reasons listed are the user's teams'.
- activity_record(*, incident, actor, verb, **data) is the one way to write
  the activity stream; other services (uploads, analyses, incident updates)
  call it too.
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.db.models import Count, Q, QuerySet
from django.utils import timezone

from kb.access import visible
from kb.models import (
    Activity,
    Analysis,
    Annotation,
    Finding,
    FindingFeedback,
    Follow,
    Incident,
    Membership,
    Runbook,
    RunbookNote,
    Team,
)

MAX_BODY = 20_000
MAX_REASON = 2_000
MAX_LINE_NUMBER = 10**9


def is_member(user: Any, team: Team | int) -> bool:
    team_id = team if isinstance(team, int) else team.pk
    return bool(getattr(user, "is_authenticated", False)) and Membership.objects.filter(
        user=user, team_id=team_id).exists()


def is_admin(user: Any, team: Team | int) -> bool:
    team_id = team if isinstance(team, int) else team.pk
    return bool(getattr(user, "is_authenticated", False)) and Membership.objects.filter(
        user=user, team_id=team_id, role=Membership.Role.ADMIN).exists()


def _require_member(user: Any, team: Team | int) -> None:
    if not is_member(user, team):
        raise PermissionDenied("Only members of the team may do this.")


def _clean_body(body: str, limit: int = MAX_BODY) -> str:
    body = (body or "").strip()
    if not body:
        raise ValidationError({"body": "Write something."})
    if len(body) > limit:
        raise ValidationError({"body": f"At most {limit} characters."})
    return body


# ---------------------------------------------------------------- activity


def activity_record(*, incident: Incident, actor: Any, verb: str, target: str = "", **data: Any) -> Activity:
    """Append to the incident's activity stream. `verb` is an Activity.Verb value;
    `data` must be JSON-serialisable (ids and short strings, never log text)."""
    if verb not in Activity.Verb.values:
        raise ValueError(f"unknown activity verb {verb!r}")
    if actor is not None and not getattr(actor, "is_authenticated", False):
        actor = None
    return Activity.objects.create(team_id=incident.team_id, incident=incident, actor=actor, verb=verb,
                                   target=str(target)[:300], data=data)


def activity_list(*, incident: Incident, limit: int = 50) -> QuerySet[Activity]:
    return Activity.objects.filter(incident=incident).select_related("actor")[:limit]


# ---------------------------------------------------------------- annotations


def finding_slugs(*, analysis: Analysis) -> set[str]:
    slugs = set(Finding.objects.filter(analysis=analysis).values_list("slug", flat=True))
    slugs.update(f.get("runbook") for f in (analysis.result or {}).get("findings") or [] if isinstance(f, dict))
    slugs.discard(None)
    return slugs


def _analysis_has_file(analysis: Analysis, path: str) -> bool:
    result = analysis.result or {}
    if any(isinstance(f, dict) and f.get("path") == path for f in result.get("files") or []):
        return True
    return any(isinstance(e, dict) and e.get("path") == path
               for f in result.get("findings") or [] for e in f.get("evidence") or [])


def annotation_target_label(annotation: Annotation) -> str:
    if annotation.kind == "evidence":
        return f"{annotation.evidence_path}:{annotation.evidence_line}"
    if annotation.kind == "finding":
        return annotation.finding_slug
    if annotation.kind == "analysis":
        return f"analysis #{annotation.analysis_id}"
    return "the incident"


@transaction.atomic
def annotation_create(*, incident: Incident, author: Any, body: str, analysis: Analysis | None = None,
                      finding_slug: str = "", evidence_path: str = "",
                      evidence_line: int | None = None) -> Annotation:
    """A note on the incident, on one finding of one of its analyses, or on one
    line of one of the analysis's files (evidence_path + evidence_line)."""
    from kb.services.notifications import notify_mentions

    _require_member(author, incident.team_id)
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


def annotation_can_edit(*, annotation: Annotation, user: Any) -> bool:
    if not is_member(user, annotation.team_id):
        return False
    return annotation.author_id == user.pk or is_admin(user, annotation.team_id)


@transaction.atomic
def annotation_edit(*, annotation: Annotation, user: Any, body: str) -> Annotation:
    from kb.services.notifications import notify_mentions

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


def annotation_list(*, incident: Incident | None = None, analysis: Analysis | None = None,
                    finding_slug: str | None = None, evidence_path: str | None = None,
                    evidence_line: int | None = None) -> QuerySet[Annotation]:
    """Annotations of an incident (all kinds), of an analysis, of one finding
    (including those on its evidence lines is the caller's choice: pass no
    finding_slug) or of one line."""
    qs = Annotation.objects.select_related("author", "analysis")
    if incident is not None:
        qs = qs.filter(incident=incident)
    if analysis is not None:
        qs = qs.filter(analysis=analysis)
    if finding_slug is not None:
        qs = qs.filter(finding_slug=finding_slug)
    if evidence_path is not None:
        qs = qs.filter(evidence_path=evidence_path, evidence_line=evidence_line)
    return qs.order_by("created", "id")


def annotation_for_finding(*, analysis: Analysis, slug: str) -> QuerySet[Annotation]:
    """Notes on a finding and on the lines of its evidence, in order."""
    lines = [(e.get("path"), e.get("line")) for f in (analysis.result or {}).get("findings") or []
             if isinstance(f, dict) and f.get("runbook") == slug for e in f.get("evidence") or []
             if isinstance(e, dict)]
    q = Q(finding_slug=slug)
    for path, line in lines:
        if path and isinstance(line, int):
            q |= Q(evidence_path=path, evidence_line=line, finding_slug="")
    return Annotation.objects.filter(q, analysis=analysis).select_related("author").order_by("created", "id")


# ---------------------------------------------------------------- runbook field notes


def runbook_note_create(*, runbook: Runbook, team: Team, author: Any, body: str) -> RunbookNote:
    _require_member(author, team)
    return RunbookNote.objects.create(runbook=runbook, team=team, author=author, body=_clean_body(body))


def runbook_note_can_edit(*, note: RunbookNote, user: Any) -> bool:
    if not is_member(user, note.team_id):
        return False
    return note.author_id == user.pk or is_admin(user, note.team_id)


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


def runbook_note_list(*, runbook: Runbook, user: Any) -> QuerySet[RunbookNote]:
    """The field notes of the user's teams on this runbook, newest first."""
    return visible(RunbookNote.objects.filter(runbook=runbook), user).select_related("author", "team")


# ---------------------------------------------------------------- feedback


@transaction.atomic
def feedback_set(*, analysis: Analysis, slug: str, user: Any, verdict: str, reason: str = "") -> FindingFeedback:
    """Confirm or reject one finding (one verdict per user per finding; a new
    verdict replaces the user's previous one). Recorded in the activity stream."""
    _require_member(user, analysis.team_id)
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
    _require_member(user, analysis.team_id)
    deleted, _ = FindingFeedback.objects.filter(analysis=analysis, slug=slug, user=user).delete()
    if deleted:
        activity_record(incident=analysis.bundle.incident, actor=user, verb=Activity.Verb.FEEDBACK,
                        target=slug, analysis=analysis.pk, slug=slug, verdict="withdrawn")
    return bool(deleted)


def feedback_for_finding(*, analysis: Analysis, slug: str, user: Any) -> dict[str, Any]:
    """The team's verdicts on one finding and the user's own."""
    entries = list(FindingFeedback.objects.filter(analysis=analysis, slug=slug).select_related("user")
                   .order_by("-updated", "-id"))
    mine = next((e for e in entries if e.user_id == user.pk), None)
    return {
        "entries": entries, "mine": mine,
        "confirms": sum(e.verdict == FindingFeedback.Verdict.CONFIRM for e in entries),
        "rejects": sum(e.verdict == FindingFeedback.Verdict.REJECT for e in entries),
    }


def runbook_feedback_stats(*, slug: str, user: Any, recent: int = 10) -> dict[str, Any]:
    """How often findings of this runbook were confirmed and rejected: verdict
    counts over all teams, and how many incidents they cover; the latest
    verdicts with reasons from the user's own teams."""
    rows = FindingFeedback.objects.filter(slug=slug)
    counts = rows.aggregate(
        confirmed=Count("id", filter=Q(verdict=FindingFeedback.Verdict.CONFIRM)),
        rejected=Count("id", filter=Q(verdict=FindingFeedback.Verdict.REJECT)),
        confirmed_incidents=Count("analysis__bundle__incident", distinct=True,
                                  filter=Q(verdict=FindingFeedback.Verdict.CONFIRM)),
        rejected_incidents=Count("analysis__bundle__incident", distinct=True,
                                 filter=Q(verdict=FindingFeedback.Verdict.REJECT)),
    )
    own = (visible(rows, user).select_related("user", "analysis__bundle__incident")
           .order_by("-updated", "-id")[:recent])
    return {**counts, "total": counts["confirmed"] + counts["rejected"], "recent": list(own)}


# ---------------------------------------------------------------- follows


def follow_set(*, incident: Incident, user: Any, follow: bool = True) -> bool:
    """Follow (or stop following) an incident; returns whether the user follows it now."""
    _require_member(user, incident.team_id)
    if follow:
        Follow.objects.get_or_create(incident=incident, user=user)
    else:
        Follow.objects.filter(incident=incident, user=user).delete()
    return follow


def is_following(*, incident: Incident, user: Any) -> bool:
    return Follow.objects.filter(incident=incident, user=user).exists()


# ---------------------------------------------------------------- incident lists


def _runbooks_with_component(component: str) -> QuerySet[Runbook]:
    from kb.selectors import runbook_list

    return runbook_list(component=component)


def incident_filter(qs: QuerySet[Incident], *, component: str = "", runbook: str = "",
                    confirmed: bool = False, team: Team | int | None = None, q: str = "") -> QuerySet[Incident]:
    """Narrow a (team-scoped) incident queryset.

    - runbook: incidents where an analysis matched the runbook, or a member
      confirmed it as the root cause; with confirmed=True only the latter.
    - component: incidents with a matched or confirmed runbook of that component.
    - team: one of the user's teams (the queryset is already limited to them).
    - q: words in the title, in an annotation, or a matched runbook's slug.
    """
    if team:
        qs = qs.filter(team=team)
    slugs: list[str] | None = None
    if runbook:
        slugs = [runbook]
    if component:
        in_component = list(_runbooks_with_component(component).values_list("slug", flat=True))
        slugs = [s for s in slugs if s in in_component] if slugs is not None else in_component
    if slugs is not None:
        confirmed_ids = FindingFeedback.objects.filter(
            slug__in=slugs, verdict=FindingFeedback.Verdict.CONFIRM).values("analysis__bundle__incident")
        cond = Q(pk__in=confirmed_ids)
        if not confirmed:
            cond |= Q(pk__in=Finding.objects.filter(slug__in=slugs).values("analysis__bundle__incident"))
        qs = qs.filter(cond)
    elif confirmed:
        qs = qs.filter(pk__in=FindingFeedback.objects.filter(
            verdict=FindingFeedback.Verdict.CONFIRM).values("analysis__bundle__incident"))
    for word in (q or "").split()[:8]:
        qs = qs.filter(
            Q(title__icontains=word)
            | Q(pk__in=Annotation.objects.filter(body__icontains=word).values("incident"))
            | Q(pk__in=Finding.objects.filter(slug__icontains=word).values("analysis__bundle__incident"))
        )
    return qs


def incident_root_causes(*, incident: Incident) -> dict[str, set[str]]:
    """The runbooks an incident's analyses matched, and those its members
    confirmed / rejected (a slug rejected and never confirmed is not "matched")."""
    matched = set(Finding.objects.filter(analysis__bundle__incident=incident).values_list("slug", flat=True))
    verdicts = FindingFeedback.objects.filter(analysis__bundle__incident=incident).values_list("slug", "verdict")
    confirmed = {s for s, v in verdicts if v == FindingFeedback.Verdict.CONFIRM}
    rejected = {s for s, v in verdicts if v == FindingFeedback.Verdict.REJECT} - confirmed
    return {"matched": matched - rejected, "confirmed": confirmed, "rejected": rejected}


def incident_similar(*, incident: Incident, user: Any, limit: int = 5) -> list[dict[str, Any]]:
    """Other incidents of the user's teams with the same confirmed or matched
    runbooks, best first: a shared confirmed root cause counts 3, a runbook
    confirmed on one side and matched on the other 2, matched on both 1."""
    mine = incident_root_causes(incident=incident)
    slugs = mine["matched"] | mine["confirmed"]
    if not slugs:
        return []
    candidates = visible(Incident.objects.exclude(pk=incident.pk), user)
    incident_of = "analysis__bundle__incident"
    confirmed: dict[int, set[str]] = {}
    for pk, slug in FindingFeedback.objects.filter(
            slug__in=slugs, verdict=FindingFeedback.Verdict.CONFIRM,
            analysis__bundle__incident__in=candidates).values_list(incident_of, "slug"):
        confirmed.setdefault(pk, set()).add(slug)
    rejected: dict[int, set[str]] = {}
    for pk, slug in FindingFeedback.objects.filter(
            slug__in=slugs, verdict=FindingFeedback.Verdict.REJECT,
            analysis__bundle__incident__in=candidates).values_list(incident_of, "slug"):
        rejected.setdefault(pk, set()).add(slug)
    matched: dict[int, set[str]] = {}
    for pk, slug in Finding.objects.filter(
            slug__in=slugs, analysis__bundle__incident__in=candidates).values_list(incident_of, "slug"):
        if slug not in rejected.get(pk, set()) or slug in confirmed.get(pk, set()):
            matched.setdefault(pk, set()).add(slug)
    scored = []
    for pk in set(confirmed) | set(matched):
        shared = []
        score = 0
        for slug in sorted(slugs):
            theirs_c, theirs_m = slug in confirmed.get(pk, ()), slug in matched.get(pk, ())
            ours_c = slug in mine["confirmed"]
            if not (theirs_c or theirs_m):
                continue
            weight = 3 if (ours_c and theirs_c) else 2 if (ours_c or theirs_c) else 1
            score += weight
            shared.append({"slug": slug, "confirmed": theirs_c, "confirmed_here": ours_c})
        if shared:
            scored.append((score, pk, shared))
    if not scored:
        return []
    by_pk = {i.pk: i for i in candidates.filter(pk__in=[pk for _, pk, _ in scored]).select_related("team", "owner")}
    scored.sort(key=lambda t: (-t[0], -by_pk[t[1]].created.timestamp(), -t[1]))
    return [{"incident": by_pk[pk], "score": score, "shared": shared} for score, pk, shared in scored[:limit]]
