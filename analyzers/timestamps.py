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

import re
import time
from typing import Iterable

from analyzers.model import Header

__all__ = ["parse_header", "is_record_start", "infer_year"]

# --------------------------------------------------------------------------- levels

_LEVEL_MAP = {
    "TRACE": "TRACE", "FINEST": "TRACE", "FINER": "TRACE", "VERBOSE": "TRACE", "V": "TRACE",
    "DEBUG": "DEBUG", "FINE": "DEBUG", "D": "DEBUG",
    "INFO": "INFO", "NOTICE": "INFO", "CONFIG": "INFO", "I": "INFO",
    "WARN": "WARN", "WARNING": "WARN", "W": "WARN",
    "ERROR": "ERROR", "ERR": "ERROR", "SEVERE": "ERROR", "E": "ERROR",
    "FATAL": "FATAL", "CRITICAL": "FATAL", "CRIT": "FATAL", "ALERT": "FATAL",
    "EMERG": "FATAL", "PANIC": "FATAL", "F": "FATAL", "A": "FATAL",
}
_LEVEL_MAP.update({f"TRACE{i}": "TRACE" for i in range(1, 9)})   # Apache 2.4 trace1..trace8

# syslog severity (PRI % 8) -> level
_SEVERITY = ("FATAL", "FATAL", "FATAL", "ERROR", "WARN", "INFO", "INFO", "DEBUG")


def _level(word: str | None) -> str | None:
    if not word:
        return None
    return _LEVEL_MAP.get(word) or _LEVEL_MAP.get(word.upper())


# A level word in upper, lower or capitalised case, not followed by a word character
# (spelled out: an (?i:) alternation is slower).
_LEVEL_WORDS = ("TRACE[1-8]?", "DEBUG", "INFO", "NOTICE", "WARNING", "WARN", "ERROR", "ERR",
                "SEVERE", "FATAL", "CRITICAL", "CRIT", "ALERT", "EMERG", "PANIC", "FINEST",
                "FINER", "FINE", "CONFIG", "VERBOSE")
_LVL = "(?:" + "|".join(
    "|".join((w, w.lower(), w[0] + w[1:].lower())) for w in _LEVEL_WORDS) + r")(?![\w])"
