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

import time
from typing import TYPE_CHECKING

from analyzers.spark.runner import PIECE_BYTES, Progress, SparkRangeRunner
from analyzers.spark.session import get_spark, is_warm, startup_seconds, stop_spark
from analyzers.spark.warmup import warm_up

if TYPE_CHECKING:
    from analyzers.engine import RangeRunner
    from analyzers.signatures import Signature

__all__ = [
    "PIECE_BYTES", "SparkRangeRunner", "get_spark", "is_warm",
    "spark_runner", "startup_seconds", "stop_spark", "warm_up",
]


def spark_runner(master: str | None = None, *, progress: Progress | None = None,
                 piece_bytes: int | None = None,
                 warm_signatures: list[Signature] | None = None) -> tuple[RangeRunner, float]:
    """A RangeRunner on this process's session, and the seconds this call spent
    waiting for that session to start (0.0 when it was already warm; less than
    the start when another thread had begun it). When this call starts the
    session and `warm_signatures` are given, starting includes warm_up with them
    (the first analysis then runs like the next)."""
    warm = is_warm()
    t0 = time.monotonic()
    spark = get_spark(master)
    if not warm and warm_signatures is not None and startup_seconds() > 0:
        warm_up(spark, warm_signatures)
    waited = 0.0 if warm else time.monotonic() - t0
    return SparkRangeRunner(spark, progress=progress, piece_bytes=piece_bytes), waited
