"""`manage.py analyze` on bundles named by URI (analyzers/bundle_uri.py): a file://
URI is the path it names; other schemes go through Spark's Hadoop filesystems,
and are refused clearly when that cannot work."""

from __future__ import annotations

import json
import tarfile

import pytest

from analyzers.bundle_uri import fetch_bundle, local_path, uri_scheme
from analyzers.model import BundleError
from tests.helpers import SEED_BUNDLES
from tests.test_cli import analyze, assert_rejected

SEED = SEED_BUNDLES / "000-flink-hdfs-openforwrite-after-soft-lockup"


def _archive(tmp_path):
    archive = tmp_path / "seed 000.tar.gz"   # a space: the URI quotes it
    with tarfile.open(archive, "w:gz") as tar:
        for p in sorted(SEED.rglob("*.*")):
            if p.name != "expected.json":
                tar.add(p, arcname=str(p.relative_to(SEED)))
    return archive


def test_a_file_uri_gives_what_its_path_gives(tmp_path):
    archive = _archive(tmp_path)
    by_path, by_uri = analyze(archive), analyze(archive.as_uri())
    assert by_path.returncode == 0 and by_uri.returncode == 0, by_uri.stderr
    assert "%20" in archive.as_uri()
    findings = json.loads(by_uri.stdout)["findings"]
    assert findings and findings == json.loads(by_path.stdout)["findings"]


def test_a_hadoop_uri_needs_the_spark_engine():
    assert_rejected(analyze("hdfs://namenode:8020/logs/incident-42/"), "hdfs://namenode:8020/logs/incident-42/",
                    "--engine spark")


def test_a_file_uri_of_another_host_is_refused():
    assert_rejected(analyze("file://otherhost/var/log/bundle.tgz"), "otherhost", "another host")


def test_schemes_and_paths():
    assert uri_scheme("/data/x.tgz") == "" and uri_scheme("S3A://bucket/x") == "s3a"
    assert local_path("file:///data/a%20b.tgz") == "/data/a b.tgz"
    assert local_path("file://localhost/data/x") == "/data/x"
    with pytest.raises(BundleError, match="use the spark engine"):
        fetch_bundle("s3a://bucket/incident/", "/tmp")
