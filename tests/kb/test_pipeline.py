"""The pipeline's services and pages without a worker: upload limits, the
claim/lease/reconcile rules, an analysis run in process, the progress partial,
ensure_login. The worker itself is in test_pipeline_worker.py."""

from __future__ import annotations

import io
import os
import stat
import subprocess
import sys
from datetime import timedelta

import pytest
from django.utils import timezone

from tests.celery_harness import no_broker  # noqa: F401  (fixture)
from tests.helpers import ROOT

pytestmark = pytest.mark.django_db

DISK_FULL_LOG = (
    "2024-03-01 10:00:00,000 INFO org.apache.hadoop.hdfs.server.datanode.DataNode: starting\n"
    "2024-03-01 10:00:01,000 ERROR org.apache.hadoop.hdfs.server.datanode.DataNode: "
    "java.io.IOException: No space left on device\n"
)


@pytest.fixture
def bundles(settings, tmp_path):
    settings.BUNDLES_DIR = tmp_path / "bundles"
    settings.FILE_UPLOAD_TEMP_DIR = str(tmp_path / "upload-tmp")
    settings.KB_ENGINE = "local"
    os.makedirs(settings.FILE_UPLOAD_TEMP_DIR)
    return settings.BUNDLES_DIR


@pytest.fixture
def incident(alice):
    from kb.models import Incident

    return Incident.objects.create(team=alice.memberships.get().team, title="Disk", created_by=alice)


def _file(name: str, data: bytes):
    f = io.BytesIO(data)
    f.name = name
    return f


def _stored(incident, bundles, name="dn1-datanode.log", data=DISK_FULL_LOG.encode()):
    from kb.services.bundles import bundle_store
    from django.core.files.uploadedfile import SimpleUploadedFile

    return bundle_store(incident=incident, user=incident.created_by,
                        uploaded_file=SimpleUploadedFile(name, data))


def _queued(incident, bundles, **kwargs):
    from kb.models import Analysis

    bundle = _stored(incident, bundles, **kwargs)
    return Analysis.objects.create(team=bundle.team, bundle=bundle)


# ---------------------------------------------------------------- uploads


def test_bundle_store_copies_under_a_generated_name_with_size_and_hash(incident, bundles):
    import hashlib

    data = DISK_FULL_LOG.encode()
    bundle = _stored(incident, bundles, name="../../etc/<img src=x onerror=alert(1)>.log", data=data)

    assert bundle.stored_path == str(bundles / str(bundle.code) / "upload")
    assert open(bundle.stored_path, "rb").read() == data
    assert bundle.size == len(data) and bundle.sha256 == hashlib.sha256(data).hexdigest()
    assert bundle.original_name == "<img src=x onerror=alert(1)>.log"   # a label, escaped where shown
    assert os.listdir(bundles / str(bundle.code)) == ["upload"]


def test_safe_label_keeps_only_harmless_characters():
    from kb.services.bundles import safe_label

    assert safe_label("hadoop-hdfs-datanode-dn1.log") == "hadoop-hdfs-datanode-dn1.log"
    assert safe_label("..\\..\\win.ini") == "win.ini"
    assert safe_label("a b\u202e<img>.tar.gz") == "a_b_img_.tar.gz"
    assert safe_label("...") == "upload" and safe_label("") == "upload"
    assert len(safe_label("x" * 500 + ".log")) == 100 and safe_label("x" * 500 + ".log").endswith(".log")


def _leftovers(settings) -> list[str]:
    found = []
    for root in (settings.BUNDLES_DIR, settings.FILE_UPLOAD_TEMP_DIR):
        for top, _dirs, files in os.walk(root):
            found += [os.path.join(top, f) for f in files]
    return found