# A thread name in brackets may hold one level of nested brackets: QuorumPeer[myid=1]/...
# (unrolled: a per-character alternation is four times slower)
_THR = r"[^\[\]\n]*(?:\[[^\[\]\n]*\][^\[\]\n]*)*"
_MONTHS = {m: f"{i:02d}" for i, m in enumerate(
    ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"), 1)}
_MON = r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)"
_DOW = r"(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)"

# --------------------------------------------------------------------------- regexes


def _rx(pattern: str) -> re.Pattern:
    return re.compile(pattern, re.ASCII)     # ASCII classes are faster, and \d means 0-9


# yyyy-MM-dd[T ]HH:mm:ss[.,fraction][zone]
_YMD = (r"(?P<d>\d{4}-[01]\d-[0-3]\d)[T ](?P<t>[0-2]\d:[0-5]\d:[0-6]\d)(?:[.,](?P<f>\d+))?"
        r"(?:Z|[+-][01]\d(?::?[0-5]\d)?)?")

# After the time: optional pid / thread / " - " separators, a level, then [thread] and logger.
_PRE = (r"(?:\(\d+\))?,?[ ]+(?:\[myid:[^\]]*\][ ]+)?(?:-[ ]+)?"
        r"(?:\[(?P<th1>" + _THR + r")\][ ]+)?(?:\d+[ ]+)?")
_POST = (r"(?:\[(?P<th>" + _THR + r")\](?:[ ]+|\s*$))?"
         r"(?:(?P<lg>[A-Za-z_][\w.$\-]*)(?::\d+)?"
         r"(?=:(?:\s|$)|[ ]+-[ ]|[ ]+\[|[ ]{2,}))?")
_LVLP = r"\[?(?P<lvl>" + _LVL + r")[ ]*\]?[ ]*"

_YMD_RE = _rx(_YMD + r"(?:" + _PRE + _LVLP + _POST + r")?")
_YMD_TS_RE = _rx(_YMD)                       # is_record_start's fast path
_POST_RE = _rx(r"[ ]+" + _POST)              # level already known (level-first layouts)
_PY_RE = _rx(r"[ ]+-[ ]+(?P<lg>[\w.$\-]+)[ ]+-[ ]+(?P<lvl>" + _LVL + r")[ ]+-")
_STORM_RE = _rx(r"[ ]+(?P<lg>[\w.$\-]+)[ ]+(?P<th>\S+)[ ]+\[(?P<lvl>" + _LVL + r")\]")
_SYSLOG_AFTER_ISO_RE = _rx(
    r"[ ]+(?P<host>[\w.\-]+)[ ]+(?P<tag>[\w/.][^\s\[:]*)(?:\[\d+\])?:(?:\s|$)")
_FLINK_ARROW_RE = _rx(
    r"(?:\(\d+\))?[ ]+-->[ ]+\[(?P<th>" + _THR + r")\](?:[ ]+(?P<lg>[\w.$]+)\.[\w$<>\-]+\()?")

# [LEVEL ] <timestamp> ...   (Flink's custom layout)
_BRACKET_LEVEL_RE = _rx(r"\[(?P<lvl>" + _LVL + r")[ ]*\][ ]*")
# [<timestamp>] ...   (Kafka, Airflow, Elasticsearch, unified GC)
_BRACKET_YMD_RE = _rx(r"\[" + _YMD + r"\]")
_KAFKA_RE = _rx(r"[ ]+(?P<lvl>" + _LVL + r")")
_AIRFLOW_RE = _rx(r"[ ]+\{(?P<lg>[^}:\s]*)(?::\d+)?\}[ ]+(?P<lvl>" + _LVL + r")")
_PAREN_LOGGER_RE = _rx(r"\(([A-Za-z_][\w.$\-]*)\)\s*$")
_BRACKET_RE = _rx(r"[ ]?\[([^\[\]\n]*)\]")
_UPTIME_BRACKET_RE = _rx(r"\[\d+(?:\.\d+)?[mn]?s\]")      # [12.345s] [1234ms]
_DMESG_RE = _rx(r"\[[ ]*\d+\.\d+\]")
_PROXIFIER_RE = _rx(
    r"\[(?P<mo>[01]\d)\.(?P<dd>[0-3]\d) (?P<t>[0-2]\d:[0-5]\d:[0-6]\d)\][ ]+(?P<lg>[^\s]+)")
_DOW_RE = _rx(
    r"\[" + _DOW + r" (?P<mon>" + _MON + r") +(?P<dd>\d{1,2}) (?P<t>[0-2]\d:[0-5]\d:[0-6]\d)"
    r"(?:\.(?P<f>\d+))? (?P<y>\d{4})\]"
    r"(?:[ ]+\[(?:(?P<lg>[\w\-]+):)?(?P<lvl>" + _LVL + r")\])?"
    r"(?:[ ]+\[pid \d+(?::tid (?P<th>\d+))?\])?")

# syslog RFC 3164, after an optional <PRI>
_SYSLOG_RE = _rx(
    r"(?P<mon>" + _MON + r") +(?P<dd>\d{1,2}) (?P<t>[0-2]\d:[0-5]\d:[0-6]\d)(?:\.(?P<f>\d+))?"
    r"[ ]+(?P<host>[^\s]+)(?:[ ]+(?P<tag>[\w/.][^\s\[:]*))?")
_PRI_RE = _rx(r"<(?P<pri>\d{1,3})>")
_RFC5424_RE = _rx(
    r"1 " + _YMD + r" (?P<host>\S+) (?P<app>\S+) \S+ \S+ ")

# BGL and Thunderbird: alert flag, epoch, yyyy.MM.dd, node, then either layout
_BGL_RE = _rx(
    r"(?P<flag>[^\s]+) \d{9,10} (?P<y>\d{4})\.(?P<mo>\d\d)\.(?P<dd>\d\d) (?P<host>\S+) (?:"
    r"(?P<bd>\d{4}-\d\d-\d\d)-(?P<bh>\d\d)\.(?P<bm>\d\d)\.(?P<bs>\d\d)(?:\.(?P<bf>\d+))?"
    r" \S+ \S+ (?P<comp>\S+) (?P<lvl>[A-Za-z]+)"
    r"|(?P<mon>" + _MON + r") +(?P<tdd>\d{1,2}) (?P<t>[0-2]\d:[0-5]\d:[0-6]\d) \S+"
    r"(?: (?P<tag>[\w/.][^\s\[:]*))?)")
_HPC_RE = _rx(
    r"\d+ (?P<host>\S+) (?P<comp>\S+) \S+ (?P<ep>\d{9,10}) -?\d+ ")
_HDFS_RE = _rx(
    r"(?P<yy>\d\d)(?P<mo>[01]\d)(?P<dd>[0-3]\d) (?P<h>[0-2]\d)(?P<mi>[0-5]\d)(?P<s>[0-6]\d)"
    r" (?:\d+ )?(?P<lvl>" + _LVL + r")[ ]*" + _POST)
_SLASH_RE = _rx(
    r"(?P<y>\d\d(?:\d\d)?)/(?P<mo>[01]\d)/(?P<dd>[0-3]\d) (?P<t>[0-2]\d:[0-5]\d:[0-6]\d)"
    r"(?:[.,](?P<f>\d+))?(?:" + _PRE + _LVLP + _POST + r")?")
_SLASH_TS_RE = _rx(r"\d\d(?:\d\d)?/[01]\d/[0-3]\d [0-2]\d:[0-5]\d:[0-6]\d")
_HEALTH_RE = _rx(                      # fields are not zero-padded: "20171223-7:5:0:9|"
    r"(?P<y>\d{4})(?P<mo>[01]\d)(?P<dd>[0-3]\d)-(?P<h>\d{1,2}):(?P<mi>\d{1,2}):(?P<s>\d{1,2})"
    r":(?P<f>\d{1,3})\|(?P<lg>[^|]*)\|")
_ANDROID_RE = _rx(
    r"(?P<mo>[01]\d)-(?P<dd>[0-3]\d) (?P<t>[0-2]\d:[0-5]\d:[0-6]\d)\.(?P<f>\d+) +\d+ +(?P<th>\d+)"
    r" (?P<lvl>[VDIWEFA]) (?P<lg>[^:]*):")
_GC_UPTIME_RE = _rx(r"\d+\.\d+: \[")
_GLOG_RE = _rx(
    r"(?P<lvl>[IWEF])(?P<mo>[01]\d)(?P<dd>[0-3]\d) (?P<t>[0-2]\d:[0-5]\d:[0-6]\d)\.(?P<f>\d+)"
    r" +(?P<th>\d+) (?P<lg>[^\s:\]]+)(?::\d+)?\]")
_LEVEL_FIRST_RE = _rx(                       # Cassandra
    r"(?P<lvl>TRACE|DEBUG|INFO|WARN|ERROR|FATAL) +\[(?P<th>" + _THR + r")\] " + _YMD
    + r"(?: (?P<lg>[\w.$\-]+?)(?:\.java)?:\d+ -)?")
_UPPER_WORD_RE = _rx(r"[A-Z_]+ +[\d\[]")
_FILE_PREFIX_RE = _rx(r"[\w.\-]*\.log[\w.:\-]* (?=\d{4}-)")

# --------------------------------------------------------------------------- helpers


def _header_factory():
    """Header(...) without the frozen dataclass's per-field object.__setattr__ (2x faster).

    Used only when it builds an object equal to Header(...) with the same
    attributes; otherwise (slots, __post_init__, ...) the real constructor."""
    new = object.__new__

    def fast(timestamp, level=None, logger=None, thread=None, host=None):
        o = new(Header)
        o.__dict__.update(timestamp=timestamp, level=level, logger=logger, thread=thread, host=host)
        return o
    try:
        a, b = fast("t", "l", "g", "th", "h"), Header("t", "l", "g", "th", "h")
        ok = (a == b and hash(a) == hash(b) and vars(a) == vars(b)
              and not hasattr(Header, "__post_init__"))
    except Exception:       # noqa: BLE001 - any surprise means: use the real constructor
        ok = False
    return fast if ok else Header


_H = _header_factory()


def _ms(f: str | None) -> str:
    """Fraction digits -> ".123" (cut to millis), "" when absent."""
    if not f:
        return ""
    n = len(f)
    if n == 3:
        return "." + f
    if n > 3:
        return "." + f[:3]
    return "." + (f + "00")[:3]


_this_year = [0, 0.0]      # [year, time.time() when to look again]


def _year(default_year: int | None) -> int:
    if default_year is not None:
        return default_year
    now = time.time()
    if now >= _this_year[1]:
        _this_year[0] = time.localtime(now).tm_year
        _this_year[1] = now + 60.0
    return _this_year[0]


def _yy(yy: str) -> str:
    v = int(yy)
    return f"{2000 + v if v < 70 else 1900 + v}"


def _iso_from_ymd(m: re.Match) -> str:
    d, t, f = m.group("d", "t", "f")
    if f is None:
        return d + "T" + t
    return d + "T" + t + "." + (f[:3] if len(f) >= 3 else (f + "00")[:3])


def _split_zk_thread(thread: str | None, logger: str | None):
    """ZooKeeper "[QuorumPeer[myid=1]/0:0:0:0:0:0:0:0:2181:FastLeaderElection@774]"."""
    if thread and logger is None and "@" in thread:
        head, sep, tail = thread.rpartition(":")
        cls, at, num = tail.partition("@")
        if sep and at and num.isdigit() and cls:
            return head, cls
    return thread, logger


def _after_ymd(line: str, m: re.Match, ts: str) -> Header:
    """The line begins (at m.start()) with a yyyy-MM-dd timestamp matched by _YMD_RE."""
    lvl, th1, th, lg = m.group("lvl", "th1", "th", "lg")
    if lvl is not None:
        th = th or th1
        if lg is None and th and "@" in th:
            th, lg = _split_zk_thread(th, lg)
        return _H(ts, _LEVEL_MAP.get(lvl) or _level(lvl), lg, th)
    end = m.end()           # the time and its zone: the optional rest did not match
    nxt = line[end:end + 1]
    if nxt == " ":
        p = _PY_RE.match(line, end) or _STORM_RE.match(line, end)
        if p:
            g = p.groupdict()
            return _H(ts, _level(g["lvl"]), g["lg"], g.get("th"))
        if line[m.start() + 10] == "T":
            s = _SYSLOG_AFTER_ISO_RE.match(line, end)
            if s:
                return _H(ts, None, s.group("tag"), None, s.group("host"))
    return _H(ts)


def _from_syslog(m: re.Match, default_year: int | None, level: str | None = None) -> Header:
    ts = (f"{_year(default_year):04d}-{_MONTHS[m.group('mon')]}-{int(m.group('dd')):02d}T"
          + m.group("t") + _ms(m.group("f")))
    host, tag = m.group("host"), m.group("tag")
    if host.endswith(":"):            # "Apr 23 17:39:19 kernel: ..." (no host field)
        host, tag = None, host[:-1].split("[", 1)[0]
    return _H(ts, level, tag, None, host)


# --------------------------------------------------------------------------- per first character


def _digit(line: str, default_year: int | None) -> Header | None:
    m = _YMD_RE.match(line)
    if m:
        return _after_ymd(line, m, _iso_from_ymd(m))
    c2 = line[2:3]
    if c2 == "/" or line[4:5] == "/":                       # Spark 17/06/09, Go 2019/04/23
        m = _SLASH_RE.match(line)
        if m:
            y, mo, dd, t, f, lvl, th1, th, lg = m.group(
                "y", "mo", "dd", "t", "f", "lvl", "th1", "th", "lg")
            ts = (y if len(y) == 4 else _yy(y)) + "-" + mo + "-" + dd + "T" + t + _ms(f)
            th, lg = _split_zk_thread(th or th1, lg)
            return _H(ts, _level(lvl), lg, th)
        return None
    if c2 == "-":                                            # Android 03-17 16:13:38.811
        m = _ANDROID_RE.match(line)
        if m:
            ts = f"{_year(default_year):04d}-{m.group('mo')}-{m.group('dd')}T{m.group('t')}" \
                + _ms(m.group("f"))
            return _H(ts, _level(m.group("lvl")), m.group("lg").strip() or None, m.group("th"))
        return None
    c6 = line[6:7]
    if c6 == " ":                                            # HDFS 081109 203615
        m = _HDFS_RE.match(line)
        if m:
            ts = (f"{_yy(m.group('yy'))}-{m.group('mo')}-{m.group('dd')}T"
                  f"{m.group('h')}:{m.group('mi')}:{m.group('s')}")
            return _H(ts, _level(m.group("lvl")), m.group("lg"), m.group("th"))
    if line[8:9] == "-":                                     # HealthApp 20171223-22:15:29:606|
        # the last field is a millisecond count, not a fraction: ":6|" is .006
        m = _HEALTH_RE.match(line)
        if m:
            y, mo, dd, h, mi, sec, f = m.group("y", "mo", "dd", "h", "mi", "s", "f")
            ts = f"{y}-{mo}-{dd}T{int(h):02d}:{int(mi):02d}:{int(sec):02d}.{int(f):03d}"
            return _H(ts, None, m.group("lg") or None)
    if c2 == " " or line[1:2] == " ":                        # RFC 5424 without <PRI>: "1 2003-..."
        if line.startswith("1 "):
            m = _RFC5424_RE.match(line)
            if m:
                return _from_5424(m, None)
    m = _GC_UPTIME_RE.match(line)                            # JDK 8 GC: "1234.567: [GC ..."
    if m:
        return _H(None)
    m = _HPC_RE.match(line)                                  # HPC: id node comp state epoch flag
    if m:
        ts = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(int(m.group("ep"))))
        return _H(ts, None, m.group("comp"), None, m.group("host"))
    return None


