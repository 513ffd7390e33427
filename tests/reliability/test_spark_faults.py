"""Spark-side faults with a real Celery worker running the Spark engine
(KB_ENGINE=spark, prefork), real SparkSessions and a real standalone cluster.

make test:
  R11a Spark cannot start (JAVA_HOME points nowhere): failed with a readable
       message within seconds, the worker keeps answering and serving;
  R10a importing the tasks and starting the worker starts no JVM.
make chaos:
  R10  two analyses at once on -c 2: each child starts its own JVM, both
       results equal the local engine's; R12: ping answers during the JVM starts;
  R11  SPARK_MASTER at a closed port: failed with a readable message in
       bounded time, the worker not wedged, and after the fix a re-analysis is done;
  an executor JVM of a standalone cluster killed mid-scan: retried by Spark
       (done, same findings) or failed with a message; never left running.
"""

from __future__ import annotations

import os
import signal
import time

import pytest
from django.test import Client

from tests.celery_harness import free_port, wait_for, wait_for_status
from tests.reliability.conftest import restart_worker
from tests.reliability.util import (
    api_upload_id,
    cmdline,
    descendants,
    java_processes,
    pool_children,
    result_core,
)

pytestmark = [pytest.mark.celery, pytest.mark.timeout(900)]


# The worker this module runs against (tests/celery_harness.py: pipeline).
RIG = {"engine": "spark", "concurrency": 2,
       "env": {"SPARK_MASTER": "local[1]", "KB_LEASE_SECONDS": "60",
               "KB_STARTUP_LEASE_SECONDS": "600", "KB_RECONCILE_INTERVAL": "2",
               "SPARK_DRIVER_MEMORY": "512m"}}
CAST_PREFIX = "sf"   # cast: make_cast(CAST_PREFIX)


@pytest.fixture(scope="module")
def local_result(cast, seed_tgz, tmp_path_factory):
    from analyzers.engine import analyze_paths
    from kb.models import Runbook

    path = tmp_path_factory.mktemp("local") / "seed.tgz"
    path.write_bytes(seed_tgz)
    return analyze_paths([str(path)], list(Runbook.objects.order_by("slug").values_list("meta", flat=True)))


def _worker_name(worker) -> str:
    for line in reversed(worker.log.read_text(errors="replace").splitlines()):
        if line.endswith(" ready."):
            return line.rsplit(" ", 2)[-2]
    raise AssertionError("no 'ready.' line in the worker log")


def _ping(worker) -> float:
    from kb.celery import app

    t0 = time.monotonic()
    replies = app.control.ping(destination=[_worker_name(worker)], timeout=5)
    assert replies, "no pong within 5 s"
    return time.monotonic() - t0


def test_r10a_a_spark_worker_starts_its_jvms_only_in_pool_children_after_the_fork(pipeline, observe):
    """The tasks module and the worker's main process touch no JVM: each pool child starts
    its own SparkSession after the fork, in the background (KB_SPARK_WARM_START, issue 16),
    so no JVM is ever the main process's own child (docs/reliability.md A1)."""
    time.sleep(2)
    tree = descendants(pipeline.worker.proc.pid)
    children = pool_children(pipeline.worker.proc.pid)
    java = java_processes(tree + [pipeline.worker.proc.pid])
    observe(f"idle Spark worker: {len(tree)} processes below the main process, JVMs: {java or 'none'}")
    assert len(children) == 2
    assert pipeline.worker.proc.pid not in java and not set(java) & set(children)
    for pid in java:   # each JVM runs below one pool child, never below the main process itself
        assert any(pid in descendants(child) for child in children), pid


