"""Bundles named by URI, analysed where they already are (issue 16).

    path = fetch_bundle("file:///data/incident-42/logs.tar.gz", workdir)
    path = fetch_bundle("hdfs://nn:8020/logs/incident-42/", workdir, spark=session)

A plain path or a `file://` URI is read in place. Any other scheme is one a
Hadoop FileSystem of the running Spark session reads (`hdfs://`, `s3a://`,
`abfs://`, ...): it works when the cluster's Hadoop configuration and jars
provide it (HADOOP_CONF_DIR, spark.hadoop.* settings, hadoop-aws for s3a),
and says so clearly when not. Such a bundle is copied by the driver's JVM into
`workdir`, which for a cluster is shared storage the executors read (the
engine stages and scans files there); the web server never carries it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import unquote, urlparse

from analyzers.model import BundleError

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

LOCAL_SCHEMES = ("", "file")


def uri_scheme(target: str) -> str:
    """'' for a plain path, else the URI's scheme in lower case ('file', 'hdfs', 's3a')."""
    if "://" not in target:
        return ""
    return urlparse(target).scheme.lower()


def local_path(target: str) -> str:
    """The filesystem path of a plain path or a file:// URI; BundleError for a file://
    URI of another host (file://otherhost/x is not this machine's /x)."""
    if uri_scheme(target) == "":
        return target
    parsed = urlparse(target)
    if parsed.scheme.lower() != "file":
        raise BundleError(f"{target}: not a local path or file:// URI")
    if parsed.netloc not in ("", "localhost"):
        raise BundleError(f"{target}: a file:// URI names a path on this machine; "
                          f"'{parsed.netloc}' is another host (use file:///path)")
    return unquote(parsed.path)


def fetch_bundle(target: str, workdir: str | os.PathLike, spark: SparkSession | None = None) -> str:
    """A path the engine can stage for `target` (a path or URI). Local ones are not copied."""
    scheme = uri_scheme(target)
    if scheme in LOCAL_SCHEMES:
        return local_path(target)
    if spark is None:
        raise BundleError(f"{target}: a {scheme}:// bundle is read through Spark's Hadoop "
                          "filesystems; use the spark engine")
    return _copy_with_hadoop(target, Path(workdir), spark)


def _copy_with_hadoop(uri: str, workdir: Path, spark: SparkSession) -> str:
    jvm = spark.sparkContext._jvm
    conf = spark.sparkContext._jsc.hadoopConfiguration()
    source = jvm.org.apache.hadoop.fs.Path(uri)
    try:
        fs = source.getFileSystem(conf)
    except Exception as exc:   # noqa: BLE001 - py4j wraps the Java exception
        raise BundleError(f"{uri}: no Hadoop filesystem for {uri_scheme(uri)}:// in this Spark session "
                          f"({_java_message(exc)}); configure it (HADOOP_CONF_DIR, spark.hadoop.*, "
                          "the filesystem's jars) or copy the bundle") from exc
    try:
        if not fs.exists(source):
            raise BundleError(f"{uri}: no such file or directory")
        name = source.getName() or "bundle"
        target = workdir / "fetched" / name
        target.parent.mkdir(parents=True, exist_ok=True)
        fs.copyToLocalFile(False, source, jvm.org.apache.hadoop.fs.Path(target.as_uri()), True)
    except BundleError:
        raise
    except Exception as exc:   # noqa: BLE001
        raise BundleError(f"{uri}: could not be read: {_java_message(exc)}") from exc
    return str(target)


def _java_message(exc: Exception) -> str:
    java = getattr(exc, "java_exception", None)
    text = str(java.toString()) if java is not None else str(exc)
    return text.strip().splitlines()[0][:300]
