from __future__ import annotations

from io import StringIO
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import CommandError, call_command

from kb.models import Fix, FixStep, Knob, Reference, Runbook, RunbookRevision, RunbookSymptom, Symptom, Ticket

pytestmark = pytest.mark.django_db

ALL_MODELS = [Runbook, Symptom, RunbookSymptom, Knob, Fix, FixStep, Ticket, Reference, RunbookRevision]


def _snapshot() -> dict[str, list]:
    return {m.__name__: sorted(m.objects.values_list("pk", flat=True)) for m in ALL_MODELS}


def _sync(directory: Path) -> str:
    out = StringIO()
    call_command("sync_runbooks", "--dir", str(directory), stdout=out)
    return out.getvalue()


def test_it_loads_every_file_with_its_derived_rows(runbooks_dir):
    out = _sync(runbooks_dir)

    assert "3 runbooks" in out and "3 created" in out
    assert out.count("\n") == 1  # one summary line
    assert set(Runbook.objects.values_list("slug", flat=True)) == {
        "disk-full", "jvm-long-gc-pause", "kernel-soft-lockup-stalls-jvm"
    }
    disk = Runbook.objects.get(slug="disk-full")
    assert disk.components == "os,hdfs"
    assert disk.severity == "high"
    assert disk.meta["knobs"][0]["key"] == "dfs.datanode.du.reserved"
    assert disk.body.startswith("## Summary")
    assert disk.knobs.get().recommended == "10737418240"
    assert [f.kind for f in disk.fixes.all()] == ["diagnosis", "mitigation"]
    assert disk.fixes.first().steps.get().command == "df -h /data"
    assert disk.tickets.get().key == "HDFS-1234"
    assert disk.references.count() == 1
    # The shared symptom is one row used by two runbooks.
    shared = Symptom.objects.get(id="flink-tm-heartbeat-timeout")
    assert shared.uses.count() == 2
    assert shared.definition["patterns"] == [r"Heartbeat of TaskManager with id \S+ timed out"]
    assert RunbookRevision.objects.filter(number=1).count() == 3


def test_it_is_idempotent(runbooks_dir):
    _sync(runbooks_dir)
    before = _snapshot()

    out = _sync(runbooks_dir)

    # Same rows (same primary keys), and no new revision.
    assert _snapshot() == before
    assert "3 unchanged" in out
    assert RunbookRevision.objects.count() == 3


def test_it_records_a_revision_when_a_file_changes(runbooks_dir):
    _sync(runbooks_dir)
    path = runbooks_dir / "disk-full.md"
    path.write_text(path.read_text().replace("severity: high", "severity: critical"))

    out = _sync(runbooks_dir)

    assert "1 updated" in out and "2 unchanged" in out
    disk = Runbook.objects.get(slug="disk-full")
    assert disk.severity == "critical"
    assert list(disk.revisions.values_list("number", flat=True)) == [2, 1]
    assert disk.revisions.get(number=2).text == path.read_text()


def test_it_reports_a_runbook_removed_from_disk_without_deleting_it(runbooks_dir):
    _sync(runbooks_dir)
    (runbooks_dir / "disk-full.md").unlink()

    out = _sync(runbooks_dir)

    assert "only in the database" in out and "disk-full" in out
    assert Runbook.objects.filter(slug="disk-full").exists()


def test_it_refuses_an_invalid_file_naming_it_and_writes_nothing(runbooks_dir):
    bad = runbooks_dir / "zz-broken.md"
    bad.write_text(
        (runbooks_dir / "disk-full.md").read_text()
        .replace("slug: disk-full", "slug: zz-broken")
        .replace("severity: high", "severity: catastrophic")
    )

    with pytest.raises(CommandError) as excinfo:
        _sync(runbooks_dir)

    message = str(excinfo.value)
    assert "zz-broken.md" in message and "severity" in message
    assert excinfo.value.returncode == 1
    # The valid files sort before the broken one: still nothing was written.
    assert _snapshot() == {m.__name__: [] for m in ALL_MODELS}


