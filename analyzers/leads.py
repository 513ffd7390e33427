"""Leads: the records to look at first, ranked as an experienced engineer reads a bundle.

The scan keeps, per range, the first record of every template key among the error-like
lines (analyzers/lead_scan.py). Here, on the driver, for the whole bundle:

1. records of the same key are counted across ranges and files;
2. what a finding already explains drops out: records that hold a line of a finding's
   symptoms, and every record of their keys; so do keys the baseline bundle also has;
3. the rest are grouped by key (shown with their Drain3 template, as the unmatched list) and ranked by
   severity (kind, level), rarity in the bundle (seen once beats seen 10,000 times),
   time (earliest failure across hosts first; the first failure of each host), and
   whether the process stopped right after;
4. the best MAX_LEADS come back with a one-line reason.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from datetime import datetime, timezone
from dataclasses import dataclass, field
from typing import Any, Iterable

from analyzers import timestamps
from analyzers.clock_skew import Skew
from analyzers.lead_scan import record_key
from analyzers.template_key import message_part, template_key
from analyzers.unmatched import _miner

MAX_LEADS = 10
DIED_WINDOW = 3           # the last records (distinct templates) before a stop count as "before it died"
_KIND_SEVERITY = {"panic": 1.0, "kernel": 0.9, "exception": 0.8, "traceback": 0.8, "state": 0.7,
                  "error": 0.5, "stop": 0.4}
# An exception or an error word weighs what its level says (ZooKeeper logs "KeeperException" at
# INFO all day); a state change, a kernel report, a panic, a traceback or a stop speaks for itself.
_LEVEL_FACTOR = {"FATAL": 1.0, "ERROR": 1.0, "WARN": 0.85, "INFO": 0.6, "DEBUG": 0.4, "TRACE": 0.4}
_LEVEL_WEIGHED = ("exception", "error")
WEIGHTS = {"severity": 0.30, "rarity": 0.30, "early": 0.20, "died": 0.15, "first_on_host": 0.05}


@dataclass
class Candidate:
    key: str
    path: str
    line: int
    lines: int
    text: str
    headline: str
    kind: str
    host: str | None
    timestamp: str | None
    level: str | None
    count: int
    stopped_at: str | None = None           # "path:line" of a stop right after it, in the same file
    keys: set[str] = field(default_factory=set)


@dataclass(frozen=True)
class Baseline:
    """Templates of a healthy bundle: leads and unmatched lines of these templates drop out."""
    path: str
    templates: frozenset[str]


# Layouts whose time analyzers.timestamps does not read (it parses record headers, these are not):
# logfmt / JSON (Go services, logrus, zap) and librdkafka's epoch ("%3|1418300191.571|FAIL|...").
_ISO_FIELD = re.compile(r'(?:\btime=|"(?:time|timestamp|ts)": ?)"?(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:[.,](\d+))?')
_EPOCH_PREFIX = re.compile(r"^(?:%\d\|)?(\d{10})\.(\d{3})[| ]")
# Go's standard `log` ("2020/12/28 21:34:14 msg", after a log.New prefix such as "[sarama] ")
_GO_LOG = re.compile(r"^(?:\[[\w.\-]+\] )?(\d{4})/(\d\d)/(\d\d) (\d\d:\d\d:\d\d)(?:\.(\d+))? ")


def _time_in_line(line: str) -> str | None:
    m = _ISO_FIELD.search(line[:500])
    if m:
        return m.group(1) + (f".{m.group(2)[:3].ljust(3, '0')}" if m.group(2) else "")
    m = _GO_LOG.match(line)
    if m:
        return f"{m.group(1)}-{m.group(2)}-{m.group(3)}T{m.group(4)}" + (f".{m.group(5)[:3].ljust(3, '0')}" if m.group(5) else "")
    m = _EPOCH_PREFIX.match(line)
    if m:
        when = datetime.fromtimestamp(int(m.group(1)), tz=timezone.utc)
        return when.strftime("%Y-%m-%dT%H:%M:%S") + "." + m.group(2)
    return None


def collect(by_file: dict[str, list], files: dict[str, Any], default_year: int | None) -> list[Candidate]:
    """One Candidate per (file, key): the first record, the file's count, the process's stop."""
    if default_year is None:
        default_year = _records_year(by_file)
    out = []
    for path in sorted(by_file):
        f = files[path]
        offset, first, last, stops = 0, {}, {}, []
        for r in sorted(by_file[path], key=lambda r: r.start):
            for key, rec in r.leads.items():
                if key in first:
                    first[key].count += rec.count
                else:
                    header = timestamps.parse_header(rec.header, default_year) if rec.header else None
                    stamp = header.timestamp if header and header.timestamp else _time_in_line(rec.text)
                    first[key] = Candidate(key, path, offset + rec.line_in_range, rec.lines, rec.text, rec.headline,
                                           rec.kind, f.host or (header.host if header else None), stamp,
                                           header.level if header else None, rec.count, keys={key})
                last[key] = offset + rec.last_line
            stops.extend(offset + s for s in r.stops)
            offset += r.lines
        for stop in stops:
            before = sorted((ln, k) for k, ln in last.items() if ln < stop and first[k].kind != "stop")
            for _, k in before[-DIED_WINDOW:]:
                if first[k].stopped_at is None:
                    first[k].stopped_at = f"{path}:{stop}"
        out.extend(first.values())
    return out


def _records_year(by_file: dict[str, list]) -> int | None:
    """The most common year of the records' own timestamps: syslog and klog lines have none, and
    a bundle without matched lines gives the engine no year to lend them."""
    years: dict[int, int] = defaultdict(int)
    for rs in by_file.values():
        for r in rs:
            for rec in list(r.leads.values())[:50]:
                header = timestamps.parse_header(rec.header, 0) if rec.header else None
                if header and header.timestamp and header.timestamp[:4].isdigit() and header.timestamp[:4] != "0000":
                    years[int(header.timestamp[:4])] += 1
    return max(years, key=lambda y: (years[y], y)) if years else None


def explained_keys(candidates: Iterable[Candidate], explained_lines: dict[str, set[int]],
                   explained_texts: Iterable[str]) -> set[str]:
    """Keys of records a finding explains: they hold one of its lines, or a line of its template."""
    text_keys = {template_key(message_part(t)) for t in explained_texts}
    out = set()
    for c in candidates:
        lines = explained_lines.get(c.path, ())
        if any(c.line <= ln < c.line + c.lines for ln in lines) or any(
                template_key(message_part(t)) in text_keys for t in c.text.split("\n")):
            out.add(c.key)
    return out


def rank(candidates: list[Candidate], explained: set[str], baseline: Baseline | None,
         skew: Skew | None = None) -> tuple[list[dict], int]:
    """The leads (at most MAX_LEADS), and how many of the bundle's keys the baseline has.
    Times across hosts are compared on the common clock skew gives (analyzers/clock_skew.py)."""
    skew = skew or Skew()
    dropped = {c.key for c in candidates if baseline is not None and c.key in baseline.templates}
    kept = [c for c in candidates if c.key not in explained and c.key not in dropped]
    groups = _templates(kept)
    if not groups:
        return [], len(dropped)
    common = {id(g): skew.corrected(g.host, g.timestamp) for g, _ in groups}
    timed = sorted({t for t in common.values() if t})
    first_on_host: dict[str | None, Candidate] = {}
    for g, _ in sorted(groups, key=lambda gt: (gt[0].timestamp or "9999", gt[0].path, gt[0].line)):
        first_on_host.setdefault(g.host, g)
    scored = []
    for g, template in groups:
        when = common[id(g)]
        parts = {
            "severity": _severity(g),
            "rarity": 1.0 / (1.0 + math.log10(max(1, g.count))),
            "early": (1.0 - timed.index(when) / max(1, len(timed) - 1)) if when else 0.5,
            "died": 1.0 if g.stopped_at is not None else 0.0,
            "first_on_host": 1.0 if first_on_host.get(g.host) is g else 0.0,
        }
        score = round(sum(WEIGHTS[k] * v for k, v in parts.items()), 4)
        scored.append((score, g, template, _reason(g, parts, timed, skew)))
    scored.sort(key=lambda s: (-s[0], common[id(s[1])] or "9999", s[1].path, s[1].line))
    return [_lead(i + 1, g, template, reason, score)
            for i, (score, g, template, reason) in enumerate(scored[:MAX_LEADS])], len(dropped)


def _severity(g: Candidate) -> float:
    base = _KIND_SEVERITY.get(g.kind, 0.5)
    if g.kind in _LEVEL_WEIGHED:
        base *= _LEVEL_FACTOR.get(g.level or "", 0.85)
    return base


def _templates(kept: list[Candidate]) -> list[tuple[Candidate, str]]:
    """One group per template key across files (the earliest record stands for it, counts add up),
    each with the Drain3 template of its headline for display. Keys, not Drain3 clusters, group:
    "State change: SUSPENDED" and "State change: LOST" are different facts."""
    if not kept:
        return []
    by_key: dict[str, list[Candidate]] = defaultdict(list)
    for c in sorted(kept, key=lambda c: (c.timestamp or "9999", c.path, c.line)):
        by_key[c.key].append(c)
    miner = _miner()
    cluster_of = {key: miner.add_log_message(message_part(members[0].headline))["cluster_id"]
                  for key, members in by_key.items()}
    templates = {cl.cluster_id: cl.get_template() for cl in miner.drain.clusters}
    out = []
    for key, members in by_key.items():
        rep = members[0]
        group = Candidate(**{**rep.__dict__, "count": sum(m.count for m in members), "keys": {key},
                             "stopped_at": next((m.stopped_at for m in members if m.stopped_at), None)})
        out.append((group, templates[cluster_of[key]]))
    return out


def _reason(g: Candidate, parts: dict[str, float], timed: list[str], skew: Skew) -> str:
    said = []
    if g.timestamp and parts["early"] == 1.0 and len(timed) > 1:
        note = skew.note()
        said.append("earliest failure in the bundle" + (f" {note}" if note else ""))
    elif parts["first_on_host"]:
        said.append(f"first failure on {g.host}" if g.host else "first failure")
    said.append("seen once" if g.count == 1 else f"seen {g.count}x")
    said.append(f"{g.level} {g.kind}" if g.level else g.kind)
    if g.stopped_at is not None:
        said.append(f"the process stopped right after ({g.stopped_at})")
    return "; ".join(said)


def _lead(rank: int, g: Candidate, template: str, reason: str, score: float) -> dict[str, Any]:
    return {"rank": rank, "host": g.host, "path": g.path, "line": g.line, "timestamp": g.timestamp,
            "text": g.text, "headline": g.headline, "template": template, "count": g.count, "kind": g.kind,
            "reason": reason, "score": score}


def line_key(text: str) -> str:
    """The key an unmatched error line is compared to a baseline with."""
    return template_key(message_part(text))


def bundle_templates(candidates: Iterable[Candidate], error_lines: Iterable[tuple[str, int, str]]) -> frozenset[str]:
    """What a bundle contributes as a baseline: its records' keys and its error lines' keys."""
    return frozenset({c.key for c in candidates} | {line_key(t) for _, _, t in error_lines})


__all__ = ["Baseline", "Candidate", "MAX_LEADS", "bundle_templates", "collect", "explained_keys", "line_key",
           "rank", "record_key"]