def test_r11a_spark_that_cannot_start_fails_the_analysis_readably_and_the_worker_goes_on(pipeline, cast, seed_tgz,
                                                                                        observe):
    restart_worker(pipeline, JAVA_HOME="/nonexistent-jdk")
    try:
        client = Client()
        times, errors = [], []
        for i in range(2):       # twice: the second analysis is not stuck behind the first failure
            t0 = time.monotonic()
            analysis_id = api_upload_id(client, cast.alice_token, f"no-java-{i}.tgz", seed_tgz)
            a = wait_for_status(analysis_id, ("done", "failed"), 60, pipeline.worker)
            times.append(time.monotonic() - t0)
            errors.append(a.error)
            assert a.status == "failed"
            assert a.error.startswith("Spark could not start on local[1]: PySparkRuntimeError: [JAVA_GATEWAY_EXITED]"), a.error
            assert a.error.endswith("(check the worker's JAVA_HOME and SPARK_MASTER)")
            assert "\n" not in a.error and "Traceback" not in a.error
        ping = _ping(pipeline.worker)
        observe(f"JAVA_HOME=/nonexistent-jdk: two analyses failed in {times[0]:.1f} s and {times[1]:.1f} s: "
                f"{errors[0]!r}; ping answered in {ping:.2f} s")
        assert max(times) < 30
        assert pipeline.worker.proc.poll() is None
    finally:
        restart_worker(pipeline, JAVA_HOME=os.environ.get("JAVA_HOME"))


# ---------------------------------------------------------------- chaos


@pytest.mark.chaos
@pytest.mark.spark
def test_r10_two_analyses_at_once_on_two_pool_children_each_with_its_own_jvm(pipeline, cast, seed_tgz, local_result,
                                                                           observe):
    client = Client()
    t0 = time.monotonic()
    ids = [api_upload_id(client, cast.alice_token, f"spark-{i}.tgz", seed_tgz) for i in range(2)]
    pings = []
    from kb.models import Analysis

    while Analysis.objects.filter(id__in=ids, status__in=["queued", "running"]).exists():
        pings.append(_ping(pipeline.worker))
        time.sleep(2)
        assert time.monotonic() - t0 < 600, "the two analyses did not finish in 10 minutes"
    done = [wait_for_status(i, ("done", "failed"), 10, pipeline.worker) for i in ids]
    elapsed = time.monotonic() - t0
    jvms = java_processes(descendants(pipeline.worker.proc.pid))
    owners = {int(a.lease_owner.split(":")[1]) for a in done}
    observe(f"2 Spark analyses at once on -c 2: {[a.status for a in done]} in {elapsed:.0f} s "
            f"(startup {[a.result['stats']['startup_seconds'] if a.result else None for a in done]} s); "
            f"ran in children {sorted(owners)}; JVMs now {len(jvms)}; {len(pings)} pings during the run, "
            f"slowest {max(pings):.2f} s")
    for a in done:
        assert a.status == "done", a.error
        assert a.result["stats"]["engine"] == "spark"
        assert result_core(a.result)["findings"] == result_core(local_result)["findings"]
    assert max(pings) < 5
    assert len(owners) == 2, "both children worked"
    assert len(jvms) == 2, f"one JVM per pool child: {[cmdline(p)[:80] for p in jvms]}"
    assert java_processes([pipeline.worker.proc.pid]) == []


@pytest.mark.chaos
@pytest.mark.spark
def test_r2_a_killed_spark_worker_leaves_no_orphan_jvm(pipeline, cast, seed_tgz, observe):
    """kill -9 the worker's main process while its pool children hold JVMs: the children
    die with it (PDEATHSIG) and each JVM exits when its Python driver is gone."""
    from kb.models import Analysis

    jvms = java_processes(descendants(pipeline.worker.proc.pid))
    if not jvms:      # R10 warms them up; alone, warm one now
        analysis_id = api_upload_id(Client(), cast.alice_token, "warm.tgz", seed_tgz)
        assert wait_for_status(analysis_id, ("done", "failed"), 600, pipeline.worker).status == "done"
        jvms = java_processes(descendants(pipeline.worker.proc.pid))
    analysis_id = api_upload_id(Client(), cast.alice_token, "killed-with-its-jvm.tgz", seed_tgz)
    wait_for(lambda: Analysis.objects.filter(id=analysis_id, status="running").exists(), 60, 0.05, "a run")
    tree = descendants(pipeline.worker.proc.pid)
    os.kill(pipeline.worker.proc.pid, signal.SIGKILL)
    t0 = time.monotonic()
    pipeline.worker.proc.wait(10)
    wait_for(lambda: not [p for p in tree if _alive(p)], 60, 0.2, "every process of the worker's tree to exit")
    observe(f"killed the Spark worker's main process: its {len(tree)} descendants, JVMs {jvms} among them, "
            f"all gone {time.monotonic() - t0:.1f} s later")
    pipeline.worker.proc = None
    restart_worker(pipeline)
    done = wait_for_status(analysis_id, ("done", "failed"), 600, pipeline.worker)
    observe(f"after the restart the interrupted analysis was {done.status} (attempt {done.attempts})")
    assert done.status == "done", done.error


