"""Reads for team work (HackSoft selectors): the activity stream, annotations,
runbook field notes, finding feedback, follows, and incident lists narrowed
or ranked by their root causes. The writes are in kb.services.collab."""

from __future__ import annotations

from typing import Any

from django.db.models import Count, Q, QuerySet

from kb.access import visible
from kb.models import Activity, Analysis, Annotation, Finding, FindingFeedback, Follow, Incident, Runbook, RunbookNote, Team


def activity_list(*, incident: Incident, limit: int = 50) -> QuerySet[Activity]:
    return Activity.objects.filter(incident=incident).select_related("actor")[:limit]


def finding_slugs(*, analysis: Analysis) -> set[str]:
    slugs = set(Finding.objects.filter(analysis=analysis).values_list("slug", flat=True))
    slugs.update(f.get("runbook") for f in (analysis.result or {}).get("findings") or [] if isinstance(f, dict))
    slugs.discard(None)
    return slugs


def annotation_target_label(annotation: Annotation) -> str:
    if annotation.kind == "evidence":
        return f"{annotation.evidence_path}:{annotation.evidence_line}"
    if annotation.kind == "finding":
        return annotation.finding_slug
    if annotation.kind == "analysis":
        return f"analysis #{annotation.analysis_id}"
    return "the incident"


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


def runbook_note_list(*, runbook: Runbook, user: Any) -> QuerySet[RunbookNote]:
    """The field notes of the user's teams on this runbook, newest first."""
    return visible(RunbookNote.objects.filter(runbook=runbook), user).select_related("author", "team")


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


def is_following(*, incident: Incident, user: Any) -> bool:
    return Follow.objects.filter(incident=incident, user=user).exists()


def _runbooks_with_component(component: str) -> QuerySet[Runbook]:
    # Only slugs to narrow the user's own incidents by: every row may answer.
    from kb.selectors.runbooks import with_component

    return with_component(Runbook.objects.all(), component)


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


def similar_incidents(*, incident: Incident, user: Any, limit: int = 5) -> list[dict[str, Any]]:
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
