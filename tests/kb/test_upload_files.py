"""Several files, or a dropped folder, uploaded at once become one bundle of several hosts
(web form and API), analysed in process like any upload."""

from __future__ import annotations

import io
import tarfile

import pytest

from tests.celery_harness import no_broker  # noqa: F401  (fixture)
from tests.helpers import SEED_BUNDLES, bundle_files

pytestmark = pytest.mark.django_db

SEED = SEED_BUNDLES / "000-flink-hdfs-openforwrite-after-soft-lockup"
HOSTS = {"hadoop-080-037", "hadoop-081-159"}


@pytest.fixture
def bundles(settings, tmp_path):
    settings.BUNDLES_DIR = tmp_path / "bundles"
    settings.FILE_UPLOAD_TEMP_DIR = str(tmp_path / "upload-tmp")
    settings.KB_ENGINE = "local"
    (tmp_path / "upload-tmp").mkdir()
    return settings.BUNDLES_DIR


def _named(name: str, data: bytes) -> io.BytesIO:
    f = io.BytesIO(data)
    f.name = name
    return f


def _host_tgz(host: str) -> io.BytesIO:
    """What an operator makes on each host: `tar czf <host>.tgz <host>/`."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        for f in sorted((SEED / host).iterdir()):
            tf.add(f, arcname=f"{host}/{f.name}")
    return _named(f"{host}.tgz", buf.getvalue())


def _run(analysis_id: int) -> dict:
    from kb.models import Analysis
    from kb.services.analyses import analysis_run

    assert analysis_run(analysis_id=analysis_id, owner="h:1:a") is True
    analysis = Analysis.objects.get(id=analysis_id)
    assert analysis.status == "done", analysis.error
    return analysis.result


def test_two_host_archives_in_the_web_form_make_one_bundle_of_both_hosts(
        client_alice, alice, bundles, synced, no_broker, django_capture_on_commit_callbacks):
    from kb.models import Incident

    incident = Incident.objects.create(team=alice.memberships.get().team, title="Lockup", created_by=alice)
    with django_capture_on_commit_callbacks(execute=True):
        response = client_alice.post(f"/incidents/{incident.id}/upload/",
                                     {"file": [_host_tgz(h) for h in sorted(HOSTS)]},
                                     HTTP_X_REQUESTED_WITH="XMLHttpRequest")
    assert response.status_code == 200, response.content
    result = _run(response.json()["analysis"])
    assert {f["host"] for f in result["files"]} == HOSTS
    assert {ev["host"] for f in result["findings"] for ev in f["evidence"]} <= HOSTS
    assert incident.bundles.get().original_name == "hadoop-080-037-and-1-more.zip"


def test_a_folder_dropped_on_the_api_keeps_its_hosts_and_drops_its_wrapper(
        client, alice, bundles, synced, no_broker, django_capture_on_commit_callbacks):
    from kb.services.tokens import token_create

    files = bundle_files(SEED)
    body = {"file": [_named(f.name, f.read_bytes()) for f in files],
            "path": [f"prod2-logs/{f.relative_to(SEED)}" for f in files]}
    token = token_create(user=alice)[1]
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post("/api/v1/analyses", body, HTTP_AUTHORIZATION=f"Bearer {token}")
    assert response.status_code == 202, response.content
    result = _run(response.json()["id"])
    assert sorted(f["path"] for f in result["files"]) == sorted(str(f.relative_to(SEED)) for f in files)
    assert {f["host"] for f in result["files"]} == HOSTS


def test_one_file_is_stored_as_it_is_and_clashing_names_are_both_kept(bundles):
    import zipfile

    from django.core.files.uploadedfile import SimpleUploadedFile as Up

    from kb.services.upload_files import upload_as_one

    one = Up("dn1.log", b"x\n")
    assert upload_as_one(files=[one], paths=[]) is one
    combined = upload_as_one(files=[Up("app.log", b"a\n"), Up("app.log", b"b\n"), Up("c.log", b"c\n")],
                             paths=["", "", "../../etc/c.log"])     # an unsafe path falls back to the name

    with zipfile.ZipFile(combined.file) as zf:
        assert [(i.filename, zf.read(i)) for i in zf.infolist()] == [
            ("app.log", b"a\n"), ("upload-2/app.log", b"b\n"), ("c.log", b"c\n")]