def _alive(pid: int) -> bool:
    from tests.reliability.util import alive

    return alive(pid)


@pytest.mark.chaos
@pytest.mark.spark
def test_r11_a_spark_master_that_does_not_answer_fails_readably_and_the_worker_recovers_once_it_is_up(
        pipeline, cast, seed_tgz, local_result, tmp_path, observe):
    """SPARK_MASTER names a port nobody listens on: the analysis fails with one readable
    line in bounded time, the worker keeps answering. Then a master starts on that port:
    the same worker (no restart) analyses the next bundle, and a re-analysis of the failed
    one is done too."""
    port = free_port()
    master = f"spark://127.0.0.1:{port}"
    restart_worker(pipeline, concurrency=1, SPARK_MASTER=master)
    client = Client()
    t0 = time.monotonic()
    analysis_id = api_upload_id(client, cast.alice_token, "closed-master.tgz", seed_tgz)
    pings = []
    from kb.models import Analysis

    while Analysis.objects.filter(id=analysis_id, status__in=["queued", "running"]).exists():
        pings.append(_ping(pipeline.worker))
        time.sleep(5)
        assert time.monotonic() - t0 < 600, "still running after 10 minutes with an unreachable master"
    a = Analysis.objects.get(id=analysis_id)
    seconds = time.monotonic() - t0
    observe(f"SPARK_MASTER={master} (nothing listens): {a.status} after {seconds:.0f} s: {a.error!r}; "
            f"pings meanwhile: slowest {max(pings, default=0):.2f} s")
    assert a.status == "failed"
    assert a.error.startswith(f"Spark could not start on {master}: "), a.error
    assert "\n" not in a.error and len(a.error) < 700 and " at " not in a.error   # a reason, not a Java stack
    assert pipeline.worker.proc.poll() is None

    with _standalone_cluster_on(port, tmp_path) as started:
        observe(f"started a standalone master and worker on port {port} in {started:.0f} s")
        t1 = time.monotonic()
        later = api_upload_id(client, cast.alice_token, "master-is-back.tgz", seed_tgz)
        b = wait_for_status(later, ("done", "failed"), 600, pipeline.worker)
        observe(f"the same worker, not restarted: the next analysis was {b.status} after "
                f"{time.monotonic() - t1:.0f} s {b.error or ''}")
        assert b.status == "done", b.error
        assert result_core(b.result)["findings"] == result_core(local_result)["findings"]

        web = Client()
        web.force_login(cast.alice)
        response = web.post(f"/analyses/{analysis_id}/reanalyze/")
        assert response.status_code == 302
        again = int(response["Location"].rsplit("=", 1)[1])
        c = wait_for_status(again, ("done", "failed"), 600, pipeline.worker)
        observe(f"re-analysis of the failed one: {c.status}")
        assert c.status == "done", c.error
        restart_worker(pipeline, concurrency=2, SPARK_MASTER="local[1]")   # before the cluster goes


