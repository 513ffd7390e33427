"""Runbooks and their symptoms from the database back to files
(runbooks/<slug>.md and runbooks/symptoms/<id>.yaml)."""

from __future__ import annotations

from pathlib import Path

from analyzers.runbooks import SYMPTOMS_DIR, RunbookError, dump_runbook, parse_runbook
from kb.models import Runbook, Symptom
from kb.services.runbooks import meta_to_json
from kb.services.symptoms import db_library, symptom_text


def runbook_text(*, runbook: Runbook, canonical: bool = False) -> str:
    """The Markdown file of a runbook.

    The latest revision is the file as it was written (comments, quoting and
    key order kept), so it is preferred while it still says what the row
    says; otherwise, or with canonical=True, the file is rebuilt from
    meta and body with analyzers.runbooks.dump_runbook.
    """
    if not canonical:
        last = runbook.revisions.order_by("-number").first()
        if last is not None:
            try:
                parsed = parse_runbook(last.text, library=db_library())
            except RunbookError:
                parsed = None
            same = parsed is not None and meta_to_json(parsed.meta) == runbook.meta
            if same and parsed.body == runbook.body:
                return last.text
    return dump_runbook(runbook.meta, runbook.body)


def runbook_export(
    *, directory: str | Path, slugs: list[str] | None = None, canonical: bool = False
) -> tuple[list[Path], list[Path]]:
    """Write runbooks (all shipped ones, or the given slugs, a team's own included) to directory/<slug>.md and
    the symptoms they use to directory/symptoms/<id>.yaml (with no slugs
    given: every symptom of the library). Returns both lists of paths."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    # The shipped catalog; a team's own runbook only when named (to review it into runbooks/,
    # e.g. one drafted from a lead); an overlay never: it is an edit of a shipped file.
    runbooks = Runbook.objects.filter(overlay_of__isnull=True).order_by("slug")
    symptoms = Symptom.objects.order_by("id")
    if slugs is None:   # the shipped catalog: the library's symptoms only, no team's own
        runbooks, symptoms = runbooks.filter(team__isnull=True), symptoms.filter(team__isnull=True)
    else:
        runbooks = runbooks.filter(slug__in=slugs)
        symptoms = symptoms.filter(uses__runbook__slug__in=slugs).distinct()
    written = []
    for runbook in runbooks:
        path = directory / f"{runbook.slug}.md"
        path.write_text(runbook_text(runbook=runbook, canonical=canonical), encoding="utf-8")
        written.append(path)
    symptom_dir = directory / SYMPTOMS_DIR
    symptom_dir.mkdir(exist_ok=True)
    symptom_paths = []
    for symptom in symptoms:
        path = symptom_dir / f"{symptom.id}.yaml"
        path.write_text(symptom_text(symptom=symptom), encoding="utf-8")
        symptom_paths.append(path)
    return written, symptom_paths
