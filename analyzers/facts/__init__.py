"""Facts from structured files: config keys, GC pauses, TIME_WAIT counts, threads.

    extract_facts(file, notes=None) -> list[Fact]
    effective_config(facts) -> {key: last value}

Fact names and captures are fixed by runbooks/README.md ("Facts"):
config {key, value}; gc.pause {value ms, kind}; netstat.time_wait {value};
jstack.thread {value name, state, frames}. Parsers add a few optional
captures (gc: uptime, cause; netstat: source; jstack: locks, status, ...).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable

from analyzers.facts import flink_yaml, gc, gc_jdk8, hadoop_xml, jstack, netstat, properties
from analyzers.facts._util import iter_lines, read_config_text
from analyzers.model import BundleFile, Fact

__all__ = ["extract_facts", "effective_config"]

log = logging.getLogger(__name__)

SNIFF_LINES = 200
_GC_HINT_RE = re.compile(
    r"Total time for which application threads were stopped|"
    r"^CommandLine flags: .*-XX:\+Print(?:GC|GCDetails)\b|^\[[^\]]*\](?:\[[^\]]*\])*\[gc[\],\s]|"
    r"^(?:\[[^\]]*\])*\s*GC\(\d+\) Pause ")   # unified logging without tags or decorations

_COPY_SUFFIX_RE = re.compile(r"(?:\.(?:\d+|bak|orig|old|save))+$")
_STDOUT_RE = re.compile(r"\.out(?:\.\d+)?$")   # taskmanager.out, hbase-...-regionserver.out.1


def extract_facts(file: BundleFile, notes: list[str] | None = None) -> list[Fact]:
    """Facts of one bundle file, [] when it has none. Never raises on bad input:
    a file that cannot be read or parsed gives no facts and, when notes is
    given, one line saying why (like StagedBundle.notes)."""
    try:
        if file.kind == "config":
            return _config(file, notes)
        if file.kind == "gc":
            return gc.parse(file, notes)
        if file.kind == "jstack":
            return jstack.parse(file, notes)
        if file.kind == "netstat":
            return netstat.parse(file, notes)
        if file.kind == "log":
            return _log(file, notes)
        return []
    except Exception as exc:   # noqa: BLE001 - one odd file must not stop the analysis
        log.warning("facts: %s: %s", file.path, exc, exc_info=not isinstance(exc, OSError))
        if notes is not None:
            notes.append(f"{file.path}: no facts ({type(exc).__name__}: {exc})")
        return []


def effective_config(facts: Iterable[Fact]) -> dict[str, str]:
    """Last value per config key, in the order given (later files override)."""
    out: dict[str, str] = {}
    for f in facts:
        if f.name == "config":
            out[f.captures["key"]] = f.captures["value"]
    return out


def _config(file: BundleFile, notes: list[str] | None) -> list[Fact]:
    text = read_config_text(file, notes)
    if text is None:
        return []
    # "zoo.cfg.bak", "hdfs-site.xml.1": judge by the name under the copy suffix.
    name = _COPY_SUFFIX_RE.sub("", file.path.rsplit("/", 1)[-1].lower())
    if name.endswith(".xml"):
        return hadoop_xml.parse(file, text, notes)
    if name.endswith((".sh", ".cmd", ".bat")):
        return []   # hadoop-env.sh and friends are scripts, not key=value files
    if name.endswith((".yaml", ".yml")):
        return flink_yaml.parse(file, text)
    if name.endswith((".properties", ".cfg", ".conf")) or "zoo.cfg" in name:
        return properties.parse(file, text)
    # Unknown name: XML starts with '<', anything else is read as key=value.
    if text.lstrip().startswith("<"):
        return hadoop_xml.parse(file, text, notes)
    return properties.parse(file, text)


def _log(file: BundleFile, notes: list[str] | None) -> list[Fact]:
    """A .log/.out that is really a GC log, or that holds a thread dump.

    Only the first lines are sniffed so plain logs cost one short read. A .out
    is stdout, where kill -3 writes its dump at any point, so it is always
    searched for the dump marker.
    """
    head = [line for _, line in iter_lines(file, None, max_lines=SNIFF_LINES)]
    facts: list[Fact] = []
    if any(gc_jdk8.is_start(line) or _GC_HINT_RE.search(line) for line in head):
        facts += gc.parse(file, notes)
    first = next((line for line in head if line.strip()), "")
    if jstack.HEADER_RE.match(first):
        facts += jstack.parse(file, notes)       # a raw dump saved under a .log name
    elif any(jstack.MARKER in line for line in head) or _is_stdout(file.path):
        facts += jstack.parse(file, notes, strict=True)
    return facts


def _is_stdout(path: str) -> bool:
    name = path.rsplit("/", 1)[-1].lower()
    return bool(_STDOUT_RE.search(name)) or "stdout" in name