def _from_5424(m: re.Match, pri: str | None) -> Header:
    host, app = m.group("host"), m.group("app")
    level = _SEVERITY[int(pri) % 8] if pri is not None else None
    return _H(_iso_from_ymd(m), level, None if app == "-" else app, None,
                  None if host == "-" else host)


def _bracket(line: str, default_year: int | None) -> Header | None:
    c1 = line[1:2]
    if c1.isdigit():
        m = _BRACKET_YMD_RE.match(line)
        if m:
            return _after_bracket_ts(line, m.end(), _iso_from_ymd(m))
        m = _UPTIME_BRACKET_RE.match(line)                   # [12.345s][info][gc]
        if m:
            return _after_bracket_ts(line, m.end(), None)
        m = _DMESG_RE.match(line)                            # [12345.678901] ...
        if m:
            return _H(None)
        m = _PROXIFIER_RE.match(line)                        # [10.30 16:49:06] chrome.exe - ...
        if m:
            ts = f"{_year(default_year):04d}-{m.group('mo')}-{m.group('dd')}T{m.group('t')}"
            return _H(ts, None, m.group("lg"))
        return None
    if c1 == " ":
        return _H(None) if _DMESG_RE.match(line) else None
    if c1.isalpha():
        m = _BRACKET_LEVEL_RE.match(line)                    # [INFO ] 2019-04-23 ...
        if m:
            level = _level(m.group("lvl"))
            t = _YMD_TS_RE.match(line, m.end())
            if not t:
                return None
            ts = _iso_from_ymd(t)
            end = t.end()
            a = _FLINK_ARROW_RE.match(line, end)
            if a:
                return _H(ts, level, a.group("lg"), a.group("th"))
            p = _POST_RE.match(line, end)
            if p:
                th, lg = _split_zk_thread(p.group("th"), p.group("lg"))
                return _H(ts, level, lg, th)
            return _H(ts, level)
        m = _DOW_RE.match(line)                              # [Sun Dec 04 04:47:44 2005]
        if m:
            ts = (f"{m.group('y')}-{_MONTHS[m.group('mon')]}-{int(m.group('dd')):02d}T"
                  + m.group("t") + _ms(m.group("f")))
            return _H(ts, _level(m.group("lvl")), m.group("lg"), m.group("th"))
    return None