@pytest.mark.parametrize("size", [1001, 200_000])   # counted while streaming / refused by Content-Length
def test_an_oversized_api_upload_is_413_and_leaves_nothing(client, alice, bundles, settings, size):
    from kb.models import Bundle
    from kb.services.tokens import token_create

    settings.UPLOAD_MAX_BYTES = 1000
    token = token_create(user=alice)[1]

    response = client.post("/api/v1/analyses", {"file": _file("big.log", b"x" * size)},
                           HTTP_AUTHORIZATION=f"Bearer {token}")

    assert response.status_code == 413
    assert "larger than the limit of 1000 bytes" in response.json()["detail"]
    assert Bundle.objects.count() == 0
    assert _leftovers(settings) == []


def test_an_upload_at_the_limit_is_accepted(client, alice, bundles, settings):
    from kb.services.tokens import token_create

    settings.UPLOAD_MAX_BYTES = 1000
    token = token_create(user=alice)[1]

    response = client.post("/api/v1/analyses", {"file": _file("ok.log", b"x" * 1000)},
                           HTTP_AUTHORIZATION=f"Bearer {token}")

    assert response.status_code == 202


def test_an_oversized_web_upload_is_413_and_leaves_nothing(client_alice, incident, bundles, settings):
    from kb.models import Bundle

    settings.UPLOAD_MAX_BYTES = 1000
    url = f"/incidents/{incident.id}/upload/"

    page = client_alice.post(url, {"file": _file("big.log", b"x" * 1001)})
    xhr = client_alice.post(url, {"file": _file("big.log", b"x" * 200_000)}, HTTP_X_REQUESTED_WITH="XMLHttpRequest")

    assert page.status_code == 413 and b"larger than the limit" in page.content
    assert xhr.status_code == 413 and "larger than the limit" in xhr.json()["error"]
    assert Bundle.objects.count() == 0
    assert _leftovers(settings) == []


def test_too_many_files_in_one_request_are_refused(client_alice, incident, bundles, settings):
    settings.UPLOAD_MAX_FILES = 2

    response = client_alice.post(f"/incidents/{incident.id}/upload/",
                                 {"file": [_file(f"{i}.log", b"x") for i in range(3)]})

    assert response.status_code == 413
    assert b"At most 2 files" in response.content
    assert _leftovers(settings) == []


# ---------------------------------------------------------------- web upload and progress


def test_the_upload_form_stores_the_bundle_and_queues_an_analysis(client_alice, incident, bundles, no_broker,
                                                                  django_capture_on_commit_callbacks):
    from kb.models import Analysis

    page = client_alice.get(f"/incidents/{incident.id}/upload/")
    assert page.status_code == 200
    assert b'enctype="multipart/form-data"' in page.content and b"csrfmiddlewaretoken" in page.content
    assert b"kb-upload.js" in page.content

    with django_capture_on_commit_callbacks(execute=True):
        response = client_alice.post(f"/incidents/{incident.id}/upload/", {"file": _file("a.log", b"hello\n")},
                                     HTTP_X_REQUESTED_WITH="XMLHttpRequest")

    analysis = Analysis.objects.get()
    assert response.json() == {"analysis": analysis.id,
                               "redirect": f"/incidents/{incident.id}/upload/?analysis={analysis.id}"}
    assert analysis.status == "queued" and analysis.bundle.incident == incident


def test_the_upload_form_enforces_csrf(alice, incident, bundles):
    from django.test import Client

    client = Client(enforce_csrf_checks=True)
    client.force_login(alice)

    response = client.post(f"/incidents/{incident.id}/upload/", {"file": _file("a.log", b"x")})

    assert response.status_code == 403


def test_the_upload_form_wants_a_file(client_alice, incident, bundles):
    response = client_alice.post(f"/incidents/{incident.id}/upload/", {})

    assert response.status_code == 400
    assert b"This field is required" in response.content


def test_another_teams_pages_are_404(client, mallory, incident, bundles):
    analysis = _queued(incident, bundles)
    client.force_login(mallory)

    assert client.get(f"/incidents/{incident.id}/upload/").status_code == 404
    assert client.post(f"/incidents/{incident.id}/upload/", {"file": _file("a.log", b"x")}).status_code == 404
    assert client.get(f"/analyses/{analysis.id}/progress/").status_code == 404
    assert client.post(f"/analyses/{analysis.id}/reanalyze/").status_code == 404
    assert analysis.bundle.analyses.count() == 1


