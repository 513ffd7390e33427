"""GC logs -> gc.pause facts: JDK 8 records, JDK 9+ unified lines, safepoint totals."""

from __future__ import annotations

import re

from analyzers.facts import gc_jdk8, gc_unified
from analyzers.facts._util import iso, iter_lines, make_fact
from analyzers.model import BundleFile, Fact

# -XX:+PrintGCApplicationStoppedTime (JDK 8) and -Xlog:safepoint (9-16).
_STOPPED_RE = re.compile(
    r"Total time for which application threads were stopped: (\d+(?:[.,]\d+)?) seconds")
# -Xlog:safepoint in JDK 17+: 'Safepoint "G1CollectForAllocation", ..., Total: 13579 ns'
_SAFEPOINT_NS_RE = re.compile(r'Safepoint "([^"]*)",.*\bTotal: (\d+) ns')
_PREFIX_RE = re.compile(rf"^\s*(?:({gc_jdk8._DATE}):\s*)?(?:({gc_jdk8._NUM}):\s*)?")


def parse(file: BundleFile, notes: list[str] | None = None) -> list[Fact]:
    facts: list[Fact] = []
    asm = gc_jdk8.Assembler()
    seen: dict[str, int] = {}
    for n, line in iter_lines(file, notes):
        consumed = asm.feed(n, line)
        if asm.pauses:
            facts.extend(_from_jdk8(file, p) for p in asm.pauses)
            asm.pauses.clear()
        if consumed:
            continue
        fact = _safepoint(file, n, line) or _unified(file, n, line, seen)
        if fact:
            facts.append(fact)
    facts.extend(_from_jdk8(file, p) for p in asm.finish())
    # A JDK 8 record becomes a fact only when it ends; keep file order regardless.
    facts.sort(key=lambda f: f.line)
    return facts


def _captures(ms: float, kind: str, uptime: float | None, cause: str | None) -> dict:
    out: dict = {"value": ms, "kind": kind}
    if uptime is not None:
        out["uptime"] = uptime
    if cause:
        out["cause"] = cause
    return out


def _from_jdk8(file: BundleFile, p: gc_jdk8.Pause) -> Fact:
    return make_fact(file, "gc.pause", p.line, p.text,
                     _captures(p.ms, p.kind, p.uptime, p.cause), iso(p.date))


def _safepoint(file: BundleFile, n: int, line: str) -> Fact | None:
    # Cheap substring tests first: this runs on every line that is not a JDK 8 record.
    m = _STOPPED_RE.search(line) if "application threads were stopped" in line else None
    if m:
        ms, cause = float(m.group(1).replace(",", ".")) * 1000, None
    else:
        m = _SAFEPOINT_NS_RE.search(line) if 'Safepoint "' in line else None
        if not m:
            return None
        ms, cause = int(m.group(2)) / 1e6, m.group(1)
    info, _ = gc_unified.decorations(line)
    if info["decorated"]:
        date, uptime = info["date"], info["uptime"]
    else:
        pre = _PREFIX_RE.match(line)
        date = pre.group(1)
        uptime = float(pre.group(2).replace(",", ".")) if pre.group(2) else None
    return make_fact(file, "gc.pause", n, line,
                     _captures(round(ms, 6), "other", uptime, cause), iso(date))


def _unified(file: BundleFile, n: int, line: str, seen: dict[str, int]) -> Fact | None:
    if "Pause " not in line:      # most lines of a gc* log are phases and heap sizes
        return None
    info, message = gc_unified.decorations(line)
    found = gc_unified.pause(info, message)
    if not found:
        return None
    kind, ms, cause, key = found
    # -Xlog:gc* can report one pause under two tag sets; count it once. Only
    # nearby repeats are duplicates: GC ids restart when a JVM appends to the file.
    if not key.startswith("None|") and n - seen.get(key, -10**9) < 200:
        return None
    seen[key] = n
    return make_fact(file, "gc.pause", n, line,
                     _captures(ms, kind, info["uptime"], cause), iso(info["date"]))
