"""A real Spark standalone cluster (one master, one worker) from the pip pyspark package.

    with standalone_cluster() as cluster:
        ... SPARK_MASTER=cluster.url ...

The pip package has bin/spark-class but not sbin/start-master.sh, so both
daemons run in the foreground through spark-class (docs/reliability.md A5), each
in its own process group: stopping a group also stops the executor JVMs the
worker launched. Ports are picked free; logs are kept for failure messages.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

REGISTERED = "Successfully registered with master"


@dataclass
class Cluster:
    url: str
    work_dir: Path
    master_log: Path
    worker_log: Path


def spark_home() -> Path:
    import pyspark

    return Path(pyspark.__file__).resolve().parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def standalone_cluster(cores: int = 2, memory: str = "2g", timeout: float = 180.0) -> Iterator[Cluster]:
    home = spark_home()
    spark_class = str(home / "bin" / "spark-class")
    env = dict(os.environ, SPARK_HOME=str(home), SPARK_LOCAL_IP="127.0.0.1", PYSPARK_PYTHON=sys.executable)
    with tempfile.TemporaryDirectory(prefix="kb-spark-cluster-") as tmp:
        tmp_path = Path(tmp)
        work = tmp_path / "work"
        work.mkdir()
        master_log, worker_log = tmp_path / "master.log", tmp_path / "worker.log"
        port = free_port()
        url = f"spark://127.0.0.1:{port}"
        procs: list[subprocess.Popen] = []
        try:
            procs.append(_start([spark_class, "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                                 "--port", str(port), "--webui-port", str(free_port())], env, master_log))
            procs.append(_start([spark_class, "org.apache.spark.deploy.worker.Worker", url, "--host", "127.0.0.1",
                                 "--cores", str(cores), "--memory", memory, "--webui-port", str(free_port()),
                                 "--work-dir", str(work)], env, worker_log))
            _wait_for(worker_log, REGISTERED, procs, timeout, master_log)
            yield Cluster(url=url, work_dir=work, master_log=master_log, worker_log=worker_log)
        finally:
            for p in reversed(procs):
                _stop(p)


def _start(cmd: list[str], env: dict[str, str], log: Path) -> subprocess.Popen:
    with open(log, "wb") as out:
        return subprocess.Popen(cmd, env=env, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                start_new_session=True)


def _wait_for(log: Path, text: str, procs: list[subprocess.Popen], timeout: float, *other_logs: Path) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if text in log.read_text(errors="replace"):
            return
        dead = [p for p in procs if p.poll() is not None]
        if dead:
            raise RuntimeError(f"spark daemon exited with {dead[0].returncode}:\n{_tails(log, *other_logs)}")
        time.sleep(0.5)
    raise TimeoutError(f"no {text!r} after {timeout:.0f} s:\n{_tails(log, *other_logs)}")


def _tails(*logs: Path) -> str:
    return "\n".join(f"--- {p.name}\n" + "\n".join(p.read_text(errors="replace").splitlines()[-30:]) for p in logs)


def _stop(p: subprocess.Popen) -> None:
    """SIGTERM the daemon's process group (the daemon and the executors it started), then SIGKILL."""
    for sig, wait in ((signal.SIGTERM, 15), (signal.SIGKILL, 5)):
        try:
            os.killpg(p.pid, sig)
        except ProcessLookupError:
            return
        try:
            p.wait(wait)
            # Executors may outlive the daemon for a moment; sweep the group once more.
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            return
        except subprocess.TimeoutExpired:
            continue