def _partial(client, analysis) -> str:
    response = client.get(f"/analyses/{analysis.id}/progress/")
    assert response.status_code == 200
    return response.content.decode()


def test_the_progress_partial_polls_until_the_analysis_ends(client_alice, incident, bundles, settings):
    from kb.models import Analysis, Finding

    analysis = _queued(incident, bundles)
    queued = _partial(client_alice, analysis)
    assert 'hx-trigger="every 1s"' in queued and "Queued" in queued

    Analysis.objects.filter(id=analysis.id).update(created=timezone.now() - timedelta(seconds=60))
    assert "Waiting for a worker" in _partial(client_alice, analysis)

    Analysis.objects.filter(id=analysis.id).update(status="running", stage="scanning", progress=40,
                                                   bytes_done=2048, bytes_total=4096)
    running = _partial(client_alice, analysis)
    assert 'hx-trigger="every 1s"' in running and 'value="40"' in running and "scanning" in running

    Analysis.objects.filter(id=analysis.id).update(status="done", progress=100)
    Finding.objects.create(analysis=analysis, slug="disk-full", rank=1, confidence=0.9)
    done = _partial(client_alice, analysis)
    assert "hx-trigger" not in done and "hx-get" not in done
    assert f'href="/analyses/{analysis.id}/"' in done and "1 finding." in done

    Analysis.objects.filter(id=analysis.id).update(status="failed", error="x.zip: not a zip archive <b>")
    failed = _partial(client_alice, analysis)
    assert "hx-trigger" not in failed and "x.zip: not a zip archive &lt;b&gt;" in failed


def test_reanalyze_starts_a_fresh_analysis_beside_the_old_one(client_alice, incident, bundles):
    old = _queued(incident, bundles)

    response = client_alice.post(f"/analyses/{old.id}/reanalyze/")

    new = old.bundle.analyses.exclude(id=old.id).get()
    assert response.status_code == 302 and response["Location"].endswith(f"?analysis={new.id}")
    assert new.status == "queued" and old.bundle.analyses.count() == 2


# ---------------------------------------------------------------- claim, run, reconcile


def test_one_claim_wins(incident, bundles):
    from kb.services.leases import analysis_claim

    analysis = _queued(incident, bundles)

    assert analysis_claim(analysis_id=analysis.id, owner="h:1:a") is True
    assert analysis_claim(analysis_id=analysis.id, owner="h:2:b") is False
    analysis.refresh_from_db()
    assert (analysis.status, analysis.lease_owner, analysis.attempts) == ("running", "h:1:a", 1)


def test_an_expired_lease_can_be_taken_over(incident, bundles):
    from kb.models import Analysis
    from kb.services.leases import analysis_claim

    analysis = _queued(incident, bundles)
    analysis_claim(analysis_id=analysis.id, owner="h:1:a")
    Analysis.objects.filter(id=analysis.id).update(lease_expires=timezone.now() - timedelta(seconds=1))

    assert analysis_claim(analysis_id=analysis.id, owner="h:2:b") is True
    analysis.refresh_from_db()
    assert analysis.lease_owner == "h:2:b" and analysis.attempts == 2


def test_a_lease_of_a_dead_local_process_is_taken_over_at_once(incident, bundles):
    import socket

    from kb.services.leases import analysis_claim

    analysis = _queued(incident, bundles)
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    analysis_claim(analysis_id=analysis.id, owner=f"{socket.gethostname()}:{dead.stdout.strip()}:task-1")
    alive = f"{socket.gethostname()}:{os.getpid()}:task-1"

    assert analysis_claim(analysis_id=analysis.id, owner=alive) is True
    assert analysis_claim(analysis_id=analysis.id, owner=f"{socket.gethostname()}:{os.getpid()}:task-2") is False


