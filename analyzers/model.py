"""Plain data passed between the stages of the analysis engine.

bundle.py  -> StagedBundle (files on disk, UTF-8, with host and component)
scan.py    -> Hit (a signature matched on one line, with its record header)
facts/     -> Fact (a value from a structured file: config key, GC pause, ...)
diagnose.py-> the result dict of docs/contract.md §2
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol


class Progress(Protocol):
    """What an analysis says as it goes: each stage as it starts ("unpacking",
    "scanning", "scoring"), and the bytes scanned so far (from the RangeRunner)."""

    def stage(self, name: str) -> None: ...

    def scanned(self, done: int, total: int) -> None: ...


class BundleError(Exception):
    """Unusable input: the message is one clear line naming the file."""


@dataclass(frozen=True)
class Limits:
    max_unpacked_bytes: int = 20 * 1024**3
    max_files: int = 20_000
    max_ratio: int = 200          # decompressed / compressed, per archive
    max_depth: int = 3            # archives nested in archives
    max_line_bytes: int = 64 * 1024**2   # longer lines are cut, and the cut is reported


@dataclass(frozen=True)
class BundleFile:
    path: str                 # path inside the bundle, posix ("hadoop-080-037/kern.log")
    disk_path: str            # UTF-8 text on disk (transcoded when the source was not UTF-8)
    size: int                 # bytes of disk_path
    host: str | None          # inferred from the path or file name
    component: str            # kernel, flink-jobmanager, hdfs-datanode, ... ("unknown")
    kind: str = "log"         # log | config | gc | jstack | netstat
    encoding: str = "utf-8"   # encoding of the original bytes


@dataclass
class Skipped:
    path: str
    reason: str               # "binary", "symlink", "path traversal", "nested too deep", ...


@dataclass
class StagedBundle:
    files: list[BundleFile] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)   # e.g. "line 3 of a.log cut at 67108864 bytes"
    total_bytes: int = 0


@dataclass(frozen=True)
class Header:
    """What a record's first line says about the record."""
    timestamp: str | None     # ISO 8601 without zone, e.g. "2019-04-23T17:39:19.323"
    level: str | None = None  # TRACE DEBUG INFO WARN ERROR FATAL
    logger: str | None = None
    thread: str | None = None
    host: str | None = None   # syslog lines carry one


@dataclass
class Hit:
    """One line that matched one symptom."""
    symptom: str
    path: str
    line: int                 # 1-based line number in the bundle file
    text: str                 # the matched line (trimmed to 2000 chars for display)
    captures: dict[str, Any]
    timestamp: str | None     # from the record header (the line itself or the line that starts its record)
    level: str | None
    host: str | None
    component: str
    # The timestamp as a datetime, parsed once here, for time windows and order; the
    # result keeps `timestamp` as written (seconds or milliseconds).
    when: datetime | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.when = parse_when(self.timestamp)


def parse_when(timestamp: str | None) -> datetime | None:
    """A record's timestamp as written (ISO, seconds or milliseconds) -> datetime; None if absent or unreadable."""
    try:
        return datetime.fromisoformat(timestamp) if timestamp else None
    except ValueError:
        return None


Occurrence = tuple[str | None, datetime | None]   # (host, when) of a matched line


def occurrences_meet(a: Occurrence, b: Occurrence, *, hosts: str, within_s: float | None,
                     after: bool = False) -> bool:
    """Whether occurrence b stands to occurrence a as a relation (diagnose.py) or a link
    (ranking.py) asks: `hosts` same/other/any, b at most `within_s` seconds from a either
    way, and with `after` not before a. An unknown host or time fails a condition on it."""
    (host_a, when_a), (host_b, when_b) = a, b
    if hosts == "same" and (host_a is None or host_a != host_b):
        return False
    if hosts == "other" and (host_a is None or host_b is None or host_a == host_b):
        return False
    if within_s is not None or after:
        if when_a is None or when_b is None:
            return False
        delta = (when_b - when_a).total_seconds()
        if (after and delta < 0) or (within_s is not None and abs(delta) > within_s):
            return False
    return True


@dataclass
class Fact:
    name: str                 # config | gc.pause | netstat.time_wait | jstack.thread
    path: str
    line: int
    text: str
    captures: dict[str, Any]  # always has "value"
    timestamp: str | None = None
    host: str | None = None
    component: str = "unknown"