def _after_bracket_ts(line: str, end: int, ts: str | None) -> Header:
    nxt = line[end:end + 1]
    if nxt == "[":                      # [ts][info][gc] / [ts][12.3s][info][gc,heap] / [ts][WARN ][logger]
        level = logger = None
        for _ in range(6):
            b = _BRACKET_RE.match(line, end)
            if not b:
                break
            word = b.group(1).strip()
            if level is None:
                level = _level(word)
            else:
                logger = word or None
                break
            end = b.end()
        return _H(ts, level, logger)
    if nxt == " ":
        if line[end + 1:end + 2] == "{":                     # Airflow
            a = _AIRFLOW_RE.match(line, end)
            if a:
                return _H(ts, _level(a.group("lvl")), a.group("lg") or None)
            return _H(ts)
        k = _KAFKA_RE.match(line, end)                       # Kafka: [ts] LEVEL msg (logger)
        if k:
            logger = None
            i = line.rfind("(")
            if i > 0:
                p = _PAREN_LOGGER_RE.match(line, i)
                if p:
                    logger = p.group(1)
            return _H(ts, _level(k.group("lvl")), logger)
    return _H(ts)


def _angle(line: str, default_year: int | None) -> Header | None:
    m = _PRI_RE.match(line)
    if not m:
        return None
    pri = m.group("pri")
    end = m.end()
    r = _RFC5424_RE.match(line, end)
    if r:
        return _from_5424(r, pri)
    s = _SYSLOG_RE.match(line, end)
    if s:
        return _from_syslog(s, default_year, _SEVERITY[int(pri) % 8])
    t = _YMD_RE.match(line, end)                             # <PRI> then an ISO time (rsyslog)
    if t:
        h = _after_ymd(line, t, _iso_from_ymd(t))
        return _H(h.timestamp, _SEVERITY[int(pri) % 8], h.logger, h.thread, h.host)
    return None


