"""A Spark standalone cluster whose two workers run as separate hosts (issue 16).

    with multi_host_cluster(tmp_path) as cluster:
        ... SPARK_MASTER=cluster.url, SPARK_LOCAL_IP=cluster.driver_ip ...

As root with `ip netns` (this machine's containers allow it), each worker runs
in its own network namespace, on a bridge made for the test: the master and
the driver listen on the bridge's address, each worker on its own, so tasks,
broadcasts and the shipped analyzers zip really cross a network. Each worker
also runs in its own mount namespace with a tmpfs over this checkout (it can
not read the code, so the code it runs came from the driver), with its own
working and scratch directories, its own HOME, an environment without
PYTHONPATH, and its cwd outside the repository. Without root or `ip`, the
workers get all of that but the network namespace (loopback), and
`cluster.isolated_network` says so.

Daemons run through spark-class in the foreground, each in its own process
group (tests/spark_cluster.py, docs/reliability.md A5).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import uuid
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

from tests.spark_cluster import REGISTERED, _start, _stop, _wait_for, free_port, spark_home

ROOT = Path(__file__).resolve().parent.parent


@dataclass
class HostCluster:
    url: str
    driver_ip: str
    isolated_network: bool
    shared: Path                   # storage every host reads (the bundle, the staging directory)
    host_dirs: list[Path] = field(default_factory=list)
    logs: list[Path] = field(default_factory=list)


def venv_python() -> str:
    """The executors' Python: this environment's interpreter, by a path outside the
    checkout (.venv may be a symlink into it)."""
    return str(Path(sys.prefix).resolve() / "bin" / "python")


def _hide_checkout(host: Path) -> str:
    """Shell commands (run in the host's own mount namespace) that lay a tmpfs over the
    checkout. A virtualenv made inside the checkout (`make install`'s .venv, as in a CI
    clone) is the host's Python installation, not the code: it is bound back in place."""
    venv = Path(sys.prefix).resolve()
    if ROOT not in venv.parents:
        return f'mount -t tmpfs kb-no-checkout "{ROOT}"'
    keep = host / "python-env"
    return (f'mkdir -p "{keep}" && mount --bind "{venv}" "{keep}" && mount -t tmpfs kb-no-checkout "{ROOT}"'
            f' && mkdir -p "{venv}" && mount --bind "{keep}" "{venv}"')


def can_make_network_namespaces() -> bool:
    return os.geteuid() == 0 and shutil.which("ip") is not None and shutil.which("unshare") is not None


@contextmanager
def multi_host_cluster(base: Path, workers: int = 2, cores: int = 1, memory: str = "1g",
                       timeout: float = 240.0) -> Iterator[HostCluster]:
    home = spark_home()
    spark_class = str(home / "bin" / "spark-class")
    with ExitStack() as stack:
        net = stack.enter_context(_bridge(workers)) if can_make_network_namespaces() else None
        driver_ip = net["bridge_ip"] if net else "127.0.0.1"
        shared = base / "shared"
        shared.mkdir()
        port = free_port()
        url = f"spark://{driver_ip}:{port}"
        cluster = HostCluster(url=url, driver_ip=driver_ip, isolated_network=net is not None, shared=shared)
        master_env = dict(os.environ, SPARK_HOME=str(home), SPARK_LOCAL_IP=driver_ip)
        procs: list[subprocess.Popen] = []
        try:
            master_log = base / "master.log"
            cluster.logs.append(master_log)
            procs.append(_start([spark_class, "org.apache.spark.deploy.master.Master", "--host", driver_ip,
                                 "--port", str(port), "--webui-port", str(free_port())], master_env, master_log))
            for i in range(workers):
                host = base / f"host{i + 1}"
                for sub in ("work", "local", "home"):
                    (host / sub).mkdir(parents=True)
                ip = net["host_ips"][i] if net else "127.0.0.1"
                env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(host / "home"),
                       "SPARK_HOME": str(home), "SPARK_LOCAL_IP": ip, "SPARK_LOCAL_DIRS": str(host / "local"),
                       "PYSPARK_PYTHON": venv_python(), "LANG": "C.UTF-8"}
                if os.environ.get("JAVA_HOME"):
                    env["JAVA_HOME"] = os.environ["JAVA_HOME"]
                cmd = [spark_class, "org.apache.spark.deploy.worker.Worker", url, "--host", ip,
                       "--cores", str(cores), "--memory", memory, "--webui-port", str(free_port()),
                       "--work-dir", str(host / "work")]
                if net:
                    # Own network namespace; own mount namespace with the checkout hidden.
                    cmd = ["ip", "netns", "exec", net["namespaces"][i], "unshare", "--mount", "sh", "-c",
                           _hide_checkout(host) + f' && cd "{host}" && exec "$@"', "sh", *cmd]
                log = base / f"host{i + 1}.log"
                cluster.host_dirs.append(host)
                cluster.logs.append(log)
                procs.append(_start_in(cmd, env, log, host))
            for log in cluster.logs[1:]:
                _wait_for(log, REGISTERED, procs, timeout, *cluster.logs)
            yield cluster
        finally:
            for p in reversed(procs):
                _stop(p)


def _start_in(cmd: list[str], env: dict[str, str], log: Path, cwd: Path) -> subprocess.Popen:
    with open(log, "wb") as out:
        return subprocess.Popen(cmd, env=env, cwd=cwd, stdout=out, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True)


@contextmanager
def _bridge(hosts: int) -> Iterator[dict]:
    """A bridge in this namespace and `hosts` network namespaces on it, removed afterwards."""
    tag = uuid.uuid4().hex[:6]
    subnet = f"10.{200 + int(tag[:2], 16) % 50}.{int(tag[2:4], 16)}"
    bridge = f"kbbr{tag}"
    made: list[list[str]] = []

    def ip(*args: str) -> None:
        subprocess.run(["ip", *args], check=True, capture_output=True, text=True)

    net = {"bridge_ip": f"{subnet}.1", "host_ips": [], "namespaces": []}
    try:
        ip("link", "add", bridge, "type", "bridge")
        made.append(["link", "del", bridge])
        ip("addr", "add", f"{subnet}.1/24", "dev", bridge)
        ip("link", "set", bridge, "up")
        for i in range(hosts):
            ns, outside, inside = f"kbh{tag}{i}", f"kbv{tag}{i}", f"kbp{tag}{i}"
            host_ip = f"{subnet}.{11 + i}"
            ip("netns", "add", ns)
            made.append(["netns", "del", ns])
            ip("link", "add", outside, "type", "veth", "peer", "name", inside)
            made.append(["link", "del", outside])
            ip("link", "set", inside, "netns", ns)
            ip("link", "set", outside, "master", bridge)
            ip("link", "set", outside, "up")
            ip("netns", "exec", ns, "ip", "addr", "add", f"{host_ip}/24", "dev", inside)
            ip("netns", "exec", ns, "ip", "link", "set", inside, "up")
            ip("netns", "exec", ns, "ip", "link", "set", "lo", "up")
            net["host_ips"].append(host_ip)
            net["namespaces"].append(ns)
        yield net
    finally:
        for args in reversed(made):
            subprocess.run(["ip", *args], capture_output=True)