def test_a_bundle_that_keeps_crashing_the_worker_fails(incident, bundles, settings):
    from kb.models import Analysis
    from kb.services.leases import analysis_claim

    analysis = _queued(incident, bundles)
    for n in range(settings.KB_MAX_ATTEMPTS):
        assert analysis_claim(analysis_id=analysis.id, owner=f"h:{n}:t")
        Analysis.objects.filter(id=analysis.id).update(lease_expires=timezone.now() - timedelta(seconds=1))

    assert analysis_claim(analysis_id=analysis.id, owner="h:9:t") is False
    analysis.refresh_from_db()
    assert analysis.status == "failed"
    assert analysis.error.startswith(f"the worker crashed {settings.KB_MAX_ATTEMPTS} times")


def test_an_analysis_runs_in_process(incident, bundles, synced):
    from kb.models import Analysis
    from kb.services.analyses import analysis_run
    from kb.services.context_store import context_store_lines

    analysis = _queued(incident, bundles)

    assert analysis_run(analysis_id=analysis.id, owner="h:1:a") is True

    analysis.refresh_from_db()
    assert analysis.status == "done", analysis.error
    assert analysis.progress == 100 and analysis.engine == "local" and len(analysis.runbooks_digest) == 64
    assert [f["runbook"] for f in analysis.result["findings"]] == ["disk-full"]
    assert list(analysis.findings.values_list("slug", "rank")) == [("disk-full", 1)]
    evidence = analysis.result["findings"][0]["evidence"][0]
    # The engine saw the upload under (a safe form of) its original name.
    assert evidence["path"] == "dn1-datanode.log"
    # The unpacked tree is gone (issue 17: it filled the disk); the upload stays, and the
    # lines around the evidence come from the analysis's compressed, line-indexed copy.
    directory = bundles / str(analysis.bundle.code)
    assert not (directory / "staged" / str(analysis.id)).exists()
    assert (directory / "upload").is_file()
    assert 0 < analysis.stored_bytes < analysis.bundle.size + 4096
    (line,) = context_store_lines(analysis=analysis, path=evidence["path"], first=evidence["line"],
                                  last=evidence["line"], max_line_bytes=4000)
    assert line.raw.decode().endswith("No space left on device")
    assert context_store_lines(analysis=analysis, path="../../etc/passwd", first=1, last=2,
                               max_line_bytes=4000) is None

    # A second delivery finds it done and writes nothing.
    assert analysis_run(analysis_id=analysis.id, owner="h:2:b") is False
    assert Analysis.objects.get(id=analysis.id).finished == analysis.finished


def test_a_rerun_of_the_same_analysis_leaves_the_same_rows(incident, bundles, synced):
    from kb.models import Analysis, Finding
    from kb.services.analyses import analysis_run

    analysis = _queued(incident, bundles)
    analysis_run(analysis_id=analysis.id, owner="h:1:a")
    first = list(Finding.objects.values_list("analysis_id", "slug", "rank"))
    Analysis.objects.filter(id=analysis.id).update(status="queued")   # as if redelivered after a crash

    analysis_run(analysis_id=analysis.id, owner="h:2:b")

    assert list(Finding.objects.values_list("analysis_id", "slug", "rank")) == first
    directory = bundles / str(analysis.bundle.code)
    assert not (directory / "staged" / str(analysis.id)).exists()
    assert sorted(os.listdir(directory / "context" / str(analysis.id))) == ["0.idx", "0.lines", "manifest.json"]


def test_unusable_input_fails_with_its_one_line_message(incident, bundles, synced):
    from kb.services.analyses import analysis_run

    analysis = _queued(incident, bundles, name="logs.zip", data=b"PK but not really a zip")

    analysis_run(analysis_id=analysis.id, owner="h:1:a")

    analysis.refresh_from_db()
    assert analysis.status == "failed"
    assert analysis.error.startswith("logs.zip: not a zip archive"), analysis.error
    assert not (bundles / str(analysis.bundle.code) / "staged" / str(analysis.id)).exists()