def _bgl(m: re.Match) -> Header:
    host = m.group("host")
    if m.group("bd"):                                        # BGL
        ts = (m.group("bd") + "T" + m.group("bh") + ":" + m.group("bm") + ":" + m.group("bs")
              + _ms(m.group("bf")))
        return _H(ts, _level(m.group("lvl")), m.group("comp"), None, host)
    mon = _MONTHS[m.group("mon")]                            # Thunderbird
    y = int(m.group("y"))
    if mon == "12" and m.group("mo") == "01":
        y -= 1
    elif mon == "01" and m.group("mo") == "12":
        y += 1
    ts = f"{y:04d}-{mon}-{int(m.group('tdd')):02d}T{m.group('t')}"
    return _H(ts, None, m.group("tag"), None, host)


def _upper(line: str, default_year: int | None) -> Header | None:
    if line[:3] in _MONTHS:
        m = _SYSLOG_RE.match(line)
        if m:
            return _from_syslog(m, default_year)
    if line[1:2].isdigit():
        if line[0] in "IWEF":
            m = _GLOG_RE.match(line)
            if m:
                ts = f"{_year(default_year):04d}-{m.group('mo')}-{m.group('dd')}T{m.group('t')}" \
                    + _ms(m.group("f"))
                return _H(ts, _level(m.group("lvl")), m.group("lg"), m.group("th"))
        return None
    if _UPPER_WORD_RE.match(line):                           # "KERNDTLB 1118536327", "INFO  [main]"
        m = _BGL_RE.match(line)                              # BGL alert category first
        if m:
            return _bgl(m)
        m = _LEVEL_FIRST_RE.match(line)
        if m:
            return _H(_iso_from_ymd(m), _level(m.group("lvl")), m.group("lg"), m.group("th"))
    return _file_prefix(line, default_year)


