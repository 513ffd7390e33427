"""Which RangeRunner scans a bundle's byte ranges: the one place that chooses.

    runner = make_runner("spark", master="local[*]", scanned=report)
    analyze_paths(paths, runbooks, engine=runner.engine, runner=runner.run,
                  range_bytes=runner.range_bytes, startup_seconds=runner.startup_seconds)

The worker (kb.services.analyses), the CLI (`manage.py analyze`) and the bench
all come here, so both engines are picked, started and sized the same way.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from analyzers.engine import RangeRunner, run_ranges_local
from analyzers.scan import RANGE_BYTES
from analyzers.signatures import Signature

ENGINES = ("local", "spark")
Scanned = Callable[[int, int], None]   # (bytes scanned, bytes to scan)


class EngineStartError(Exception):
    """The engine could not start (Spark: no Java, a master that never answers); __cause__ says why."""


@dataclass(frozen=True)
class Runner:
    engine: str                 # "local" or "spark", as the result's stats name it
    run: RangeRunner
    range_bytes: int            # bytes of one ByteRange handed to `run`
    startup_seconds: float      # spent starting the engine now (Spark's JVM); 0.0 when warm


def make_runner(engine: str, *, master: str | None = None, scanned: Scanned | None = None,
                before_cold_start: Callable[[], None] | None = None,
                warm_signatures: list[Signature] | None = None) -> Runner:
    """A runner for `engine`. `scanned(done, total)` hears the bytes scanned so far;
    `before_cold_start()` is called just before a JVM is started (20-60 s), never
    when this process's SparkSession is already up. A Spark start warms the new
    session with `warm_signatures` (analyzers/spark/warmup.py) when given.
    EngineStartError when Spark does not start; ValueError for an unknown
    engine (KB_ENGINE in the app)."""
    if engine not in ENGINES:
        raise ValueError(f"KB_ENGINE must be spark or local, not {engine!r}")
    if engine == "spark":
        from analyzers.spark import is_warm, spark_runner

        if before_cold_start is not None and not is_warm():
            before_cold_start()
        try:
            run, startup = spark_runner(master, progress=scanned, warm_signatures=warm_signatures)
        except Exception as exc:
            raise EngineStartError(str(exc)) from exc
        return Runner("spark", run, RANGE_BYTES, startup)
    return Runner("local", run_ranges_local if scanned is None else _reporting_local(scanned), RANGE_BYTES, 0.0)


def _reporting_local(scanned: Scanned) -> RangeRunner:
    """The in-process runner, one range at a time, reporting bytes scanned after each."""

    def run(ranges, signatures, max_line):
        total = sum(r.end - r.start for r in ranges)
        done, results = 0, []
        for byte_range in ranges:
            results += run_ranges_local([byte_range], signatures, max_line)
            done += byte_range.end - byte_range.start
            scanned(done, total)
        return results

    return run
