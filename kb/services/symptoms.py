"""The symptom library in the database (runbooks/symptoms/<id>.yaml as rows).

A symptom is defined once and used by runbooks by id. Each using runbook's
`meta` carries a copy of the definition (the form the engine reads), so
saving a symptom rewrites those copies in the same transaction: an author
edits a symptom once and every runbook that uses it follows.
"""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.db.models import QuerySet

from analyzers.runbooks import (
    Library,
    RunbookError,
    dump_symptom,
    parse_runbook,
    parse_symptom,
    resolve_symptoms,
    symptom_uses,
)
from kb.models import Runbook, Symptom, SymptomRevision


class RevisionConflict(RunbookError):
    """The file was saved by someone else since the editor loaded it."""


def revision_check_base(*, last: Any, base_revision: int | None, path: str) -> int:
    """The number of the latest revision, after refusing an edit of an older one."""
    if base_revision is not None and last is not None and last.number != base_revision:
        raise RevisionConflict(
            f"{path}: revision {last.number} was saved after the one you edited "
            f"({base_revision}); reload the page and apply your change again"
        )
    return last.number if last else 0


def symptom_file_path(symptom_id: str) -> str:
    """The path errors name for a symptom edited in the app."""
    return f"runbooks/symptoms/{symptom_id}.yaml"


def symptom_definition(symptom: Symptom) -> dict[str, Any]:
    return {"id": symptom.id, "title": symptom.title, **symptom.definition}


def db_library(symptoms: QuerySet[Symptom] | None = None) -> Library:
    """The symptoms by id: all of them, or `symptoms` (a team's: kb.selectors.catalog.symptom_catalog)."""
    return {s.id: symptom_definition(s) for s in (Symptom.objects.all() if symptoms is None else symptoms)}


def symptom_save(
    *, definition: dict[str, Any], text: str, author: Any = None, message: str = "", team: Any = None
) -> tuple[Symptom, str]:
    """Upsert one parsed symptom; returns (row, "created" | "updated" | "unchanged").
    A new row belongs to `team` (None: the library); an update keeps its owner.
    A revision is recorded only when the file text changed. The caller
    re-resolves the runbooks that use it (runbooks_resolve)."""
    rest = {k: v for k, v in definition.items() if k not in ("id", "title")}
    symptom = Symptom.objects.filter(id=definition["id"]).first()
    last = symptom.revisions.order_by("-number").first() if symptom else None
    content_changed = symptom is None or symptom.title != definition["title"] or symptom.definition != rest
    text_changed = last is None or last.text != text
    if not content_changed and not text_changed:
        return symptom, "unchanged"
    status = "created" if symptom is None else "updated"
    symptom, _ = Symptom.objects.update_or_create(
        id=definition["id"], defaults={"title": definition["title"], "definition": rest},
        create_defaults={"title": definition["title"], "definition": rest, "team": team},
    )
    if text_changed:
        SymptomRevision.objects.create(
            symptom=symptom, number=(last.number + 1) if last else 1, text=text, author=author,
            message=message[:200],
        )
    return symptom, status


def runbooks_resolve(*, symptom_ids: list[str] | set[str], library: Library | None = None) -> int:
    """Rewrite the definition copies in the meta of every runbook using one
    of these symptoms; returns how many runbooks changed."""
    library = library if library is not None else db_library()
    changed = 0
    for runbook in Runbook.objects.filter(symptom_uses__symptom_id__in=list(symptom_ids)).distinct():
        meta = dict(runbook.meta)
        meta["symptoms"] = resolve_symptoms(symptom_uses(runbook.meta)["symptoms"], library)
        if meta != runbook.meta:
            runbook.meta = meta
            runbook.save(update_fields=["meta", "updated"])
            changed += 1
    return changed


def symptom_text(*, symptom: Symptom) -> str:
    """The YAML file of a symptom: the latest revision as written while it
    still says what the row says, else rebuilt from the row."""
    last = symptom.revisions.order_by("-number").first()
    if last is not None:
        try:
            if parse_symptom(last.text, symptom_file_path(symptom.id)) == symptom_definition(symptom):
                return last.text
        except RunbookError:
            pass
    return dump_symptom(symptom_definition(symptom))


def _check_users(symptom_id: str, library: Library, path: str) -> None:
    symptom_users_check(Runbook.objects.filter(symptom_uses__symptom_id=symptom_id).distinct(), library, path)


def symptom_users_check(runbooks, library: Library, path: str) -> None:
    """Every runbook using the symptom (`runbooks`: all of them, or those a team sees) must
    still be valid with its new definition (a `where` condition may name a capture that is gone)."""
    from kb.services.export import runbook_text

    errors: list[str] = []
    for runbook in runbooks:
        try:
            parse_runbook(runbook_text(runbook=runbook), f"runbooks/{runbook.slug}.md", library=library)
        except RunbookError as exc:
            errors.extend(f"{path}: breaks {p}" for p in exc.problems)
    if errors:
        raise RunbookError("\n".join(errors), errors)


def symptom_update(
    *, symptom: Symptom, text: str, author: Any, message: str = "", base_revision: int | None = None
) -> SymptomRevision | None:
    """Save an edited symptom file and follow it in every runbook using it.
    Returns the new revision, or None when nothing changed. Raises
    RunbookError listing every problem."""
    text = text.replace("\r\n", "\n")  # browsers submit textareas with CRLF
    path = symptom_file_path(symptom.id)
    definition = parse_symptom(text, path, expected_id=symptom.id)
    library = db_library()
    library[symptom.id] = definition
    _check_users(symptom.id, library, path)
    with transaction.atomic():
        locked = Symptom.objects.select_for_update().get(pk=symptom.pk)
        before = revision_check_base(last=locked.revisions.order_by("-number").first(),
                                     base_revision=base_revision, path=path)
        saved, _ = symptom_save(definition=definition, text=text, author=author, message=message)
        runbooks_resolve(symptom_ids=[saved.id], library=library)
        return saved.revisions.filter(number__gt=before).order_by("-number").first()

