"""Evidence as on-call reads it: lines of one stack trace as one record, the
path once relative to its host, the best records first.

    records(finding["evidence"], weights={"hdfs-close-...": 0.6, ...})
      -> [{"lines": [<evidence>, ...], "first": <evidence>, "caused_by": <evidence> | None,
           "host": .., "path": .., "short_path": "flink-taskmanager.log", ...}, ...]

The result lists matched lines one by one; a trace's head and its `Caused by`
and frame lines are separate evidence. A line that continues a record (a
frame, `Caused by:`, `... N more`, anything indented) joins the record
started by the nearest evidence line above it in the same file, up to
CONTINUATION_SPAN lines away. Pure functions: no Django, no I/O.
"""

from __future__ import annotations

import re
from typing import Any

CONTINUATION_RE = re.compile(r"^(?:\s|Caused by:|Suppressed:|\.\.\. \d+ more)")
CAUSED_BY_RE = re.compile(r"^\s*Caused by:")
CONTINUATION_SPAN = 200   # a Java trace rarely runs longer than this between two matched lines


def short_path(path: str | None, host: str | None) -> str:
    """The bundle path without its host folder: "hadoop-081-159/flink-taskmanager.log"
    -> "flink-taskmanager.log"; a collector's "<stream>/<host>/<container>/<log>"
    -> "<container>/<log>". Unchanged when the host is not a folder of it.

    >>> short_path("app.log/worker-7/taskmanager/taskmanager.log", "worker-7")
    'taskmanager/taskmanager.log'
    """
    path = str(path or "")
    if not host:
        return path
    parts = path.split("/")
    if host in parts[:-1]:
        return "/".join(parts[parts.index(host) + 1:])
    return path


def is_continuation(text: str | None) -> bool:
    return bool(CONTINUATION_RE.match(str(text or "")))


def records(evidence: list[dict[str, Any]], weights: dict[str, float] | None = None) -> list[dict[str, Any]]:
    """The evidence grouped into records, best first: one record per symptom
    first (the heaviest symptom's first), then the rest in file order."""
    weights = weights or {}
    by_file: dict[str, list[dict[str, Any]]] = {}
    for ev in evidence or []:
        by_file.setdefault(str(ev.get("path")), []).append(ev)
    out: list[dict[str, Any]] = []
    for path, lines in by_file.items():
        current: dict[str, Any] | None = None
        for ev in sorted(lines, key=lambda e: e.get("line") or 0):
            line = ev.get("line") or 0
            if current is not None and line == current["lines"][-1].get("line"):
                current["also"].append(ev)      # the same line matched another symptom
                continue
            if (current is not None and is_continuation(ev.get("text"))
                    and line - current["lines"][-1].get("line", 0) <= CONTINUATION_SPAN):
                current["lines"].append(ev)
                continue
            current = {"lines": [ev], "also": []}
            out.append(current)
    for n, rec in enumerate(out):
        first = rec["lines"][0]
        causes = [e for e in rec["lines"][1:] if CAUSED_BY_RE.match(str(e.get("text") or ""))]
        symptoms = list(dict.fromkeys(e.get("symptom") for e in rec["lines"] + rec["also"]))
        rec.update(first=first, caused_by=causes[-1] if causes else None, host=first.get("host"),
                   path=first.get("path"), line=first.get("line"), timestamp=first.get("timestamp"),
                   short_path=short_path(first.get("path"), first.get("host")), symptoms=symptoms,
                   weight=max((weights.get(s or "", 0.0) for s in symptoms), default=0.0), order=n)
    return best_first(out)


def best_first(recs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One record per symptom, heaviest symptom first (ties: earliest), then the others in order."""
    seen: set[str] = set()
    lead, rest = [], []
    for rec in sorted(recs, key=lambda r: (-r["weight"], r["timestamp"] or "9999", r["order"])):
        fresh = [s for s in rec["symptoms"] if s not in seen]
        (lead if fresh else rest).append(rec)
        seen.update(rec["symptoms"])
    return lead + sorted(rest, key=lambda r: r["order"])


def symptom_weights(finding: dict[str, Any]) -> dict[str, float]:
    """symptom id -> the weight it contributed to the finding (required ones count double)."""
    out: dict[str, float] = {}
    for r in finding.get("reasons") or []:
        if r.get("kind") == "symptom" and r.get("symptom"):
            w = float(r.get("weight") or 0) * (2 if r.get("role") == "required" else 1)
            out[r["symptom"]] = max(out.get(r["symptom"], 0.0), w)
    return out


def as_record(ev: dict[str, Any]) -> dict[str, Any]:
    """One evidence line as a record of its own (the timeline's event list)."""
    return {"lines": [ev], "also": [], "first": ev, "caused_by": None, "host": ev.get("host"), "path": ev.get("path"),
            "line": ev.get("line"), "timestamp": ev.get("timestamp"), "symptoms": [ev.get("symptom")],
            "short_path": short_path(ev.get("path"), ev.get("host")), "slot": ev.get("slot", "")}