def _standalone_cluster_on(port: int, tmp_path):
    """tests.spark_cluster's master and worker, on a given master port."""
    import contextlib
    import sys

    from tests.spark_cluster import REGISTERED, _start, _stop, _wait_for, spark_home

    @contextlib.contextmanager
    def cluster():
        home = spark_home()
        env = dict(os.environ, SPARK_HOME=str(home), SPARK_LOCAL_IP="127.0.0.1", PYSPARK_PYTHON=sys.executable)
        spark_class = str(home / "bin" / "spark-class")
        work = tmp_path / "spark-work"
        work.mkdir(exist_ok=True)
        logs = tmp_path / "master.log", tmp_path / "spark-worker.log"
        t0 = time.monotonic()
        procs = []
        try:
            procs.append(_start([spark_class, "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                                 "--port", str(port), "--webui-port", str(free_port())], env, logs[0]))
            procs.append(_start([spark_class, "org.apache.spark.deploy.worker.Worker", f"spark://127.0.0.1:{port}",
                                 "--host", "127.0.0.1", "--cores", "2", "--memory", "1g", "--webui-port",
                                 str(free_port()), "--work-dir", str(work)], env, logs[1]))
            _wait_for(logs[1], REGISTERED, procs, 180, logs[0])
            yield time.monotonic() - t0
        finally:
            for proc in reversed(procs):
                _stop(proc)

    return cluster()


@pytest.mark.chaos
@pytest.mark.spark
def test_an_executor_killed_mid_scan_is_retried_or_fails_clearly_never_stuck(pipeline, cast, tmp_path, observe):
    from django.core.files import File

    from analyzers.engine import analyze_paths
    from kb.models import Analysis, Runbook
    from kb.services.analyses import analysis_start
    from kb.services.bundles import bundle_store
    from tests.spark_cluster import standalone_cluster

    line = (b"2024-03-01 10:00:01,000 INFO org.apache.hadoop.hdfs.server.datanode.DataNode: Receiving "
            b"BP-1:blk_123_456 src: /10.0.0.1:5000 dest: /10.0.0.2:50010 of size 134217728\n")
    path = tmp_path / "hadoop-hdfs-datanode-dn1.log"
    with open(path, "wb") as out:
        block = line * (8 * 1024 * 1024 // len(line))
        for _ in range(40):                                   # ~320 MB: several Spark tasks
            out.write(block)
        out.write(b"2024-03-01 10:00:02,000 ERROR DataNode: java.io.IOException: No space left on device\n")
    runbooks = list(Runbook.objects.order_by("slug").values_list("meta", flat=True))
    expected = analyze_paths([str(path)], runbooks)["findings"]

    t0 = time.monotonic()
    with standalone_cluster(cores=2, memory="1g") as cluster:
        observe(f"standalone cluster up at {cluster.url} in {time.monotonic() - t0:.0f} s")
        restart_worker(pipeline, concurrency=1, SPARK_MASTER=cluster.url, SPARK_EXECUTOR_MEMORY="512m")
        with open(path, "rb") as fh:
            bundle = bundle_store(incident=cast.incident, user=cast.alice, uploaded_file=File(fh, name=path.name))
        analysis = analysis_start(bundle=bundle)
        wait_for(lambda: Analysis.objects.filter(id=analysis.id, stage="scanning").exists(), 600, 0.1,
                 "the Spark scan to start")
        executors = [p for p in _all_pids() if "CoarseGrainedExecutorBackend" in cmdline(p)]
        assert executors, "no executor JVM found"
        for pid in executors:
            os.kill(pid, signal.SIGKILL)
        killed = time.monotonic()
        observe(f"scan started; killed executor JVM(s) {executors} (SIGKILL)")
        a = wait_for_status(analysis.id, ("done", "failed"), 600, pipeline.worker)
        observe(f"{a.status} {time.monotonic() - killed:.0f} s after the kill, attempt {a.attempts}: "
                f"{a.error or 'findings ' + str([f['runbook'] for f in a.result['findings']])}")
        if a.status == "done":
            assert [f["runbook"] for f in a.result["findings"]] == [f["runbook"] for f in expected]
        else:
            assert a.error and "\n" not in a.error and len(a.error) < 700
    restart_worker(pipeline, concurrency=2, SPARK_MASTER="local[1]")


def _all_pids() -> list[int]:
    return [int(d) for d in os.listdir("/proc") if d.isdigit()]