def test_it_keeps_the_database_as_it_was_when_a_later_sync_is_invalid(runbooks_dir):
    _sync(runbooks_dir)
    before = _snapshot()
    path = runbooks_dir / "jvm-long-gc-pause.md"
    # A shared symptom defined differently in two files: a cross-file error.
    path.write_text(path.read_text().replace(r"id \S+ timed out", r"id \S+ has timed out"))

    with pytest.raises(CommandError) as excinfo:
        _sync(runbooks_dir)

    assert "flink-tm-heartbeat-timeout" in str(excinfo.value)
    assert _snapshot() == before


def _edit_in_app(slug: str, old: str, new: str) -> None:
    from django.contrib.auth import get_user_model

    from kb.services.export import runbook_text
    from kb.services.runbooks import runbook_update

    editor = get_user_model().objects.create_user("editor")
    runbook = Runbook.objects.get(slug=slug)
    runbook_update(runbook=runbook, text=runbook_text(runbook=runbook).replace(old, new), author=editor)


def test_it_keeps_an_edit_made_in_the_app_since_the_file_was_loaded(runbooks_dir):
    _sync(runbooks_dir)
    _edit_in_app("disk-full", "severity: high", "severity: low")

    out = _sync(runbooks_dir)

    assert "1 kept as edited in the app (disk-full" in out
    disk = Runbook.objects.get(slug="disk-full")
    assert disk.severity == "low" and disk.revisions.count() == 2


def test_it_takes_the_files_over_app_edits_with_force(runbooks_dir):
    _sync(runbooks_dir)
    _edit_in_app("disk-full", "severity: high", "severity: low")

    call_command("sync_runbooks", "--dir", str(runbooks_dir), "--force", stdout=StringIO())

    disk = Runbook.objects.get(slug="disk-full")
    assert disk.severity == "high"
    assert disk.revisions.first().text == (runbooks_dir / "disk-full.md").read_text()


def test_it_takes_a_file_changed_after_an_app_edit(runbooks_dir):
    _sync(runbooks_dir)
    _edit_in_app("disk-full", "severity: high", "severity: low")
    path = runbooks_dir / "disk-full.md"
    path.write_text(path.read_text().replace("severity: high", "severity: medium"))

    out = _sync(runbooks_dir)

    assert "1 updated" in out
    assert Runbook.objects.get(slug="disk-full").severity == "medium"


def _with_symptom(pattern: str) -> str:
    return (
        "symptoms:\n  - id: new-shared\n    title: New\n"
        f"    patterns: ['{pattern}']\n    role: supporting\n    weight: 0.1\n"
    )


def test_it_refuses_an_app_edit_that_no_longer_agrees_with_the_files(runbooks_dir):
    _sync(runbooks_dir)
    _edit_in_app("jvm-long-gc-pause", "symptoms:\n", _with_symptom("foo bar"))
    # The files add the same symptom id with another pattern elsewhere.
    path = runbooks_dir / "kernel-soft-lockup-stalls-jvm.md"
    path.write_text(path.read_text().replace("symptoms:\n", _with_symptom("foo baz")))
    before = _snapshot()

    with pytest.raises(CommandError, match="new-shared.*--force"):
        _sync(runbooks_dir)

    assert _snapshot() == before


def test_it_refuses_a_missing_directory(tmp_path):
    with pytest.raises(CommandError, match="not a directory"):
        _sync(tmp_path / "nope")


def test_it_loads_the_real_runbooks_directory():
    directory = Path(settings.BASE_DIR) / "runbooks"
    slugs = sorted(p.stem for p in directory.glob("*.md") if p.name.lower() != "readme.md")
    if not slugs:
        pytest.skip("runbooks/ has no runbook files yet")

    _sync(directory)

    assert set(slugs) <= set(Runbook.objects.values_list("slug", flat=True))
