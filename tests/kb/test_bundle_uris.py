"""A team admin names a bundle by URI on the upload page (issue 16; kb/services/bundle_uris.py):
only admins, only under KB_BUNDLE_URI_ROOTS, never kb's own storage, symlinks and '..'
resolved before the check, nothing stored when refused. The analysis itself runs on the
real Spark engine in process (no worker: the engine is what is under test here)."""

from __future__ import annotations

import shutil

import pytest

from tests.helpers import ROOT

pytestmark = pytest.mark.django_db

CASE = ROOT / "tests" / "fixtures" / "cases" / "disk-full" / "positive"   # real lines, see its SOURCE.md


@pytest.fixture
def roots(settings, tmp_path):
    """kb's storage in tmp/var, the allowed root tmp/logs holding a real incident's logs."""
    settings.VAR_DIR = tmp_path / "var"
    settings.BUNDLES_DIR = tmp_path / "var" / "bundles"
    settings.BUNDLES_DIR.mkdir(parents=True)
    logs = tmp_path / "logs"
    shutil.copytree(CASE, logs / "incident-42", ignore=shutil.ignore_patterns("*.md", "*.json"))
    settings.KB_BUNDLE_URI_ROOTS = [str(logs), "hdfs://nn1:8020/logs/"]
    return logs


def _stored(settings) -> list:
    from kb.models import Analysis, Bundle

    return [*Bundle.objects.all(), *Analysis.objects.all(), *settings.BUNDLES_DIR.iterdir()]


@pytest.mark.spark
@pytest.mark.timeout(300)
def test_an_admin_names_an_allowed_file_uri_and_the_spark_engine_finds_the_cause(
        client_bob, incident, roots, settings):
    from kb.models import Analysis
    from kb.services import analyses
    from kb.services.sync import runbook_sync

    runbook_sync(directory=ROOT / "runbooks")
    settings.KB_ENGINE = "spark"
    settings.SPARK_MASTER = "local[2]"

    page = client_bob.get(f"/incidents/{incident.id}/upload/")
    assert b'name="uri"' in page.content
    response = client_bob.post(f"/incidents/{incident.id}/upload/uri/",
                               {"uri": f"file://{roots}/incident-42/../incident-42"})
    assert response.status_code == 400 and b"without &#x27;.&#x27; or &#x27;..&#x27;" in response.content
    response = client_bob.post(f"/incidents/{incident.id}/upload/uri/", {"uri": (roots / "incident-42").as_uri()})

    analysis = Analysis.objects.get()
    assert response.status_code == 302 and response.url.endswith(f"?analysis={analysis.id}")
    assert analysis.bundle.source_uri == (roots / "incident-42").as_uri() and analysis.bundle.stored_path == ""
    assert analyses.analysis_run(analysis_id=analysis.id, owner="h:1:a") is True
    analysis.refresh_from_db()
    assert analysis.status == "done", analysis.error
    assert analysis.engine == "spark"
    assert [f["runbook"] for f in analysis.result["findings"]] == ["disk-full"]
    assert {ev["path"] for ev in analysis.result["findings"][0]["evidence"]} <= {
        "nn1/hadoop-hdfs-namenode-nn1.log", "edge2/spark-driver.log", "nn1/df-h.txt"}
    # Read where it is: nothing of it was copied into kb's storage but the context copy.
    directory = settings.BUNDLES_DIR / str(analysis.bundle.code)
    assert [p for p in directory.rglob("*") if p.is_file() and p.relative_to(directory).parts[0] != "context"] == []
    assert any((directory / "context").rglob("*"))


def test_a_member_who_is_not_an_admin_is_refused(client_alice, incident, roots, settings):
    page = client_alice.get(f"/incidents/{incident.id}/upload/")
    assert b'name="uri"' not in page.content

    response = client_alice.post(f"/incidents/{incident.id}/upload/uri/", {"uri": (roots / "incident-42").as_uri()})

    assert response.status_code == 403
    assert b"Only an admin of the team" in response.content
    assert _stored(settings) == []


def test_another_teams_admin_gets_404(client, mallory, incident, roots, settings):
    client.force_login(mallory)
    response = client.post(f"/incidents/{incident.id}/upload/uri/", {"uri": (roots / "incident-42").as_uri()})
    assert response.status_code == 404
    assert _stored(settings) == []


@pytest.mark.parametrize("case", ["outside", "dots", "symlink-out", "kb-storage", "symlink-into-storage",
                                  "other-host", "scheme", "hdfs-other-prefix", "hdfs-dots"])
