"""Bundle paths: what a path says about its file, and which archive names are safe.

Sample paths and what classify() makes of them:

    hadoop-080-037/kern.log                          -> ("hadoop-080-037", "kernel", "log")
    logs/flink-root-taskexecutor-0-worker7.log.1     -> ("worker7", "flink-taskmanager", "log")
    dn2/hadoop-hdfs-datanode-dn2.log.2019-04-23      -> ("dn2", "hdfs-datanode", "log")
    c1-hd-dn18/conf/hdfs-site.xml                    -> ("c1-hd-dn18", "hdfs", "config")
    flink-taskmanager/taskmanager.log                -> (None, "flink-taskmanager", "log")
    prod2-logs/2024-03-08/dn2/x.log                  -> ("dn2", "unknown", "log")   (the deepest host)

An unknown file is ("unknown", "log"); a path with no host-like part has host None.
"""

from __future__ import annotations

import re
import unicodedata

# Directory names that are never a host: layout words and component names.
GENERIC_DIRS = {
    "log", "logs", "var", "tmp", "data", "conf", "config", "etc", "opt", "home", "root", "bundle",
    "userlogs", "containers", "flink", "hadoop", "hdfs", "yarn", "hbase", "kafka", "zookeeper",
    "spark", "hive", "kernel", "os", "jstack", "gc", "netstat", "dmesg",
    "flink-taskmanager", "flink-jobmanager", "taskmanager", "jobmanager",
}
# Role words that, found in a file or directory name, name the component. Order matters:
# "secondarynamenode" before "namenode", "taskexecutor" before "executor".
ROLE_WORDS = [
    ("taskexecutor", "flink-taskmanager"), ("taskmanager", "flink-taskmanager"),
    ("standalonesession", "flink-jobmanager"), ("jobmanager", "flink-jobmanager"),
    ("secondarynamenode", "hdfs-secondarynamenode"), ("namenode", "hdfs-namenode"),
    ("datanode", "hdfs-datanode"), ("journalnode", "hdfs-journalnode"), ("zkfc", "hdfs-zkfc"),
    ("nodemanager", "yarn-nodemanager"), ("resourcemanager", "yarn-resourcemanager"),
    ("regionserver", "hbase-regionserver"), ("hmaster", "hbase-master"),
    ("zookeeper", "zookeeper"), ("hiveserver2", "hive-server2"), ("metastore", "hive-metastore"),
    ("kafka", "kafka-broker"),
]
# <prog>-<user>-<role>[-<n>]-<host>: the daemon log names of the Hadoop family and Flink.
DAEMON_RE = re.compile(
    r"^(?P<prog>hadoop|yarn|mapred|hbase|flink|zookeeper|spark)-(?P<user>[^/]+?)-(?P<role>"
    r"taskexecutor|taskmanager|standalonesession|jobmanager|historyserver|client|"
    r"namenode|datanode|secondarynamenode|journalnode|zkfc|nodemanager|resourcemanager|"
    r"timelineserver|proxyserver|regionserver|master|server|"
    r"org\.apache\.spark\.deploy\.\w+\.\w+)(?:-(?P<host>[^/]+))?$")
_DAEMON_COMPONENT = {"hbase-master": "hbase-master", "zookeeper-server": "zookeeper",
                     "mapred-historyserver": "mapreduce-historyserver"}
# Rotation and compression suffixes: .1, .2.gz, .2019-04-23, .2019-04-23-17, .0.current
ROTATION_RE = re.compile(r"(\.(gz|bz2|xz|\d{1,4}|\d{4}-\d{2}-\d{2}(-\d{2})?|current))+$")
LOG_EXT_RE = re.compile(r"(\.(log|out|txt|err))+$")
DATE_RE = re.compile(r"\d{4}-?\d{2}-?\d{2}")
VERSION_RE = re.compile(r"^[a-z_]*-?v?\d+(\.\d+){1,2}([-._][a-z0-9]+)*$", re.I)
ID_PREFIX_RE = re.compile(r"^(application|appattempt|container|attempt|job|task|app|executor|"
                          r"driver|stage|run|backup|tmp|bundle|incident|case)[-_]", re.I)
# dn2, zk-a, dn-src, worker-7, broker1: role words that hosts are named after
ROLE_ABBREV_RE = re.compile(r"^((dn|nn|jn|rs|zk|nm|rm|tm|jm|hm)(\d+|-[a-z0-9]+)|"
                            r"(broker|worker|node|master|slave)-?\d+)", re.I)
HOSTNAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9.-]{0,252}$")
# Words that make a folder a wrapper, never a host: "prod2-logs", "diag-bundle-3", "case42_export"
WRAPPER_WORDS = {"log", "logs", "bundle", "bundles", "dump", "dumps", "diag", "diags", "diagnostic",
                 "diagnostics", "report", "reports", "incident", "backup", "export", "archive", "collect",
                 "collected", "support", "snapshot", "tmp", "output", "files", "upload", "uploads", "ticket"}


