"""The Spark engine: the local engine's scan, spread over Spark tasks.

    runner, startup = spark_runner()            # SPARK_MASTER or local[*]
    result = analyze_paths(paths, runbooks, engine="spark", runner=runner, startup_seconds=startup)

(analyzers.runners.make_runner does this for either engine.)

Importing this package starts nothing and does not import pyspark: the JVM
starts on the first get_spark() call in a process (never at import, never
before a Celery worker forks; see session.py). Everything after the scan
(assembly, facts, diagnosis) is the engine's own code on the driver, which is
why both engines give the same findings.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from analyzers.spark.runner import PIECE_BYTES, Progress, SparkRangeRunner
from analyzers.spark.session import get_spark, is_warm, startup_seconds, stop_spark

if TYPE_CHECKING:
    from analyzers.engine import RangeRunner

__all__ = [
    "PIECE_BYTES", "SparkRangeRunner", "get_spark", "is_warm",
    "spark_runner", "startup_seconds", "stop_spark",
]


def spark_runner(master: str | None = None, *, progress: Progress | None = None,
                 piece_bytes: int | None = None) -> tuple[RangeRunner, float]:
    """A RangeRunner on this process's session, and the seconds spent starting
    that session now (0.0 when it was already warm)."""
    warm = is_warm()
    spark = get_spark(master)
    return SparkRangeRunner(spark, progress=progress, piece_bytes=piece_bytes), 0.0 if warm else startup_seconds()
