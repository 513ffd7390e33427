"""Record-header patterns: the level words, the timestamp regexes, and the
helpers that turn a match into a Header (see analyzers/timestamps/__init__.py
for the layouts and what the fields mean)."""

from __future__ import annotations

import re
import time

from analyzers.model import Header

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
