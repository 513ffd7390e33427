"""runbooks/ -> database (python manage.py sync_runbooks): the symptom
library (runbooks/symptoms/*.yaml) first, then the runbooks that use it."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from django.db import transaction

from analyzers.runbooks import (
    SYMPTOMS_DIR,
    Catalog,
    Library,
    RunbookError,
    check_catalog,
    dump_runbook,
    load_runbooks,
    parse_runbook,
)
from kb.models import Runbook, RunbookRevision, Symptom, SymptomRevision
from kb.services.runbooks import runbook_save
from kb.services.symptoms import runbooks_resolve, symptom_definition, symptom_save


@dataclass
class Counts:
    created: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    # Edited in the app after the file was last loaded: the edit is kept.
    kept: list[str] = field(default_factory=list)

    def line(self, noun: str, where: str) -> str:
        total = len(self.created) + len(self.updated) + len(self.unchanged) + len(self.kept)
        line = (f"{total} {noun} in {where}: {len(self.created)} created, "
                f"{len(self.updated)} updated, {len(self.unchanged)} unchanged")
        if self.kept:
            line += (f"; {len(self.kept)} kept as edited in the app ({', '.join(self.kept)}: "
                     "export_runbooks writes them back, --force takes the files)")
        return line


@dataclass
class SyncResult(Counts):
    directory: str = ""
    symptoms: Counts = field(default_factory=Counts)
    # In the database but not on disk: reported, never deleted by a sync.
    missing: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def summary(self) -> str:
        line = self.line("runbooks", self.directory)
        line += "; " + self.symptoms.line("symptoms", SYMPTOMS_DIR)
        if self.missing:
            line += f"; {len(self.missing)} only in the database (not deleted): {', '.join(self.missing)}"
        return line


def _read_files(directory: Path) -> tuple[Catalog, dict[str, str], dict[str, str]]:
    catalog = load_runbooks(directory)
    texts = {}
    for slug, parsed in catalog.runbooks.items():
        text = Path(parsed.path).read_text(encoding="utf-8")
        again = parse_runbook(text, parsed.path, expected_slug=slug, library=catalog.symptoms)
        if again.meta != parsed.meta or again.body != parsed.body:
            raise RunbookError(f"{parsed.path}: changed while syncing; run the sync again")
        texts[slug] = text
    symptom_texts = {sid: (directory / SYMPTOMS_DIR / f"{sid}.yaml").read_text(encoding="utf-8")
                     for sid in catalog.symptoms}
    return catalog, texts, symptom_texts


def _edited_in_app_since(revisions, text: str) -> bool:
    """True when the newest revision is an edit made in the app and the file
    still holds an older revision: the file is behind, not ahead."""
    last = revisions.order_by("-number").first()
    if last is None or last.author_id is None or last.text == text:
        return False
    return revisions.filter(text=text).exists()


def _library(catalog: Catalog, kept: list[str]) -> Library:
    """The files' library, with the symptoms edited in the app as they are in the database."""
    library = dict(catalog.symptoms)
    for symptom in Symptom.objects.filter(id__in=kept):
        library[symptom.id] = symptom_definition(symptom)
    return library


def _check_kept(catalog: Catalog, texts: dict[str, str], library: Library, kept_runbooks: list[str]) -> Catalog:
    """Files and kept app edits must still form a valid catalog."""
    mixed = Catalog(symptoms=library)
    for slug, rb in catalog.runbooks.items():
        # Parsed against the files' library already; again only when app-edited symptoms replace some of it.
        mixed.runbooks[slug] = rb if library == catalog.symptoms else parse_runbook(
            texts[slug], rb.path, expected_slug=slug, library=library)
    for row in Runbook.objects.filter(slug__in=kept_runbooks, team__isnull=True, overlay_of__isnull=True):
        path = f"{row.slug} (edited in the app)"
        mixed.runbooks[row.slug] = parse_runbook(dump_runbook(row.meta, row.body), path, library=library)
    check_catalog(mixed)
    return mixed


def runbook_sync(*, directory: str | Path, force: bool = False) -> SyncResult:
    """Load the symptom library and every runbook file of `directory` into
    the database, all or nothing.

    Raises RunbookError (naming each file and problem) before writing
    anything when a file is invalid. A runbook or symptom edited in the app
    since its file was loaded keeps the edit unless force=True.
    """
    directory = Path(directory)
    if not directory.is_dir():
        raise RunbookError(f"{directory}: not a directory")
    catalog, texts, symptom_texts = _read_files(directory)

    result = SyncResult(directory=str(directory), warnings=list(catalog.warnings))
    if not force:
        result.kept = [slug for slug in catalog.runbooks if _edited_in_app_since(
            RunbookRevision.objects.filter(runbook__slug=slug, runbook__team__isnull=True,
                                          runbook__overlay_of__isnull=True), texts[slug])]
        result.symptoms.kept = [sid for sid in catalog.symptoms if _edited_in_app_since(
            SymptomRevision.objects.filter(symptom_id=sid), symptom_texts[sid])]
    library = _library(catalog, result.symptoms.kept)
    try:
        mixed = _check_kept(catalog, texts, library, result.kept)
    except RunbookError as exc:
        raise RunbookError(f"{exc}; run with --force to take the files") from None

    with transaction.atomic():
        for sid, definition in catalog.symptoms.items():
            if sid not in result.symptoms.kept:
                _, status = symptom_save(definition=definition, text=symptom_texts[sid], message="sync_runbooks")
                getattr(result.symptoms, status).append(sid)
        for slug in catalog.runbooks:
            if slug not in result.kept:
                _, status = runbook_save(parsed=mixed.runbooks[slug], text=texts[slug], message="sync_runbooks")
                getattr(result, status).append(slug)
        # A team's symptom reviewed into runbooks/symptoms/ is the library's now, every team's.
        Symptom.objects.filter(id__in=list(catalog.symptoms), team__isnull=False).update(team=None, published=False)
        runbooks_resolve(symptom_ids=result.symptoms.created + result.symptoms.updated, library=library)
        result.missing = list(
            Runbook.objects.filter(team__isnull=True, overlay_of__isnull=True)
            .exclude(slug__in=list(catalog.runbooks)).values_list("slug", flat=True)
        )
    return result
