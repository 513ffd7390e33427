"""Which layouts a line may be, by its first character, and parse_header.

Each function tries the regexes of analyzers.timestamps.patterns that can
start with that character, cheapest first."""

from __future__ import annotations

import re
import time

from analyzers.model import Header
from analyzers.timestamps.patterns import (  # package-private names
    _AIRFLOW_RE,
    _ANDROID_RE,
    _BGL_RE,
    _BRACKET_LEVEL_RE,
    _BRACKET_RE,
    _BRACKET_YMD_RE,
    _DMESG_RE,
    _DOW_RE,
    _FILE_PREFIX_RE,
    _FLINK_ARROW_RE,
    _GC_UPTIME_RE,
    _GLOG_RE,
    _H,
    _HDFS_RE,
    _HEALTH_RE,
    _HPC_RE,
    _KAFKA_RE,
    _LEVEL_FIRST_RE,
    _MONTHS,
    _PAREN_LOGGER_RE,
    _POST_RE,
    _PRI_RE,
    _PROXIFIER_RE,
    _RFC5424_RE,
    _SEVERITY,
    _SLASH_RE,
    _SYSLOG_RE,
    _UPPER_WORD_RE,
    _UPTIME_BRACKET_RE,
    _YMD_RE,
    _YMD_TS_RE,
    _after_ymd,
    _from_syslog,
    _iso_from_ymd,
    _level,
    _ms,
    _split_zk_thread,
    _year,
    _yy,
)

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
