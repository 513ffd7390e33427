"""Saving runbooks (from a file sync or an edit in the app). The derived
tables (symptoms, knobs, fixes, tickets, references) are rebuilt from `meta`
here, on every save that changes the content.
"""

from __future__ import annotations

import json
from typing import Any

from django.db import transaction

from analyzers.runbook_links import link_problems
from analyzers.runbooks import RunbookError, parse_runbook
from analyzers.runbooks import Runbook as ParsedRunbook
from kb.models import Fix, FixStep, Knob, Reference, Runbook, RunbookRevision, RunbookSymptom, Symptom, Ticket
from kb.services.symptoms import db_library, revision_check_base


def runbook_file_path(slug: str) -> str:
    """The path errors name for a runbook edited in the app."""
    return f"runbooks/{slug}.md"


def meta_to_json(meta: dict[str, Any]) -> dict[str, Any]:
    # YAML may produce dates; the JSON column (and the engine) want plain data.
    return json.loads(json.dumps(meta, default=str))


def runbook_save(
    *, parsed: ParsedRunbook, text: str, author: Any = None, message: str = "", row: Runbook | None = None
) -> tuple[Runbook, str]:
    """Upsert one parsed runbook; returns (row, "created" | "updated" | "unchanged").

    `row` is the row to write (an overlay, a team runbook, a new unsaved row);
    without it, the shipped runbook of that slug (a file sync). A new revision
    is recorded only when the file text changed.
    """
    meta = meta_to_json(parsed.meta)
    if row is None:
        row = Runbook.objects.filter(slug=parsed.slug, overlay_of__isnull=True).first()
        if row is not None and row.team_id is not None:
            raise RunbookError(f"{runbook_file_path(parsed.slug)}: the slug is taken by a team's own runbook "
                               "(rename the file, or have a maintainer rename that runbook)")
    runbook = row if row is not None and row.pk is not None else None
    last = runbook.revisions.order_by("-number").first() if runbook else None
    content_changed = runbook is None or runbook.meta != meta or runbook.body != parsed.body
    text_changed = last is None or last.text != text
    if not content_changed and not text_changed:
        return runbook, "unchanged"

    status = "created" if runbook is None else "updated"
    runbook = runbook or row or Runbook(slug=parsed.slug)
    runbook.title = meta["title"]
    runbook.summary = meta["summary"]
    runbook.components = ",".join(meta["components"])
    runbook.severity = meta["severity"]
    runbook.meta = meta
    runbook.body = parsed.body
    runbook.save()
    if content_changed:
        _derive_tables(runbook)
    if text_changed:
        RunbookRevision.objects.create(
            runbook=runbook,
            number=(last.number + 1) if last else 1,
            text=text,
            author=author,
            message=message[:200],
        )
    return runbook, status


def _derive_tables(runbook: Runbook) -> None:
    meta = runbook.meta
    for related in (runbook.symptom_uses, runbook.knobs, runbook.fixes, runbook.tickets, runbook.references):
        related.all().delete()
    # The symptoms themselves are library rows, saved before the runbooks that use them.
    symptoms = Symptom.objects.in_bulk([s["id"] for s in meta["symptoms"]])
    RunbookSymptom.objects.bulk_create(
        RunbookSymptom(
            runbook=runbook, symptom=symptoms[s["id"]], role=s["role"], weight=s.get("weight", 0.0),
            where=s.get("where") or [], position=i,
        )
        for i, s in enumerate(meta["symptoms"])
    )
    Knob.objects.bulk_create(
        Knob(
            runbook=runbook, key=k["key"], component=k.get("component", ""), file=k.get("file", ""),
            default=k["default"], defaults=k.get("defaults") or [], recommended=k["recommended"],
            why=k["why"], position=i,
        )
        for i, k in enumerate(meta.get("knobs") or [])
    )
    for i, f in enumerate(meta["fixes"]):
        fix = Fix.objects.create(runbook=runbook, title=f["title"], kind=f["kind"], position=i)
        FixStep.objects.bulk_create(
            FixStep(fix=fix, text=st["text"], command=st.get("command") or "", position=j)
            for j, st in enumerate(f["steps"])
        )
    Ticket.objects.bulk_create(
        Ticket(
            runbook=runbook, key=str(t["id"]), title=t["title"], status=t["status"],
            affected=str(t.get("affected") or ""), fixed_in=[str(v) for v in t.get("fixed_in") or []],
            url=t.get("url") or "", position=i,
        )
        for i, t in enumerate(meta.get("tickets") or [])
    )
    Reference.objects.bulk_create(
        Reference(runbook=runbook, title=r["title"], url=r["url"], position=i)
        for i, r in enumerate(meta.get("references") or [])
    )


def check_links(parsed: ParsedRunbook, path: str, team_id: int | None) -> None:
    """The cross-file checks of analyzers.runbooks.check_catalog (differential and
    leads_to name known runbooks, no ranking cycle), for one edited runbook
    against the other runbooks its team sees (kb.selectors.catalog)."""
    from kb.selectors.catalog import runbook_catalog

    metas = dict(runbook_catalog(team=team_id).values_list("slug", "meta"))
    metas[parsed.slug] = parsed.meta
    # Another runbook's link to one this team does not see (a published team runbook
    # naming its team's unpublished one) is not this edit's to fix: left out.
    metas = {slug: meta if slug == parsed.slug else
             {**meta, "leads_to": [x for x in meta.get("leads_to") or [] if x["slug"] in metas]}
             for slug, meta in metas.items()}
    for d in parsed.meta.get("differential") or []:
        if d["slug"] not in metas:
            raise RunbookError(f"{path}: differential names unknown runbook '{d['slug']}'")
    problems = link_problems(metas, {parsed.slug: path})
    if problems:
        raise RunbookError("\n".join(problems), problems)


def runbook_update(
    *, runbook: Runbook, text: str, author: Any, message: str = "", base_revision: int | None = None
) -> RunbookRevision | None:
    """Save an edited Markdown file into this very row (shipped, overlay or team
    runbook: who may is kb.access's and kb.services.governance's business).
    Returns the new revision, or None when the text did not change. Raises
    RunbookError with the reason."""
    parsed, text = runbook_parse_edit(text=text, slug=runbook.slug, team_id=runbook.team_id)
    with transaction.atomic():
        locked = Runbook.objects.select_for_update().get(pk=runbook.pk)
        before = revision_check_base(last=locked.revisions.order_by("-number").first(),
                                     base_revision=base_revision, path=runbook_file_path(runbook.slug))
        saved, _ = runbook_save(parsed=parsed, text=text, author=author, message=message, row=locked)
        return saved.revisions.filter(number__gt=before).order_by("-number").first()


def runbook_parse_edit(*, text: str, slug: str | None, team_id: int | None) -> tuple[ParsedRunbook, str]:
    """An edited file, validated as the runbook `slug` (None: the file names
    its slug) of the catalog `team_id` sees; (parsed, text with LF endings)."""
    text = text.replace("\r\n", "\n")  # browsers submit textareas with CRLF
    from kb.selectors.catalog import symptom_catalog

    # Only the symptoms the team sees: naming another team's unpublished symptom would copy its words in.
    library = db_library(symptom_catalog(team=team_id))
    parsed = parse_runbook(text, runbook_file_path(slug or "new"), expected_slug=slug, library=library)
    check_links(parsed, runbook_file_path(parsed.slug), team_id)
    return parsed, text