def test_refused_uris_say_why_and_store_nothing(client_bob, incident, roots, settings, tmp_path, case):
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "secret.log").write_text("x\n")
    bundles = settings.BUNDLES_DIR
    (bundles / "0000-other-team").mkdir()
    (bundles / "0000-other-team" / "upload").write_text("another team's bundle\n")
    (roots / "out").symlink_to(outside)
    (roots / "in-storage").symlink_to(bundles)
    uri, says = {
        "outside": (outside.as_uri(), "is not under an allowed directory"),
        "dots": (f"file://{roots}/../elsewhere/secret.log", "without '.' or '..'"),
        "symlink-out": ((roots / "out" / "secret.log").as_uri(), f"{outside}/secret.log is not under an allowed"),
        "kb-storage": ((bundles / "0000-other-team" / "upload").as_uri(), "kb's own storage"),
        "symlink-into-storage": ((roots / "in-storage" / "0000-other-team").as_uri(), "kb's own storage"),
        "other-host": (f"file://evil.example{roots}/incident-42", "is another host"),
        "scheme": ("http://example.com/logs.tar.gz", "only file://, hdfs:// and s3a://"),
        "hdfs-other-prefix": ("hdfs://nn1:8020/logs-of-others/x", "not under an allowed prefix"),
        "hdfs-dots": ("hdfs://nn1:8020/logs/../secret", "no '.' or '..'"),
    }[case]

    response = client_bob.post(f"/incidents/{incident.id}/upload/uri/", {"uri": uri})

    assert response.status_code == 400
    assert says in response.content.decode().replace("&#x27;", "'")
    assert _stored(settings) == [bundles / "0000-other-team"]


def test_a_root_that_contains_kbs_storage_still_refuses_it(incident, bob, roots, settings):
    from kb.services.bundle_uris import UriRefused, analysis_from_uri, bundle_uri_check

    settings.KB_BUNDLE_URI_ROOTS = [str(settings.VAR_DIR.parent)]
    assert bundle_uri_check((roots / "incident-42").as_uri()) == (roots / "incident-42").as_uri()
    with pytest.raises(UriRefused, match="kb's own storage"):
        analysis_from_uri(user=bob, incident=incident, uri=settings.BUNDLES_DIR.as_uri())


def test_without_roots_the_field_is_off(client_bob, incident, roots, settings):
    settings.KB_BUNDLE_URI_ROOTS = []
    assert b'name="uri"' not in client_bob.get(f"/incidents/{incident.id}/upload/").content
    response = client_bob.post(f"/incidents/{incident.id}/upload/uri/", {"uri": (roots / "incident-42").as_uri()})
    assert response.status_code == 400 and b"Bundle URIs are off here" in response.content
    assert _stored(settings) == []


def test_the_worker_checks_again_and_fails_a_uri_turned_symlink(incident, bob, roots, settings, tmp_path, synced):
    """Allowed when named; replaced by a symlink out of the roots before the worker read it."""
    from kb.models import Analysis
    from kb.services import analyses
    from kb.services.bundle_uris import analysis_from_uri

    settings.KB_ENGINE = "local"
    analysis = analysis_from_uri(user=bob, incident=incident, uri=(roots / "incident-42").as_uri())
    shutil.rmtree(roots / "incident-42")
    (tmp_path / "elsewhere").mkdir()
    (roots / "incident-42").symlink_to(tmp_path / "elsewhere")

    assert analyses.analysis_run(analysis_id=analysis.id, owner="h:1:a") is True

    analysis = Analysis.objects.get(id=analysis.id)
    assert analysis.status == "failed" and "is not under an allowed directory" in analysis.error


def test_the_api_takes_a_uri_from_an_admin_only(client, incident, alice, bob, roots, settings):
    from kb.models import Analysis
    from kb.services.tokens import token_create

    def post(user, uri):
        token = token_create(user=user)[1]
        return client.post("/api/v1/analyses/uri", {"uri": uri, "incident": incident.id},
                           HTTP_AUTHORIZATION=f"Bearer {token}")

    allowed = (roots / "incident-42").as_uri()
    refused = post(alice, allowed)
    assert refused.status_code == 403 and "Only an admin" in refused.json()["detail"]
    outside = post(bob, settings.BUNDLES_DIR.as_uri())
    assert outside.status_code == 400 and "kb's own storage" in outside.json()["detail"]
    assert _stored(settings) == []

    created = post(bob, allowed)
    assert created.status_code == 202
    analysis = Analysis.objects.get()
    assert created.json() == {"id": analysis.id, "url": f"/api/v1/analyses/{analysis.id}"}
    assert analysis.bundle.source_uri == allowed and analysis.bundle.incident == incident
