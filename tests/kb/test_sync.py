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

    assert "3 runbooks" in out and "3 created" in out and "4 symptoms in symptoms: 4 created" in out
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
    # A runbook using a symptom the library does not define: a cross-file error.
    path.write_text(path.read_text().replace("id: flink-tm-heartbeat-timeout", "id: flink-tm-heartbeat-lost"))

    with pytest.raises(CommandError) as excinfo:
        _sync(runbooks_dir)

    assert "unknown symptom: no runbooks/symptoms/flink-tm-heartbeat-lost.yaml" in str(excinfo.value)
    assert _snapshot() == before


def test_a_symptom_is_defined_once_and_every_runbook_using_it_follows(runbooks_dir):
    _sync(runbooks_dir)
    path = runbooks_dir / "symptoms" / "flink-tm-heartbeat-timeout.yaml"
    path.write_text(path.read_text().replace(r"id \S+ timed out", r"id \S+ (?:has )?timed out"))

    out = _sync(runbooks_dir)

    assert "3 unchanged" in out and "1 updated" in out  # runbook files unchanged, one symptom updated
    for slug in ("jvm-long-gc-pause", "kernel-soft-lockup-stalls-jvm"):
        (use,) = [s for s in Runbook.objects.get(slug=slug).meta["symptoms"] if s["id"] == "flink-tm-heartbeat-timeout"]
        assert use["patterns"] == [r"Heartbeat of TaskManager with id \S+ (?:has )?timed out"]
        assert use["role"] == "supporting"
    assert Symptom.objects.get(id="flink-tm-heartbeat-timeout").revisions.count() == 2


def test_it_reports_every_problem_of_every_file_at_once(runbooks_dir):
    path = runbooks_dir / "disk-full.md"
    path.write_text(path.read_text().replace("severity: high", "severity: huge").replace("kind: diagnosis", "kind: guess"))
    sym = runbooks_dir / "symptoms" / "kernel-soft-lockup.yaml"
    sym.write_text(sym.read_text().replace("stuck_s: s", "stuck_s: seconds"))

    with pytest.raises(CommandError) as excinfo:
        _sync(runbooks_dir)

    message = str(excinfo.value)
    assert "disk-full.md: severity" in message and "disk-full.md: fixes[0]: kind" in message
    assert "kernel-soft-lockup.yaml: captures: capture 'stuck_s' has unknown type 'seconds'" in message


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


def test_it_refuses_an_app_edit_that_no_longer_agrees_with_the_files(runbooks_dir):
    _sync(runbooks_dir)
    # The app edit adds a condition on the pause symptom's capture ...
    _edit_in_app("jvm-long-gc-pause", "{id: jvm-pause-detected, role: required, weight: 0.6}",
                 "{id: jvm-pause-detected, role: required, weight: 0.6, where: [{capture: pause_ms, op: '>=', value: 5000}]}")
    # ... and the files rename that capture.
    path = runbooks_dir / "symptoms" / "jvm-pause-detected.yaml"
    path.write_text(path.read_text().replace("pause_ms", "paused_ms"))
    before = _snapshot()

    with pytest.raises(CommandError, match="pause_ms.*--force"):
        _sync(runbooks_dir)

    assert _snapshot() == before


def test_it_keeps_a_symptom_edited_in_the_app(runbooks_dir):
    from django.contrib.auth import get_user_model

    from kb.services.symptoms import symptom_text, symptom_update

    _sync(runbooks_dir)
    symptom = Symptom.objects.get(id="kernel-soft-lockup")
    symptom_update(symptom=symptom, author=get_user_model().objects.create_user("editor"),
                   text=symptom_text(symptom=symptom).replace("title: Kernel soft lockup", "title: Soft lockup"))

    out = _sync(runbooks_dir)

    assert "1 kept as edited in the app (kernel-soft-lockup" in out
    assert Symptom.objects.get(id="kernel-soft-lockup").title == "Soft lockup"


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
