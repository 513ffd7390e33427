"""Record headers: does a log line start a record, and what does its prefix say?

    parse_header(line, default_year=None) -> Header | None
    is_record_start(line) -> bool
    infer_year(lines_or_iso_timestamps) -> int | None

A line starts a record when it begins with a recognised timestamp layout
(possibly after a level in brackets, a file name, or a syslog/BGL prefix).
Continuation lines (stack frames, "Caused by: ...", "... 16 more", plain
message text) give None.  Every syslog line carries its own prefix, so the
"Call Trace:" lines of a kern.log ARE record starts.

Header.timestamp is ISO 8601 without a zone, "2019-04-23T17:39:19.323":
the wall-clock time as written.  A zone or offset in the line ("Z",
"+08:00", "+0800") is dropped, not applied.  Fractions are cut (not
rounded) to milliseconds; a line without a fraction gives seconds only
("2016-09-28T04:30:30").  Epoch seconds (HPC) are rendered in UTC.

Layouts without a year (syslog RFC 3164, Android logcat, Proxifier, glog)
take `default_year`; when it is None the current year is used.  The engine
should pass the year of the first full timestamp of the bundle (see
infer_year).  To tell whether a line carried its own year, pass
default_year=0: yearless layouts then give "0000-MM-DDT...".  Layouts with a two-digit year (HDFS "081109", Spark "17/06/09")
map 00-69 to 20xx and 70-99 to 19xx.

Lines that are record starts but carry no wall-clock time give a Header
whose timestamp is None:
    dmesg                    "[12345.678901] ..."
    JDK 9+ unified GC log    "[12.345s][info][gc] ..."
    JDK 8 GC log             "1234.567: [GC (Allocation Failure) ..."

Supported layouts (first character decides which regexes are tried):
    log4j / logback / Hadoop / HBase / YARN / Flink default / Windows CBS /
    ZooKeeper / OpenStack / Hive / Python logging / Storm:
        2019-04-23 17:39:19,323 INFO [thread] logger: msg      (also "T", "." and zones)
        2020-10-16 17:05:05,939 WARN org.apache...ClientCnxn - msg
        2015-07-29 17:41:44,747 - INFO  [thread:Class@774] - msg
        2017-05-16 00:00:00.008 25746 INFO nova.osapi_compute.wsgi.server [req-..] msg
        2016-09-28 04:30:30, Info                  CBS    msg
    rsyslog high precision  2019-04-23T17:39:19.323456+08:00 host tag[pid]: msg
    JDK 8 GC with dates     2019-04-23T17:39:19.323+0800: 1234.567: [GC ...
    Flink (custom)          [INFO ] 2019-04-23 17:39:19,323(437903235) --> [thread] logger.method(F.java:1): msg
    Cassandra               INFO  [main] 2019-04-23 17:39:19,323 CassandraDaemon.java:123 - msg
    Kafka                   [2021-03-04 10:11:12,345] WARN msg (kafka.server.ReplicaManager)
    Airflow                 [2021-03-04 10:11:12,345] {taskinstance.py:1150} ERROR - msg
    Elasticsearch           [2019-04-23T17:39:19,323][WARN ][o.e.m.j.JvmGcMonitorService] [node] msg
    JDK 9+ unified GC       [2019-04-23T17:39:19.323+0800][info][gc] GC(12) Pause Young ...
    Spark / YARN / Go       17/06/09 20:10:40 INFO executor.Executor: msg  (also yyyy/MM/dd)
    HDFS (loghub)           081109 203615 148 INFO dfs.DataNode$PacketResponder: msg
    syslog RFC 3164         Apr 23 17:39:19 hadoop-080-037 kernel: msg   (optional <PRI>)
    syslog RFC 5424         <165>1 2003-10-11T22:14:15.003Z host app procid msgid msg
    dmesg -T / Apache       [Tue Apr 23 17:39:19 2019] msg / [Sun Dec 04 04:47:44 2005] [error] msg
    Android logcat          03-17 16:13:38.811  1702  2395 D WindowManager: msg
    glog (k8s, Impala)      E0423 17:39:19.323456   12345 reflector.go:123] msg
    BGL / Thunderbird       - 1117838570 2005.06.03 R02-M1-N0-C:J12-U11 2005-06-03-15.42.50.675872 ...
                            - 1131566461 2005.11.09 dn228 Nov 9 12:01:01 dn228/dn228 crond[2915]: msg
    HPC                     134681 node-246 unix.hw state_change.unavailable 1077804742 1 msg
    HealthApp               20171223-22:15:29:606|Step_LSC|30002312|msg
    OpenStack (loghub)      nova-api.log.1.2017-05-16_13:53:08 2017-05-16 00:00:00.008 25746 INFO ...
    Proxifier               [10.30 16:49:06] chrome.exe - msg

Fields: level is one of TRACE DEBUG INFO WARN ERROR FATAL (WARNING->WARN,
SEVERE->ERROR, NOTICE/CONFIG->INFO, FINE->DEBUG, FINER/FINEST/VERBOSE->TRACE,
CRITICAL/CRIT/ALERT/EMERG/PANIC->FATAL, single letters V D I W E F A, any
case; syslog <PRI> severity when present).  logger is the logger / class /
component / syslog tag / Android tag / GC tags when the layout shows one;
thread is the thread name (log4j "[thread]", Flink "--> [thread]", ZooKeeper
"[thread:Class@line]") or the thread id (Android tid, glog, Apache tid);
process ids are not reported.  host is set for syslog, RFC 5424, BGL,
Thunderbird and HPC lines.
"""

from __future__ import annotations

from typing import Iterable

from analyzers.timestamps.layouts import (  # package-private names
    _DISPATCH,
    _bracket,
    _digit,
    _upper,
    parse_header,
)
from analyzers.timestamps.patterns import (  # package-private names
    _BRACKET_LEVEL_RE,
    _BRACKET_YMD_RE,
    _MONTHS,
    _SLASH_TS_RE,
    _SYSLOG_RE,
    _YMD_TS_RE,
    _rx,
)

__all__ = ["parse_header", "is_record_start", "infer_year"]

# --------------------------------------------------------------------------- API


def is_record_start(line: str) -> bool:
    """parse_header(line) is not None; cheaper: the common layouts only match a timestamp."""
    if not line:
        return False
    f = _DISPATCH.get(line[0])
    if f is None:
        return False
    if f is _digit:
        if _YMD_TS_RE.match(line) or _SLASH_TS_RE.match(line):
            return True
    elif f is _upper:
        if line[:3] in _MONTHS and _SYSLOG_RE.match(line):
            return True
    elif f is _bracket:
        if _BRACKET_YMD_RE.match(line):
            return True
        m = _BRACKET_LEVEL_RE.match(line)
        if m and _YMD_TS_RE.match(line, m.end()):
            return True
    return f(line, 0) is not None


_YEAR_RE = _rx(r"(\d{4})-[01]\d-[0-3]\d")


def infer_year(lines_or_iso_timestamps: Iterable[str]) -> int | None:
    """The year of the first full timestamp: items may be ISO timestamps or log lines.

    Lines whose layout has no year (syslog, logcat, ...) are skipped.
    """
    for item in lines_or_iso_timestamps:
        if not item:
            continue
        m = _YEAR_RE.match(item)
        if m and (len(item) == 10 or item[10:11] == "T"):
            return int(m.group(1))
        h = parse_header(item, 0)       # year 0 marks "the line had no year"
        if h is not None and h.timestamp and not h.timestamp.startswith("0000"):
            return int(h.timestamp[:4])
    return None

