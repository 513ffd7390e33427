"""JDK 9+ unified logging (-Xlog:gc, -Xlog:gc*, -Xlog:safepoint): one line per pause.

Decorations vary with -Xlog (time, uptime, uptimemillis, level, tags, pid, ...),
so they are read as a run of [..] groups and recognised by shape, not position.
"""

from __future__ import annotations

import re

_DECOR_RE = re.compile(r"^((?:\[[^\[\]]*\])*)\s*(.*)$")
_GROUP_RE = re.compile(r"\[([^\[\]]*)\]")
_DATE_RE = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d")
_UPTIME_S_RE = re.compile(r"^(\d+(?:[.,]\d+)?)s$")
_UPTIME_MS_RE = re.compile(r"^(\d+)ms$")
_TAGS_RE = re.compile(r"^[a-z0-9_]+(?:,[a-z0-9_]+)*$")
# "GC(12) Pause Young (Normal) (G1 Evacuation Pause) 100M->20M(1024M) 12.345ms";
# ZGC/Shenandoah: "GC(3) Pause Mark Start 0.012ms", generational ZGC "GC(3) y: Pause ...".
_PAUSE_RE = re.compile(
    r"^(?:GC\((?P<id>\d+)\)\s+)?(?:[A-Za-z]:\s+)?Pause (?P<label>.*?)"
    r"(?:\s+\d+[BKMGT]?->\d+[BKMGT]?\(\d+[BKMGT]?\))?\s+(?P<ms>\d+(?:[.,]\d+)?)ms\s*$")
_PAREN_RE = re.compile(r"\(((?:[^()]|\([^()]*\))*)\)")   # "(System.gc())" included
# G1's young-collection subtypes, not causes.
_G1_TYPES = {"normal", "mixed", "prepare mixed", "concurrent start", "initial mark"}


def decorations(line: str) -> tuple[dict, str]:
    """({"date", "uptime", "tags", "decorated"}, message) of a unified-logging line.

    Every part may be missing: "-Xlog:gc:file=gc.log:time,uptime" prints no
    level or tags, ":none" prints no decorations at all.
    """
    m = _DECOR_RE.match(line)
    info: dict = {"date": None, "uptime": None, "tags": None, "decorated": bool(m.group(1))}
    for g in _GROUP_RE.findall(m.group(1)):
        g = g.strip()
        if _DATE_RE.match(g):
            info["date"] = g
        elif (u := _UPTIME_S_RE.match(g)):
            info["uptime"] = float(u.group(1).replace(",", "."))
        elif (u := _UPTIME_MS_RE.match(g)):
            if int(u.group(1)) < 10**11:      # larger is timemillis (epoch), not uptime
                info["uptime"] = int(u.group(1)) / 1000
        elif _TAGS_RE.match(g) and g not in ("trace", "debug", "info", "warning", "error"):
            info["tags"] = g.split(",")
    return info, m.group(2)


def pause(info: dict, message: str) -> tuple[str, float, str | None, str] | None:
    """(kind, ms, cause, dedup key) when the message ends a stop-the-world pause."""
    tags = info["tags"]
    if tags is not None and ("gc" not in tags or "start" in tags):
        return None        # not a gc line, or [gc,start]: it announces, it has no duration
    m = _PAUSE_RE.match(message)
    if not m or (not info["decorated"] and not m.group("id")):
        return None        # a bare "Pause ..." line must at least carry its GC(n) id
    label = m.group("label").strip()
    causes = [c for c in _PAREN_RE.findall(label) if c.lower() not in _G1_TYPES]
    return (_kind(label), float(m.group("ms").replace(",", ".")),
            causes[-1] if causes else None, f"{m.group('id')}|{label}")


def _kind(label: str) -> str:
    low = label.lower()
    if low.startswith("full"):
        return "full"
    if "(mixed)" in low or low.startswith("mixed"):
        return "mixed"
    if any(s in low for s in ("concurrent start", "initial mark", "init mark", "mark start")):
        return "initial-mark"
    if any(s in low for s in ("remark", "final mark", "mark end")):
        return "remark"
    if "cleanup" in low:
        return "cleanup"
    if low.startswith("young"):
        return "young"
    return "other"   # Shenandoah update-refs, ZGC relocate start, degenerated cycles
