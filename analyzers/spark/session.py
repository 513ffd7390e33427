"""One SparkSession per process, created on first use and then kept warm.

Rules (docs/reliability.md A1):
- never at import time: importing this module does not import pyspark, let
  alone start a JVM; the first get_spark() call does;
- never shared across fork(): the session is remembered together with the pid
  that created it. A forked child (Celery prefork) that inherited a parent's
  session forgets it, and pyspark's class-level gateway with it, and starts its
  own. Py4J cannot share one gateway between processes.
- configured in one place: driver memory and JVM options only take effect
  before the JVM starts, i.e. on the first call in the process.

The master comes from the argument, else SPARK_MASTER, else local[*]. With a
cluster master (spark://, yarn, k8s://) this process is the driver in client
mode: executors must reach it, and every file handed to the engine must be at
the same path on every executor, so BUNDLES_DIR (where bundles are staged)
must then be shared storage (NFS, or a mount of the same volume). In local and
standalone-on-one-machine modes the executors share this machine's files.
The code is not needed there: the session ships the analyzers package to the
executors as a zip (shipping.py), so they need Python and the hyperscan wheel.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

from analyzers.spark.shipping import analyzers_zip

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

log = logging.getLogger(__name__)

DEFAULT_MASTER = "local[*]"
APP_NAME = "kb-analyzer"
LOG4J2_FILE = Path(__file__).with_name("log4j2.properties")
# The driver JVM (also the executor in local mode) only shuttles tasks and bytes between
# Python processes; on 2 cores its C2 JIT and parallel GC threads competed with the
# scan. C1 only and the serial collector, measured on the bench's 1 GB bundle: JVM
# CPU per warm scan 0.41-1.08 -> 0.25-0.36 s, per warm-up 1.8 -> 0.7 s, session
# start 24.5 -> 9.6 s (load 6-8). KB_SPARK_DRIVER_JVM_OPTIONS replaces them.
DRIVER_JVM_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"

_lock = threading.Lock()
_session: SparkSession | None = None
_session_pid: int | None = None
_session_master: str | None = None
_startup_seconds = 0.0


def get_spark(master: str | None = None) -> SparkSession:
    """This process's SparkSession; starts it (20-45 s on 2 cores) on the first call.

    `master=None` means the running session whatever its master, else
    SPARK_MASTER or local[*]. Asking for a different master than the running
    session's is an error: one JVM, one SparkContext, one master per process.
    """
    global _session, _session_pid, _session_master, _startup_seconds
    with _lock:
        live = _live_session()
        if live is not None:
            if master and master != _session_master:
                raise RuntimeError(f"this process already runs a SparkSession on {_session_master}; "
                                   f"cannot also run one on {master}")
            return live
        wanted = master or os.environ.get("SPARK_MASTER") or DEFAULT_MASTER
        t0 = time.monotonic()
        _session = _build(wanted)
        _startup_seconds = time.monotonic() - t0
        _session_pid, _session_master = os.getpid(), wanted
        log.info("SparkSession on %s started in %.1f s (pid %d)", wanted, _startup_seconds, _session_pid)
        return _session


def is_warm() -> bool:
    """True when this process already has a usable session (the next get_spark() is free).
    False while another thread is starting one (the background warm start of a
    Celery pool child): the caller's get_spark() then waits for that start."""
    if not _lock.acquire(blocking=False):
        return False
    try:
        return _live_session() is not None
    finally:
        _lock.release()


def startup_seconds() -> float:
    """How long the creation of this process's session took (0.0 if none was created)."""
    return _startup_seconds if _session_pid == os.getpid() else 0.0


def stop_spark() -> None:
    """Stop this process's session (tests, worker shutdown). A no-op in a forked child."""
    global _session, _session_pid, _session_master
    with _lock:
        if _session is not None and _session_pid == os.getpid():
            _session.stop()
        _session = _session_pid = _session_master = None


