"""Reads for the pages (HackSoft selectors): views call these, templates only format."""

from __future__ import annotations

from typing import Any

from django.db.models import Case, IntegerField, Q, QuerySet, Value, When

from kb.models import Runbook, RunbookRevision, RunbookSymptom, Team
from kb.models.runbooks import SEVERITY_ORDER
from kb.selectors.catalog import runbook_catalog
from kb.services.symptom_overlays import symptom_as_seen
from kb.lib.markdown import markdown_render
from kb.lib.revisions import DiffLine, revision_diff
from kb.selectors.calibration import runbook_precision

FIX_KIND_LABELS = {"diagnosis": "Diagnose", "mitigation": "Mitigate now", "permanent": "Permanent fix"}


def with_component(qs: QuerySet[Runbook], component: str) -> QuerySet[Runbook]:
    """The rows of `qs` whose components include the whole token `component` (all when empty)."""
    if not component:
        return qs
    return qs.filter(
        Q(components=component)
        | Q(components__startswith=f"{component},")
        | Q(components__endswith=f",{component}")
        | Q(components__contains=f",{component},")
    )


def runbook_list(*, team: Team | None, component: str = "", severity: str = "") -> QuerySet[Runbook]:
    """The runbooks `team` sees, most severe first; filtered by a whole component token and a severity."""
    qs = with_component(runbook_catalog(team=team), component)
    if severity:
        qs = qs.filter(severity=severity)
    rank = Case(
        *(When(severity=s, then=Value(i)) for i, s in enumerate(SEVERITY_ORDER)),
        default=Value(len(SEVERITY_ORDER)), output_field=IntegerField(),
    )
    return qs.annotate(severity_rank=rank).order_by("severity_rank", "slug")


def runbook_recent(*, team: Team | None, limit: int = 10) -> QuerySet[Runbook]:
    return runbook_catalog(team=team).order_by("-updated", "slug")[:limit]



def runbook_detail(*, runbook: Runbook, team: Team | None) -> dict[str, Any]:
    """Everything the detail page shows besides the row itself; other runbooks
    only as far as `team` sees them."""
    catalog = runbook_catalog(team=team)
    uses = list(runbook.symptom_uses.select_related("symptom"))
    shared = RunbookSymptom.objects.filter(symptom_id__in=[u.symptom_id for u in uses],
                                           runbook__in=catalog).exclude(
        runbook=runbook
    ).select_related("runbook").order_by("runbook__slug")
    others: dict[str, list[RunbookSymptom]] = {}
    for use in shared:
        others.setdefault(use.symptom_id, []).append(use)
    fixes = list(runbook.fixes.prefetch_related("steps"))
    fix_groups = [
        {"kind": kind, "label": label, "fixes": [f for f in fixes if f.kind == kind]}
        for kind, label in FIX_KIND_LABELS.items()
    ]
    # `burst` lives in the front matter only (no column): read it from there.
    bursts = {s["id"]: s["burst"] for s in runbook.meta.get("symptoms") or [] if s.get("burst")}
    slugs = set(catalog.filter(
        slug__in=[d["slug"] for d in runbook.meta.get("differential") or []]
    ).values_list("slug", flat=True))
    return {
        "body_html": markdown_render(text=runbook.body),
        "symptoms": [{"use": u, "symptom": symptom_as_seen(symptom=u.symptom, team=team),
                      "others": others.get(u.symptom_id, []), "burst": bursts.get(u.symptom_id)} for u in uses],
        "knobs": list(runbook.knobs.all()),
        "fix_groups": [g for g in fix_groups if g["fixes"]],
        "tickets": list(runbook.tickets.all()),
        "references": list(runbook.references.all()),
        "differential": [
            {"slug": d["slug"], "how": d.get("how", ""), "known": d["slug"] in slugs}
            for d in runbook.meta.get("differential") or []
        ],
        "affected_versions": runbook.meta.get("affected_versions") or [],
        "relations": runbook.meta.get("relations") or [],
        "chain": runbook.meta.get("chain") or [],
        "precision": runbook_precision(slug=runbook.slug),
        **_links(runbook, catalog),
    }


def _links(runbook: Runbook, catalog: QuerySet[Runbook]) -> dict[str, list[dict[str, Any]]]:
    """The runbook's leads_to links and the other runbooks' links to it (ranking,
    runbooks/README.md), among the runbooks the viewer's team sees (`catalog`):
    another team's overlay or unpublished runbook linking here stays out."""
    metas = dict(catalog.values_list("slug", "meta"))
    leads_to = [{**link, "known": link["slug"] in metas} for link in runbook.meta.get("leads_to") or []]
    led_from = [{**link, "slug": slug} for slug, meta in sorted(metas.items()) if slug != runbook.slug
                for link in (meta or {}).get("leads_to") or [] if link.get("slug") == runbook.slug]
    return {"leads_to": leads_to, "led_from": led_from}


def revision_latest(*, runbook: Runbook) -> RunbookRevision | None:
    return runbook.revisions.order_by("-number").first()


def revision_list(*, runbook: Runbook) -> QuerySet[RunbookRevision]:
    return runbook.revisions.select_related("author").order_by("-number")


def revision_compare(
    *, runbook: Runbook, a: int | None = None, b: int | None = None
) -> tuple[RunbookRevision | None, RunbookRevision | None, list[DiffLine]]:
    """Revisions a (older) and b (newer) of a runbook and their diff.
    Defaults: b is the latest revision and a the one before it."""
    revisions = runbook.revisions.order_by("-number")
    new = revisions.filter(number=b).first() if b else revisions.first()
    if new is None:
        return None, None, []
    old = revisions.filter(number=a).first() if a else revisions.filter(number__lt=new.number).first()
    if old is None:
        return None, new, []
    diff = revision_diff(
        old=old.text, new=new.text, old_label=f"r{old.number}", new_label=f"r{new.number}"
    )
    return old, new, diff