def classify(bundle_path: str) -> tuple[str | None, str, str]:
    """(host, component, kind) for a posix bundle path; kind is log|config|gc|jstack|netstat."""
    parts = [p for p in bundle_path.split("/") if p]
    name = parts[-1] if parts else ""
    dirs = parts[:-1]
    base = _base_name(name)
    lower = base.lower()
    daemon = DAEMON_RE.match(LOG_EXT_RE.sub("", lower))
    host = next((d for d in reversed(dirs) if is_host_like(d)), None)   # the deepest: outer ones wrap
    if host is None and daemon and daemon.group("host"):
        host = base[daemon.start("host"):daemon.end("host")]
        if daemon.group("prog") in ("flink", "spark"):   # flink-<user>-<role>-<n>-<host>
            host = re.sub(r"^\d+-", "", host)
    kind = _kind(lower, [d.lower() for d in dirs])
    return host, _component(lower, [d.lower() for d in dirs], kind, daemon), kind


def is_host_like(part: str) -> bool:
    """A directory name that names a host: dn2, c1-hd-dn18, hadoop-081-159, worker-7, 10.0.0.5.

    Dates, versions (flink-1.15.2), ids (container_01_000002, app-20190423...) and long digit
    runs (bundle-20190423) are not hosts; role abbreviations (dn-src, zk-a) are.
    """
    low = part.lower()
    if low in GENERIC_DIRS or not HOSTNAME_RE.match(part) or ID_PREFIX_RE.match(low):
        return False
    if WRAPPER_WORDS & set(re.split(r"[-_.]", low)):
        return False
    if ROLE_ABBREV_RE.match(low) and low.split("-", 1)[-1] not in GENERIC_DIRS:   # not "nm-logs"
        return True
    if not any(c.isdigit() for c in low) or DATE_RE.search(low) or re.search(r"\d{6}", low):
        return False
    if re.fullmatch(r"\d+(\.\d+){3}", low):          # an IPv4 address
        return True
    return any(c.isalpha() for c in low) and not VERSION_RE.match(low)


def _base_name(name: str) -> str:
    """app.log.2.gz -> app.log; gc.log.0.current -> gc.log; zookeeper.out.1 -> zookeeper.out."""
    stripped = ROTATION_RE.sub("", name)
    return stripped or name


def _kind(name: str, dirs: list[str]) -> str:
    if re.match(r"^gc([-_.].*)?\.log$", name) or re.search(r"[-_.]gc\.log$", name) or name.endswith(".gc"):
        return "gc"
    if name.startswith("jstack") or "threaddump" in name or "thread-dump" in name or name.endswith(".tdump"):
        return "jstack"
    if re.match(r"^(netstat|ss)([-_.].*)?\.(txt|out|log)$", name):
        return "netstat"
    if (name.endswith("-site.xml") or name in ("flink-conf.yaml", "zoo.cfg", "spark-defaults.conf")
            or name.endswith(".properties")
            or (name == "config.yaml" and "flink" in "/".join(dirs) and "conf" in "/".join(dirs))):
        return "config"
    return "log"


def _component(name: str, dirs: list[str], kind: str, daemon: re.Match | None) -> str:
    if daemon:
        prog, role = daemon.group("prog"), daemon.group("role")
        if f"{prog}-{role}" in _DAEMON_COMPONENT:
            return _DAEMON_COMPONENT[f"{prog}-{role}"]
        if prog == "spark" and role.startswith("org."):
            return "spark-" + role.rsplit(".", 1)[-1].lower()
        return role_component(role) or f"{prog}-{role}"
    if name in ("kern.log", "dmesg") or name.startswith("dmesg"):
        return "kernel"
    if name in ("messages", "syslog"):
        return "os"
    if kind == "netstat":
        return "os"
    if kind == "config":
        return _config_component(name, dirs)
    if name.startswith("zookeeper"):
        return "zookeeper"
    if name in ("server.log", "kafkaserver.out", "log-cleaner.log", "kafka-authorizer.log"):
        return "kafka-broker"
    if name in ("controller.log", "state-change.log"):
        return "kafka-controller"
    if name in ("stderr", "stdout"):
        return "spark-driver" if any("driver" in d or d.endswith("_000001") for d in dirs) else "spark-executor"
    by_name = role_component(name)
    if by_name:
        return by_name
    if kind in ("gc", "jstack"):
        return next((c for c in map(role_component, reversed(dirs)) if c), "jvm")
    return next((c for c in map(role_component, reversed(dirs)) if c), "unknown")


def role_component(word: str) -> str | None:
    """"hadoop-hdfs-datanode.service" -> "hdfs-datanode"; None when no role word is in it."""
    return next((comp for key, comp in ROLE_WORDS if key in word), None)


