"""The Spark engine gives what the local engine gives, and starts only when asked.

One local SparkSession (local[2]) for the whole module, created by the first
test that needs it (20-45 s here), and one standalone cluster (master +
worker) for one test, stopped right after it. Tests that need neither run
first, the cluster test runs before the local session exists, so at most
three JVMs are alive at a time on the 2 cores.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from dataclasses import replace

import pytest

from analyzers.lead_scan import MAX_LEAD_LINES
from analyzers.scan import MAX_ERROR_LINES, plan_ranges, scan_range
from analyzers.signatures import ERROR_KEY, Signature, matcher_for
from analyzers.spark.runner import auto_piece_bytes, merge, merge_pieces, pack, split
from tests.helpers import FIXTURES, ROOT, SEED_BUNDLES, bundle_cases, bundle_copy, case_id

CASES = bundle_cases()
# Collector outputs (issue 14): real ones, and a seed as `yarn logs` prints it.
LAYOUT_CASES = sorted(p for p in (FIXTURES / "layouts").iterdir() if p.is_dir())
# Leads (issue 12): records that cross range and piece ends must come back once, the same.
LEADS_FORMAT_CASES = sorted(p for p in (FIXTURES / "leads-formats").iterdir() if p.is_dir())
# The parts of a result that may differ between runs: wall-clock time and the engine's name.
VOLATILE_STATS = ("seconds", "startup_seconds", "engine")


def _runbooks() -> list[dict]:
    from tests.helpers import runbook_metas

    metas = runbook_metas()
    if len(metas) < 2:
        pytest.skip(f"parity needs the real catalog: only {len(metas)} runbook(s) in runbooks/ yet")
    return metas


def _comparable(result: dict) -> dict:
    out = dict(result)
    out["stats"] = {k: v for k, v in result["stats"].items() if k not in VOLATILE_STATS}
    return out


# --- laziness: importing the engine starts nothing -------------------------------------------

def test_importing_the_engines_starts_no_jvm():
    probe = textwrap.dedent("""
        import json, os, sys
        import analyzers.engine, analyzers.spark
        imported = "pyspark" in sys.modules
        from pyspark import SparkContext
        children = []
        for d in os.listdir("/proc"):
            if d.isdigit():
                try:
                    stat = open(f"/proc/{d}/stat").read()
                except OSError:
                    continue
                ppid = int(stat.rsplit(")", 1)[1].split()[1])
                if ppid == os.getpid():
                    children.append(open(f"/proc/{d}/cmdline").read().replace("\\0", " "))
        print(json.dumps({"pyspark_imported": imported, "warm": analyzers.spark.is_warm(),
                          "context": SparkContext._active_spark_context is not None,
                          "gateway": SparkContext._gateway is not None, "children": children}))
    """)
    out = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    state = json.loads(out.stdout)
    assert state == {"pyspark_imported": False, "warm": False, "context": False, "gateway": False,
                     "children": []}


# --- split / pack / merge: no Spark needed ------------------------------------------------------

class _Task:
    def __init__(self, path, disk_path, start, end):
        self.path, self.disk_path, self.start, self.end = path, disk_path, start, end


def test_split_cuts_tasks_into_bounded_consecutive_pieces():
    tasks = [_Task("a", "/a", 0, 10), _Task("b", "/b", 100, 125), _Task("c", "/c", 0, 0)]
    pieces = split(tasks, 10)
    assert pieces == [
        (0, 0, "a", "/a", 0, 10),
        (1, 0, "b", "/b", 100, 110), (1, 1, "b", "/b", 110, 120), (1, 2, "b", "/b", 120, 125),
        (2, 0, "c", "/c", 0, 0),
    ]
    parts = pack(pieces, 20)
    assert [[p[:2] for p in part] for part in parts] == [[(0, 0), (1, 0)], [(1, 1), (1, 2), (2, 0)]]
    assert sum(len(p) for p in parts) == len(pieces)


def test_piece_size_aims_at_four_tasks_per_core_within_bounds():
    assert auto_piece_bytes(10, 2) == 1 << 20
    assert auto_piece_bytes(64 << 20, 2) == 8 << 20
    assert auto_piece_bytes(10 << 30, 2) == 64 << 20


ERROR_SIGS = [
    Signature("hdfs-close-interrupted", r"Interrupted while waiting for data to be acknowledged by pipeline"),
    Signature(ERROR_KEY, r"\b(?:ERROR|FATAL)\b"),
    Signature("__version__:flink", r"\(Version: (\d+\.\d+(?:\.\d+)?)[,)]"),
]


def _is_start(line: str) -> bool:
    return line[:4].isdigit()


def _without_error_counters(r):
    """Statistics scan_range stops keeping exactly once a sample is full: error and lead counts."""
    return replace(r, error_count=0, errors_sampled=False, lead_lines=0, leads_sampled=False,
                   leads={k: replace(v, count=0, last_line=0) for k, v in r.leads.items()})


def test_merged_pieces_equal_one_scan_of_the_whole_range(tmp_path):
    lines = []
    for i in range(400):   # fewer records than MAX_LEAD_LINES: no sample fills, so all of it is exact
        lines.append(f"2024-01-01 00:00:{i % 60:02d},000 ERROR Task {i} failed (Version: 1.{i % 20}.0, rev)")
        if i % 7 == 0:
            lines.append("java.io.InterruptedIOException: Interrupted while waiting for data to be acknowledged by pipeline")
            lines.append("\tat org.apache.hadoop.hdfs.DFSOutputStream.waitForAckedSeqno(DFSOutputStream.java:2022)")
    p = tmp_path / "tm.log"
    p.write_text("\n".join(lines) + "\n")
    size = p.stat().st_size
    m = matcher_for(ERROR_SIGS)
    whole = scan_range("tm.log", str(p), 0, size, m, 1 << 20, _is_start)
    assert any(whole.all_hits()) and whole.versions and whole.leads and not whole.errors_sampled and not whole.leads_sampled
    for piece in (997, 65536):
        parts = [scan_range("tm.log", str(p), s, e, m, 1 << 20, _is_start) for s, e in plan_ranges(size, piece)]
        assert merge_pieces("tm.log", 0, parts) == whole

    task = _Task("tm.log", str(p), 0, size)
    scanned = [(0, k, scan_range("tm.log", str(p), s, e, m, 1 << 20, _is_start))
               for k, (s, e) in enumerate(plan_ranges(size, 4096))]
    assert merge([task], reversed(scanned)) == [whole]


def test_merged_pieces_keep_the_same_error_sample_once_it_is_full(tmp_path):
    p = tmp_path / "tm.log"
    p.write_text("".join(f"2024-01-01 00:00:00,000 ERROR Task {i} failed\n" for i in range(3 * MAX_ERROR_LINES)))
    size = p.stat().st_size
    m = matcher_for(ERROR_SIGS)
    whole = scan_range("tm.log", str(p), 0, size, m, 1 << 20, _is_start)
    merged = merge_pieces("tm.log", 0, [scan_range("tm.log", str(p), s, e, m, 1 << 20, _is_start)
                                        for s, e in plan_ranges(size, 20_000)])
    assert len(whole.errors) == MAX_ERROR_LINES and whole.errors_sampled
    assert _without_error_counters(merged) == _without_error_counters(whole)
    # The count is a statistic scan_range stops keeping once its sample is full.
    assert merged.errors_sampled and merged.error_count >= MAX_ERROR_LINES
    assert whole.leads_sampled and whole.lead_lines == MAX_LEAD_LINES and list(merged.leads) == list(whole.leads)


# --- a real standalone cluster (before the local session exists) ------------------------------

DRIVER = """
import json, sys
from analyzers.engine import analyze_paths
from analyzers.spark import spark_runner
from tests.helpers import runbook_metas
runner, startup = spark_runner()
result = analyze_paths([sys.argv[1]], runbook_metas(), engine="spark", runner=runner, range_bytes=4096)
print(json.dumps({"master": runner.spark.sparkContext.master, "startup": startup,
                  "findings": result["findings"], "symptoms": result["symptoms"]}))