def _dash(line: str, default_year: int | None) -> Header | None:
    m = _BGL_RE.match(line)
    return _bgl(m) if m else None


def _file_prefix(line: str, default_year: int | None) -> Header | None:
    """OpenStack loghub: "nova-api.log.1.2017-05-16_13:53:08 2017-05-16 00:00:00.008 ..." """
    if line.find(".log", 0, 120) < 0:
        return None
    p = _FILE_PREFIX_RE.match(line)
    if not p:
        return None
    m = _YMD_RE.match(line, p.end())
    if not m:
        return None
    return _after_ymd(line, m, _iso_from_ymd(m))


def _bom(line: str, default_year: int | None) -> Header | None:
    return parse_header(line[1:], default_year) if len(line) > 1 else None


_DISPATCH = {}
for _c in "0123456789":
    _DISPATCH[_c] = _digit
for _c in "ABCDEFGHIJKLMNOPQRSTUVWXYZ":
    _DISPATCH[_c] = _upper
for _c in "abcdefghijklmnopqrstuvwxyz":
    _DISPATCH[_c] = _file_prefix
_DISPATCH["["] = _bracket
_DISPATCH["<"] = _angle
_DISPATCH["-"] = _dash
_DISPATCH["\ufeff"] = _bom
del _c

# --------------------------------------------------------------------------- API