def test_without_runbooks_the_analysis_says_so(incident, bundles):
    from kb.services.analyses import analysis_run

    analysis = _queued(incident, bundles)
    analysis_run(analysis_id=analysis.id, owner="h:1:a")

    analysis.refresh_from_db()
    assert analysis.status == "failed" and "sync_runbooks" in analysis.error


def test_a_lost_lease_stops_the_writer(incident, bundles, synced):
    from kb.models import Analysis
    from kb.services.analyses import _store
    from kb.services.leases import LeaseLost, analysis_claim

    analysis = _queued(incident, bundles)
    analysis_claim(analysis_id=analysis.id, owner="h:1:a")
    Analysis.objects.filter(id=analysis.id).update(lease_owner="h:2:b")   # taken over meanwhile

    with pytest.raises(LeaseLost):
        _store(analysis.id, "h:1:a", {"findings": [{"runbook": "disk-full", "confidence": 1}]}, "local", "d")
    assert analysis.findings.count() == 0


def test_the_reconciler_requeues_and_gives_up(incident, bundles, settings, no_broker):
    from kb.models import Analysis
    from kb.services.reconcile import analysis_reconcile

    now = timezone.now()
    never_sent = _queued(incident, bundles)
    fresh = _queued(incident, bundles)
    expired = _queued(incident, bundles)
    crashed = _queued(incident, bundles)
    Analysis.objects.filter(id=never_sent.id).update(created=now - timedelta(seconds=60))
    Analysis.objects.filter(id=expired.id).update(status="running", lease_owner="elsewhere:1:t", attempts=1,
                                                  lease_expires=now - timedelta(seconds=1))
    Analysis.objects.filter(id=crashed.id).update(status="running", lease_owner="elsewhere:1:t",
                                                  attempts=settings.KB_MAX_ATTEMPTS,
                                                  lease_expires=now - timedelta(seconds=1))

    result = analysis_reconcile(now=now)

    assert result.expired == [expired.id] and result.crashed == [crashed.id]
    assert result.broker_down and result.sent == []          # nothing could be sent: still queued
    states = dict(Analysis.objects.values_list("id", "status"))
    assert states == {never_sent.id: "queued", fresh.id: "queued", expired.id: "queued", crashed.id: "failed"}
    assert Analysis.objects.filter(enqueued__isnull=False).count() == 0
    assert "worker crashed" in Analysis.objects.get(id=crashed.id).error
    assert "broker is down" in result.summary()


def test_the_reconcile_command_prints_a_summary(db, no_broker):
    from django.core.management import call_command

    out = io.StringIO()
    call_command("reconcile", stdout=out)

    assert out.getvalue().startswith("reconcile: 0 sent, 0 expired leases")


def test_importing_the_tasks_starts_no_spark():
    code = ("import django, os, sys; os.environ['DJANGO_SETTINGS_MODULE'] = 'kb.settings'; django.setup(); "
            "import kb.tasks, kb.services.analyses; print('pyspark' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)

    assert out.stdout.strip() == "False", out.stderr


# ---------------------------------------------------------------- ensure_login


def test_ensure_login_creates_the_admin_once(settings, tmp_path):
    from django.contrib.auth import get_user_model
    from django.core.management import call_command

    from kb.models import Membership

    settings.VAR_DIR = tmp_path
    first, second = io.StringIO(), io.StringIO()
    call_command("ensure_login", stdout=first)
    call_command("ensure_login", stdout=second)

    admin = get_user_model().objects.get(username="admin")
    password = (tmp_path / "login.txt").read_text().split()[1]
    assert first.getvalue().strip() == f"Log in at http://127.0.0.1:8000 as admin / {password}"
    assert second.getvalue() == first.getvalue()
    assert admin.is_staff and admin.is_superuser and admin.check_password(password)
    assert stat.S_IMODE(os.stat(tmp_path / "login.txt").st_mode) == 0o600
    membership = Membership.objects.get(user=admin)
    assert membership.team.slug == "ops" and membership.role == "admin"
    assert get_user_model().objects.count() == 1
