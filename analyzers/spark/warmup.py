"""Make a new session's first analysis run like the next one.

Measured on the bench's 1 GB bundle (docs/architecture.md): the first scan in
a new session cost the Python workers, the JVM and the driver about 4.5
CPU-seconds more than the next: the driver compiling the signature set's
Hyperscan databases (1.2 s), Spark forking its Python daemon and workers,
each importing the engine and loading the databases, and the JVM running its
task path for the first time (JIT). A few tiny jobs at session start do all
of that without a bundle: they read no file, so they run the same on a
cluster whose executors cannot see the driver's disk.

The Celery worker runs this in a background thread right after the fork
(kb/tasks.py); `manage.py analyze` and the bench as part of starting the
engine. Spark ends Python workers idle for a minute
(PythonWorkerFactory's idle timeout), so a warm-up an hour before the first
upload saves the JVM start and the driver's compile; the workers' fork and
load come back at 0.1-0.3 s.
"""

from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING

from analyzers.signatures import Signature

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

ROUNDS = 3   # the JVM's task path is hot after a few jobs, not after one


def warm_up(spark: SparkSession, signatures: list[Signature]) -> dict:
    """Ship `signatures` (compiled once here, broadcast) and load them in a Python
    worker on every core; returns what it did (pids of the workers, seconds)."""
    from analyzers.spark.runner import shipped_signatures

    t0 = time.monotonic()
    sc = spark.sparkContext
    digest, shipped = shipped_signatures(sc, signatures)
    compiled = time.monotonic() - t0
    tasks = max(1, sc.defaultParallelism)
    pids: set[int] = set()
    for _ in range(ROUNDS):
        pids.update(sc.parallelize(range(tasks), tasks)
                    .mapPartitions(lambda _part: _load_in_worker(digest, shipped)).collect())
    return {"workers": sorted(pids), "compile_seconds": compiled, "seconds": time.monotonic() - t0}


def _load_in_worker(digest: str, shipped):
    """Runs in a Python worker: the imports and the matcher a scan task needs."""
    from analyzers.spark.runner import worker_matcher
    from analyzers.timestamps import is_record_start

    matcher = worker_matcher(digest, shipped)
    matcher.candidates(b"\n", errors=True)
    matcher.candidates(b"\n", errors=False)
    is_record_start("")
    yield os.getpid()
