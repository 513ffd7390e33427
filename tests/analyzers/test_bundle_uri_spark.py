"""Bundles named by a Hadoop filesystem URI are read through the Spark session's
JVM (analyzers/bundle_uri.py); a scheme the session has no filesystem for is
refused with one clear message."""

from __future__ import annotations

import shutil

import pytest

from analyzers.bundle_uri import _copy_with_hadoop, fetch_bundle
from analyzers.model import BundleError
from tests.helpers import SEED_BUNDLES

pytestmark = pytest.mark.spark

SEED = SEED_BUNDLES / "000-flink-hdfs-openforwrite-after-soft-lockup"


@pytest.fixture(scope="module")
def spark():
    from analyzers.spark import get_spark, stop_spark

    yield get_spark("local[2]")
    stop_spark()


def test_the_driver_jvm_copies_a_bundle_through_hadoop(spark, tmp_path):
    from analyzers.engine import analyze_paths
    from tests.helpers import runbook_metas

    source = tmp_path / "store" / "incident-42"
    shutil.copytree(SEED, source)
    # file: is a Hadoop filesystem too: the same copy an hdfs:// URI gets, without a NameNode.
    fetched = _copy_with_hadoop(source.as_uri(), tmp_path / "work", spark)
    assert fetched.startswith(str(tmp_path / "work")) and fetched.endswith("incident-42")
    runbooks = runbook_metas()
    assert analyze_paths([fetched], runbooks)["findings"] == analyze_paths([str(source)], runbooks)["findings"]


def test_a_scheme_without_a_filesystem_is_refused_clearly(spark, tmp_path):
    with pytest.raises(BundleError, match=r"no Hadoop filesystem for s3a://.*configure it"):
        fetch_bundle("s3a://kb-bundles/incident-42/", tmp_path, spark)


def test_a_missing_bundle_is_named(spark, tmp_path):
    missing = (tmp_path / "nowhere").as_uri()
    with pytest.raises(BundleError, match="no such file or directory"):
        _copy_with_hadoop(missing, tmp_path / "work", spark)