def _live_session() -> SparkSession | None:
    """The cached session if this process created it and it was not stopped."""
    global _session, _session_pid, _session_master
    if _session is None:
        return None
    if _session_pid != os.getpid():
        log.warning("forked child %d inherited the SparkSession of pid %s; starting its own",
                    os.getpid(), _session_pid)
        _forget_inherited_spark()
        _session = _session_pid = _session_master = None
        return None
    if _session.sparkContext._jsc is None or _stopped_in_jvm(_session):   # stopped behind our back
        _discard_stopped_context()
        _session = _session_pid = _session_master = None
        return None
    return _session


def _stopped_in_jvm(session: SparkSession) -> bool:
    """True when the JVM stopped this session's SparkContext (its master went away and
    the application was killed) or the JVM itself is gone."""
    try:
        return bool(session.sparkContext._jsc.sc().isStopped())
    except Exception:   # noqa: BLE001 - py4j errors of every kind mean the same: unusable
        return True


def _discard_stopped_context() -> None:
    """Forget a SparkContext that is stopped or never got going: pyspark keeps it as the
    active context and would hand it back to every later getOrCreate() ("Cannot call
    methods on a stopped SparkContext") until the process ends. If the JVM is gone too,
    forget the gateway as well, so that the next get_spark() launches a new one."""
    if "pyspark" not in sys.modules:
        return
    from pyspark import SparkContext
    from pyspark.sql import SparkSession

    context = SparkContext._active_spark_context
    if context is not None:
        try:
            context.stop()
        except Exception:   # noqa: BLE001 - best effort: it is being dropped anyway
            pass
    SparkContext._active_spark_context = None
    SparkSession._instantiatedSession = None
    SparkSession._activeSession = None
    if SparkContext._gateway is not None:
        try:
            SparkContext._gateway.jvm.java.lang.System.currentTimeMillis()
        except Exception:   # noqa: BLE001
            SparkContext._gateway = None
            SparkContext._jvm = None


def _forget_inherited_spark() -> None:
    """Drop pyspark's class-level references to the parent's gateway and session.

    Without this, getOrCreate() in a forked child hands back the parent's
    session and the child talks to the parent's JVM over the parent's Py4J
    connection (A1.1: replies get crossed). The parent's JVM is left alone.
    """
    if "pyspark" not in sys.modules:
        return
    from pyspark import SparkContext
    from pyspark.sql import SparkSession

    SparkContext._gateway = None
    SparkContext._jvm = None
    SparkContext._active_spark_context = None
    SparkSession._instantiatedSession = None
    SparkSession._activeSession = None


def _build(master: str) -> SparkSession:
    # Environment read when the JVM and the Python workers are launched.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    if master.startswith("local") or "//127.0.0.1" in master or "//localhost" in master:
        # Avoid "hostname resolves to a loopback address ... using <eth0 IP>".
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")

    from pyspark.sql import SparkSession

    jvm_options = os.environ.get("KB_SPARK_DRIVER_JVM_OPTIONS", DRIVER_JVM_OPTIONS)
    builder = (
        SparkSession.builder.master(master)
        .appName(APP_NAME)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.memory", os.environ.get("SPARK_DRIVER_MEMORY", "1g"))
        .config("spark.driver.extraJavaOptions", f"-Dlog4j2.configurationFile=file:{LOG4J2_FILE} {jvm_options}")
        # Python workers live across tasks, so each keeps its loaded Hyperscan database.
        .config("spark.python.worker.reuse", "true")
        .config("spark.sql.shuffle.partitions", "8")
    )
    if os.environ.get("SPARK_EXECUTOR_MEMORY"):
        builder = builder.config("spark.executor.memory", os.environ["SPARK_EXECUTOR_MEMORY"])
    try:
        spark = builder.getOrCreate()
    except Exception:
        _discard_stopped_context()   # e.g. no master answered: the next call must start afresh
        raise
    spark.sparkContext.setLogLevel(os.environ.get("SPARK_LOG_LEVEL", "WARN"))
    # Executors import analyzers from this zip, not from a checkout (shipping.py).
    spark.sparkContext.addPyFile(str(analyzers_zip()))
    # Py4J logs every connection at INFO ("Closing down clientserver connection").
    logging.getLogger("py4j").setLevel(logging.WARNING)
    return spark
