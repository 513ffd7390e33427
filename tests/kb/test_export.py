from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command

from analyzers.runbooks import load_runbooks, parse_runbook
from kb.models import Runbook
from kb.services.export import runbook_text
from kb.services.symptoms import db_library

pytestmark = pytest.mark.django_db


def _export(directory, *extra: str) -> str:
    out = StringIO()
    call_command("export_runbooks", "--dir", str(directory), *extra, stdout=out)
    return out.getvalue()


@pytest.mark.parametrize("canonical", [False, True])
def test_it_round_trips_file_to_database_to_file(synced, runbooks_dir, tmp_path, canonical):
    target = tmp_path / "exported"

    out = _export(target, *(["--canonical"] if canonical else []))

    assert "3 runbooks and 4 symptoms written" in out
    original = load_runbooks(runbooks_dir)
    exported = load_runbooks(target)
    assert set(exported.runbooks) == set(original.runbooks)
    assert exported.symptoms == original.symptoms
    for slug, rb in original.runbooks.items():
        assert exported.runbooks[slug].meta == rb.meta
        assert exported.runbooks[slug].body == rb.body


def test_it_exports_the_file_as_written_when_it_still_matches(synced, runbooks_dir, tmp_path):
    _export(tmp_path)

    # Comments and quoting survive: the exported file is byte-identical.
    for path in runbooks_dir.glob("*-*.md"):
        assert (tmp_path / path.name).read_text() == path.read_text()
    for path in (runbooks_dir / "symptoms").glob("*.yaml"):
        assert (tmp_path / "symptoms" / path.name).read_text() == path.read_text()


def test_it_rebuilds_the_file_from_meta_when_no_revision_matches(synced):
    runbook = Runbook.objects.get(slug="disk-full")
    runbook.revisions.all().delete()

    text = runbook_text(runbook=runbook)

    parsed = parse_runbook(text, expected_slug="disk-full", library=db_library())
    assert parsed.meta == runbook.meta and parsed.body == runbook.body


def test_it_exports_only_the_given_slugs(synced, tmp_path):
    _export(tmp_path, "--slug", "disk-full")

    assert [p.name for p in tmp_path.glob("*.md")] == ["disk-full.md"]
    # ... with the symptoms it uses, and no other.
    assert [p.name for p in (tmp_path / "symptoms").glob("*.yaml")] == ["no-space-left-on-device.yaml"]
