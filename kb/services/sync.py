"""runbooks/*.md -> database (python manage.py sync_runbooks)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from django.db import transaction

from analyzers.runbooks import Catalog, RunbookError, check_catalog, load_runbooks, parse_runbook
from analyzers.runbooks import Runbook as ParsedRunbook
from kb.models import Runbook, RunbookRevision
from kb.services.runbooks import runbook_save


@dataclass
class SyncResult:
    directory: str
    created: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    # Edited in the app after the file was last loaded: the edit is kept.
    kept: list[str] = field(default_factory=list)
    # In the database but not on disk: reported, never deleted by a sync.
    missing: list[str] = field(default_factory=list)

    def summary(self) -> str:
        total = len(self.created) + len(self.updated) + len(self.unchanged) + len(self.kept)
        line = (
            f"{total} runbooks in {self.directory}: {len(self.created)} created, "
            f"{len(self.updated)} updated, {len(self.unchanged)} unchanged"
        )
        if self.kept:
            line += (
                f"; {len(self.kept)} kept as edited in the app ({', '.join(self.kept)}: "
                "export_runbooks writes them back, --force takes the files)"
            )
        if self.missing:
            line += f"; {len(self.missing)} only in the database (not deleted): {', '.join(self.missing)}"
        return line


def _read_files(directory: Path) -> tuple[Catalog, dict[str, str]]:
    catalog = load_runbooks(directory)
    texts = {}
    for slug, parsed in catalog.runbooks.items():
        text = Path(parsed.path).read_text(encoding="utf-8")
        again = parse_runbook(text, parsed.path, expected_slug=slug)
        if again.meta != parsed.meta or again.body != parsed.body:
            raise RunbookError(f"{parsed.path}: changed while syncing; run the sync again")
        texts[slug] = text
    return catalog, texts


def _edited_in_app_since(slug: str, text: str) -> bool:
    """True when the newest revision is an edit made in the app and the file
    still holds an older revision: the file is behind, not ahead."""
    last = RunbookRevision.objects.filter(runbook__slug=slug).order_by("-number").first()
    if last is None or last.author_id is None or last.text == text:
        return False
    return RunbookRevision.objects.filter(runbook__slug=slug, text=text).exists()


def runbook_sync(*, directory: str | Path, force: bool = False) -> SyncResult:
    """Load every runbook file of `directory` into the database, all or nothing.

    Raises RunbookError (naming the file and the reason) before writing
    anything when a file is invalid. A runbook edited in the app since its
    file was loaded keeps the edit unless force=True.
    """
    directory = Path(directory)
    if not directory.is_dir():
        raise RunbookError(f"{directory}: not a directory")
    catalog, texts = _read_files(directory)

    result = SyncResult(directory=str(directory))
    if not force:
        result.kept = [slug for slug in catalog.runbooks if _edited_in_app_since(slug, texts[slug])]
    if result.kept:
        # The kept edits and the files must still agree on shared symptoms.
        mixed = Catalog(dict(catalog.runbooks))
        for rb in Runbook.objects.filter(slug__in=result.kept):
            mixed.runbooks[rb.slug] = ParsedRunbook(rb.slug, rb.meta, rb.body, f"{rb.slug} (edited in the app)")
        try:
            check_catalog(mixed)
        except RunbookError as exc:
            raise RunbookError(f"{exc}; run with --force to take the files") from None

    with transaction.atomic():
        for slug, parsed in catalog.runbooks.items():
            if slug in result.kept:
                continue
            _, status = runbook_save(parsed=parsed, text=texts[slug], message="sync_runbooks")
            getattr(result, status).append(slug)
        result.missing = list(
            Runbook.objects.exclude(slug__in=list(catalog.runbooks)).values_list("slug", flat=True)
        )
    return result