def parse_header(line: str, default_year: int | None = None) -> Header | None:
    """The Header of a record's first line, or None for a continuation line.

    default_year fills layouts that have no year (syslog, logcat, glog,
    Proxifier); None means the current year.
    """
    if not line:
        return None
    f = _DISPATCH.get(line[0])
    if f is None:                       # "\tat ...", "    at ...", "\t... 16 more", "{", ...
        return None
    return f(line, default_year)


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


if __name__ == "__main__":      # python -m analyzers.timestamps : a rough per-line cost
    import timeit

    samples = {
        "log4j": "2019-04-23 17:39:19,323 INFO [main] org.apache.hadoop.hdfs.DFSClient: "
                 "Exception in createBlockOutputStream",
        "flink": "[INFO ] 2019-04-23 17:39:19,323(437903235) --> [flink-akka.actor.default-dispatcher-18]"
                 " org.apache.flink.runtime.executiongraph.Execution.transitionState(Execution.java:1318):"
                 " Sink (1/1) switched from RUNNING to FAILED.",
        "zookeeper": "2015-07-29 17:41:44,747 - INFO  [QuorumPeer[myid=1]/0:0:0:0:0:0:0:0:2181:"
                     "FastLeaderElection@774] - Notification time out: 3200",
        "syslog": "Apr 23 17:39:19 hadoop-080-037 kernel: NMI watchdog: BUG: soft lockup",
        "kafka": "[2021-03-04 10:11:12,345] WARN Attempting to send response (kafka.network.Processor)",
        "spark": "17/06/09 20:10:40 INFO executor.Executor: Running task 0.0 in stage 1.0",
        "frame": "\tat org.apache.flink.runtime.taskexecutor.TaskExecutor.closeJobManagerConnection"
                 "(TaskExecutor.java:1167)",
        "frame8": "        at org.apache.hadoop.net.SocketIOWithTimeout.doIO(SocketIOWithTimeout.java:164)",
        "caused": "Caused by: java.io.IOException: Connection reset by peer",
        "exception": "java.io.IOException: Got error, status message , ack with firstBadLink",
        "more": "\t... 16 more",
    }
    n = 50_000
    clock = time.process_time       # CPU time: robust when other processes share the machine
    totals: dict[bool, list[float]] = {True: [], False: []}
    for name, s in samples.items():
        per = min(timeit.repeat(lambda: parse_header(s), number=n, repeat=3, timer=clock)) / n * 1e6
        per2 = min(timeit.repeat(lambda: is_record_start(s), number=n, repeat=3, timer=clock)) / n * 1e6
        h = parse_header(s)
        totals[h is not None].append(per)
        print(f"{name:10s} parse_header {per:5.2f} us   is_record_start {per2:5.2f} us   -> {h}")
    for matched, v in totals.items():
        print(f"mean parse_header, {'record starts' if matched else 'continuations'}: "
              f"{sum(v) / len(v):.2f} us")
