"""Which host a bundle file belongs to, when folders wrap the bundle or the path says nothing.

    wrapper_depth(["prod2-logs/dn1/a.log", "prod2-logs/dn2/b.log"]) -> 1   (prod2-logs wraps)
    wrapper_depth(["a/b/rs4/x.log", "a/b/rs4/gc.log"])              -> 2   (rs4 is the host)
    content_hints(text) -> Hints(host="dn1.example.com", component="hdfs-datanode")

A folder that every file of an upload sits in wraps the bundle: `tar czf prod2-logs.tgz
prod2-logs/` must give the hosts the same files give archived flat. Only the innermost folder
of such a chain can mean something, and only when no host folder lies below it and it names a
host (rs4, tsd-2, 10.0.0.5; not prod2-logs, a date, a version or an id: paths.is_host_like) or a
component (flink-taskmanager/); any other wrapper is dropped from the paths. When neither
folders nor file name name a host, the first 64 KiB of the file may: Hadoop's STARTUP_MSG,
Flink's "will use hostname/address" and -Dlog.file, Spark's "Started daemon with process
name: pid@host"; and the component too, when the path gives none: entry points, or the loggers
only one daemon has (analyzers/writer_process.py). The path's component wins when it says one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from analyzers.layouts.base import Section
from analyzers.paths import classify, is_host_like, role_component
from analyzers.writer_process import component_from_loggers

_COMPONENT_DIRS = {"flink-taskmanager", "flink-jobmanager", "taskmanager", "jobmanager", "kernel",
                   "jstack", "gc", "netstat", "dmesg"}
SAMPLE_CHARS = 64 * 1024


def wrapper_depth(paths: list[str]) -> int:
    """How many leading folders, shared by every path, only wrap the bundle (see the module doc)."""
    dirs = [p.split("/")[:-1] for p in paths]
    if not dirs:
        return 0
    depth = 0
    for level in zip(*dirs):
        if len(set(level)) != 1:
            break
        depth += 1
    if depth == 0:
        return 0
    inner = dirs[0][depth - 1]
    if inner.lower() in _COMPONENT_DIRS or role_component(inner.lower()):
        return depth - 1                       # datanode/, flink-taskmanager/: says whose logs
    hosts_below = all(any(is_host_like(d) for d in ds[depth:]) for ds in dirs)
    return depth - 1 if is_host_like(inner) and not hosts_below else depth


def strip_wrapper(path: str, depth: int) -> str:
    """"a/b/rs4/x.log", 2 -> "rs4/x.log"; a path with no folder that deep stays as it is."""
    parts = path.split("/", depth)
    return parts[-1] if depth and len(parts) > depth else path


@dataclass(frozen=True)
class Hints:
    host: str | None = None
    component: str | None = None


_STARTUP_HOST_RE = re.compile(r"^STARTUP_MSG:\s+host = ([^/\s]+)", re.M)
_STARTUP_ROLE_RE = re.compile(r"^STARTUP_MSG: Starting (\w+)", re.M)
_FLINK_TM_HOST_RE = re.compile(r"TaskManager will use hostname/address '([^']+)'")
_LOG_FILE_RE = re.compile(r"-Dlog\.file=\S*/([^/\s]+)")
_SPARK_DAEMON_RE = re.compile(r"Started daemon with process name: \d+@([\w.\-]+)")
# Entry points and main classes that say which process wrote the log (Flink, Spark, MapReduce).
_MAIN_CLASSES = [
    (re.compile(r"Starting (?:StandaloneSession|YarnSession|YarnJob|YarnApplication|KubernetesSession|"
                r"KubernetesApplication|StandaloneApplication)ClusterEntrypoint"), "flink-jobmanager"),
    (re.compile(r"Starting (?:TaskManagerRunner|YarnTaskExecutorRunner|Kubernetes TaskExecutor runner)"),
     "flink-taskmanager"),
    (re.compile(r"org\.apache\.spark\.deploy\.yarn\.ApplicationMaster|SparkContext: Running Spark version"),
     "spark-driver"),
    (re.compile(r"CoarseGrainedExecutorBackend"), "spark-executor"),
    (re.compile(r"MRAppMaster"), "mapreduce-am"),
    (re.compile(r"org\.apache\.hadoop\.mapred\.YarnChild"), "mapreduce-task"),
]


def content_hints(text: str) -> Hints:
    """Host and component the first lines of a log give away (text: at most SAMPLE_CHARS)."""
    text = text[:SAMPLE_CHARS]
    host = component = None
    m = _STARTUP_HOST_RE.search(text)
    if m:
        host = m.group(1)
        role = _STARTUP_ROLE_RE.search(text)
        component = role_component(role.group(1).lower()) if role else None
    m = _LOG_FILE_RE.search(text)
    if m:
        named_host, named_component, _ = classify(m.group(1))
        host = host or named_host
        component = component or (named_component if named_component != "unknown" else None)
    m = _FLINK_TM_HOST_RE.search(text)
    if m:
        host, component = host or m.group(1), component or "flink-taskmanager"
    m = _SPARK_DAEMON_RE.search(text)
    if m:
        host = host or m.group(1)
    if component is None:
        component = next((c for rx, c in _MAIN_CLASSES if rx.search(text)), None)
    if component is None:
        component = component_from_loggers(text)   # a daemon's own loggers (analyzers/writer_process.py)
    return Hints(host, component)


def describe_file(path: str, disk: str, section: Section | None = None) -> tuple[str | None, str, str]:
    """(host, component, kind) of a staged file: a collector section's host first, then the path
    (folders, file name), then the content; a section's component comes from its content first
    (stderr of a container says whether it is a driver or an executor)."""
    host, component, kind = classify(path)
    hints = None
    if section is not None:
        host = section.host or host
        if section.component:
            component = section.component
        else:
            hints = content_hints(_sample(disk))
            component = hints.component or component
    if host is None or component == "unknown":
        hints = hints or content_hints(_sample(disk))
        host = host or hints.host
        component = hints.component if component == "unknown" and hints.component else component
    return host, component, kind


def _sample(disk: str) -> str:
    with open(disk, "rb") as f:
        return f.read(SAMPLE_CHARS).decode("utf-8", "replace")