"""


@pytest.mark.spark
def test_a_standalone_cluster_gives_the_local_findings():
    from analyzers.engine import analyze_paths
    from tests.spark_cluster import standalone_cluster

    runbooks = _runbooks()
    bundle = SEED_BUNDLES / "000-flink-hdfs-openforwrite-after-soft-lockup"
    local = analyze_paths([str(bundle)], runbooks)
    assert local["findings"], "the seed bundle should give findings"
    with standalone_cluster() as cluster:
        env = dict(os.environ, SPARK_MASTER=cluster.url)
        out = subprocess.run([sys.executable, "-c", DRIVER, str(bundle)], cwd=ROOT, env=env,
                             capture_output=True, text=True, timeout=360)
        assert out.returncode == 0, out.stderr[-5000:]
        executor_logs = list(cluster.work_dir.glob("app-*/*/stderr"))
    remote = json.loads(out.stdout.strip().splitlines()[-1])
    assert remote["master"] == cluster.url and remote["startup"] > 0
    assert executor_logs, "the scan should have run in an executor the worker launched"
    assert remote["findings"] == local["findings"]
    assert remote["symptoms"] == local["symptoms"]


# --- one local session for the rest --------------------------------------------------------------

@pytest.fixture(scope="module")
def spark():
    from analyzers.spark import get_spark, stop_spark

    session = get_spark("local[2]")
    yield session
    stop_spark()


@pytest.mark.spark
def test_the_session_is_created_once_and_reused(spark):
    from analyzers.spark import get_spark, is_warm, spark_runner, startup_seconds

    assert get_spark() is spark and get_spark("local[2]") is spark and is_warm()
    assert startup_seconds() > 0
    runner, startup = spark_runner()
    assert runner.spark is spark and startup == 0.0
    assert spark.sparkContext.getConf().get("spark.python.worker.reuse") == "true"
    assert spark.sparkContext.getConf().get("spark.ui.enabled") == "false"
    with pytest.raises(RuntimeError, match="already runs a SparkSession"):
        get_spark("local[1]")


@pytest.mark.spark
def test_a_forked_child_does_not_reuse_the_parents_session(spark):
    pid = os.fork()
    if pid == 0:  # child: must not see the parent's session, and must drop pyspark's gateway
        code = 1
        try:
            from pyspark import SparkContext

            from analyzers.spark import is_warm, startup_seconds

            code = 0 if (not is_warm() and SparkContext._gateway is None and startup_seconds() == 0.0) else 3
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert spark.sparkContext.parallelize([1, 2, 3], 2).sum() == 6   # the parent's session still works


@pytest.mark.spark
@pytest.mark.parametrize("case", CASES, ids=[case_id(c) for c in CASES])
def test_spark_and_local_engines_agree(spark, case):
    from analyzers.engine import analyze_paths
    from analyzers.spark import SparkRangeRunner

    runbooks = _runbooks()
    local = _comparable(analyze_paths([str(case)], runbooks))
    # Many small engine ranges, two per Spark task ...
    small_ranges = analyze_paths([str(case)], runbooks, engine="spark", range_bytes=4096,
                                 runner=SparkRangeRunner(spark, piece_bytes=8192))
    # ... and whole-file engine ranges that the runner cuts into pieces and merges back.
    resplit = analyze_paths([str(case)], runbooks, engine="spark",
                            runner=SparkRangeRunner(spark, piece_bytes=3000))
    for result in (small_ranges, resplit):
        assert result["findings"] == local["findings"]
        assert result["symptoms"] == local["symptoms"]
        assert result["leads"] == local["leads"]
        assert _comparable(result) == local


@pytest.mark.spark
@pytest.mark.parametrize("layout", LAYOUT_CASES + LEADS_FORMAT_CASES + ["yarn-logs-of-seed-000"],
                         ids=[p.name for p in LAYOUT_CASES + LEADS_FORMAT_CASES] + ["yarn-logs-of-seed-000"])
def test_spark_and_local_engines_agree_on_collector_outputs(spark, layout, tmp_path):
    from analyzers.engine import analyze_paths
    from analyzers.spark import SparkRangeRunner
    from tests.analyzers.test_collector_layouts import _yarn_stream

    if layout == "yarn-logs-of-seed-000":
        bundle = tmp_path / "application_1685613600000_0001.log"
        bundle.write_text(_yarn_stream(SEED_BUNDLES / "000-flink-hdfs-openforwrite-after-soft-lockup", True))
    else:
        bundle = bundle_copy(layout, tmp_path)
    runbooks = _runbooks()
    local = _comparable(analyze_paths([str(bundle)], runbooks))
    spark_result = analyze_paths([str(bundle)], runbooks, engine="spark", range_bytes=4096,
                                 runner=SparkRangeRunner(spark, piece_bytes=8192))
    # Pieces smaller than a stack trace: a record starts in one piece and ends in the next.
    tiny_pieces = analyze_paths([str(bundle)], runbooks, engine="spark",
                                runner=SparkRangeRunner(spark, piece_bytes=300))
    assert spark_result["leads"] == local["leads"] == tiny_pieces["leads"]
    assert _comparable(spark_result) == local == _comparable(tiny_pieces)
    assert local["files"]


@pytest.mark.spark
def test_progress_counts_every_byte_and_never_goes_back(spark, tmp_path):
    from analyzers.engine import ByteRange
    from analyzers.spark import SparkRangeRunner

    p = tmp_path / "a.log"
    p.write_text("2024-01-01 00:00:00,000 ERROR x Interrupted while waiting for data to be acknowledged by pipeline\n" * 20000)
    size = p.stat().st_size
    tasks = [ByteRange("a.log", str(p), s, e) for s, e in plan_ranges(size, 100_000)]
    seen: list[tuple[int, int]] = []
    results = SparkRangeRunner(spark, piece_bytes=50_000, progress=lambda d, t: seen.append((d, t)))(
        tasks, ERROR_SIGS, 1 << 20)
    assert [r.start for r in results] == [t.start for t in tasks]
    assert sum(r.lines for r in results) == 20000
    assert seen[-1] == (size, size)
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)


@pytest.mark.spark
def test_an_executor_failure_reaches_the_caller(spark, tmp_path):
    from analyzers.engine import ByteRange
    from analyzers.spark import SparkRangeRunner

    missing = ByteRange("gone.log", str(tmp_path / "gone.log"), 0, 100)
    with pytest.raises(Exception, match="gone.log"):
        SparkRangeRunner(spark)([missing], ERROR_SIGS, 1 << 20)


def _slow_record_start(line: str) -> bool:
    time.sleep(0.01)
    return True


class _Stop(Exception):
    pass


@pytest.mark.spark
def test_an_interrupted_caller_cancels_the_spark_job(spark, tmp_path):
    from analyzers.engine import ByteRange
    from analyzers.spark import SparkRangeRunner

    p = tmp_path / "slow.log"
    p.write_text("2024-01-01 00:00:00,000 ERROR x\n" * 4000)   # ~40 s of header lookups per task
    tasks = [ByteRange("slow.log", str(p), s, e) for s, e in plan_ranges(p.stat().st_size, 30_000)]

    def stop(done, total):
        raise _Stop   # what Celery's SoftTimeLimitExceeded does to the calling thread

    runner = SparkRangeRunner(spark, piece_bytes=30_000, progress=stop, record_start=_slow_record_start)
    t0 = time.monotonic()
    with pytest.raises(_Stop):
        runner(tasks, ERROR_SIGS, 1 << 20)
    assert time.monotonic() - t0 < 30
    deadline = time.monotonic() + 30
    while spark.sparkContext.statusTracker().getActiveJobsIds() and time.monotonic() < deadline:
        time.sleep(0.5)
    assert not spark.sparkContext.statusTracker().getActiveJobsIds()