def _config_component(name: str, dirs: list[str]) -> str:
    site = {"core": "hdfs", "hdfs": "hdfs", "yarn": "yarn", "mapred": "yarn", "hbase": "hbase",
            "hive": "hive"}
    if name.endswith("-site.xml"):
        return site.get(name[: -len("-site.xml")], "hadoop")
    if name in ("flink-conf.yaml", "config.yaml"):
        return "flink"
    if name == "zoo.cfg":
        return "zookeeper"
    if name == "spark-defaults.conf":
        return "spark"
    if name in ("server.properties", "producer.properties", "consumer.properties") or name.startswith("connect-"):
        return "kafka"
    words = "/".join(dirs)
    return next((w for w in ("flink", "kafka", "zookeeper", "hbase", "spark", "hive", "yarn", "hdfs")
                 if w in words), "unknown")


# ---- archive member names ----------------------------------------------------------------

MAX_COMPONENT_BYTES = 255
MAX_PATH_BYTES = 4096
_BAD_CATEGORIES = {"Cc", "Cf", "Cs", "Zl", "Zp"}    # controls, bidi overrides, lone surrogates


def safe_member_path(name: str) -> str | None:
    """The posix bundle path for an archive member name, None for a directory entry.

    Raises ValueError(reason) for names that must never become paths:
    "../../etc/passwd" (path traversal), "/etc/cron.d/x" (absolute path), "a\\nb.log"
    (control character in name), a 300-byte component (name too long).
    Backslashes count as separators, so "..\\\\..\\\\win.ini" is a traversal too.
    """
    if any(unicodedata.category(c) in _BAD_CATEGORIES for c in name):
        raise ValueError("control character in name")
    unified = name.replace("\\", "/")
    if unified.startswith("/") or re.match(r"^[A-Za-z]:", unified):
        raise ValueError("absolute path")
    parts = [p for p in unified.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise ValueError("path traversal")
    if any(len(p.encode("utf-8")) > MAX_COMPONENT_BYTES for p in parts) or len(unified.encode()) > MAX_PATH_BYTES:
        raise ValueError("name too long")
    if not parts or unified.endswith("/"):
        return None
    return "/".join(parts)


def escape_name(name: str, limit: int = 300) -> str:
    """A name safe to print on one line: controls, bidi marks and undecodable bytes as escapes."""
    out = []
    for c in name:
        o = ord(c)
        if 0xDC80 <= o <= 0xDCFF:                    # a byte that was not valid in the name's encoding
            out.append(f"\\x{o - 0xDC00:02x}")
        elif c.isprintable() or c == " ":
            out.append(c)
        else:
            out.append(f"\\x{o:02x}" if o < 0x100 else f"\\u{o:04x}" if o < 0x10000 else f"\\U{o:08x}")
    text = "".join(out)
    return text if len(text) <= limit else text[:limit] + "..."


ARCHIVE_NAMES = [(".tar.gz", "a gzip-compressed tar archive"), (".tgz", "a gzip-compressed tar archive"),
                 (".tar.bz2", "a bzip2-compressed tar archive"), (".tbz2", "a bzip2-compressed tar archive"),
                 (".tar.xz", "an xz-compressed tar archive"), (".txz", "an xz-compressed tar archive"),
                 (".zip", "a zip archive"), (".tar", "a tar archive"), (".gz", "a gzip file"),
                 (".bz2", "a bzip2 file"), (".xz", "an xz file")]


def expected_archive(name: str) -> str | None:
    """What the name promises: "x.tgz" -> "a gzip-compressed tar archive"; "x.log" -> None."""
    low = name.lower()
    return next((what for ext, what in ARCHIVE_NAMES if low.endswith(ext)), None)


def strip_archive_suffix(name: str) -> str:
    """host1.tar.gz -> host1, app.log.2.gz -> app.log.2: the prefix for what is inside."""
    low = name.lower()
    ext = next((ext for ext, _ in ARCHIVE_NAMES if low.endswith(ext)), "")
    return name[: len(name) - len(ext)] or name


def decode_zip_name(name: str, utf8_flag: bool) -> str:
    """zipfile decodes names without the UTF-8 flag as cp437; Chinese Windows zips are GBK really."""
    if utf8_flag or name.isascii():
        return name
    raw = name.encode("cp437")
    for encoding in ("utf-8", "gb18030"):
        try:
            return raw.decode(encoding)
        except UnicodeDecodeError:
            pass
    return name


def fix_name(name: str) -> str:
    """Repair a name with undecodable bytes (surrogate escapes from tarfile or os.walk).

    Chinese Linux boxes write GB18030 names, so try that; otherwise the bad bytes become U+FFFD.
    """
    try:
        name.encode("utf-8")
        return name
    except UnicodeEncodeError:
        raw = name.encode("utf-8", "surrogateescape") if _only_escapes(name) else None
    if raw is None:
        return name.encode("utf-8", "replace").decode("utf-8")
    try:
        return raw.decode("gb18030")
    except UnicodeDecodeError:
        return raw.decode("utf-8", "replace")


def _only_escapes(name: str) -> bool:
    return all(not 0xD800 <= ord(c) <= 0xDFFF or 0xDC80 <= ord(c) <= 0xDCFF for c in name)
