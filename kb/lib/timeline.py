"""The cross-host timeline of an analysis, as geometry for an inline SVG.

    timeline_build(result["timeline"], colours=finding_colours(findings), ...)
      -> {"width": 960, "height": 118, "lanes": [{"host": "hadoop-080-037", "y": 24, ...}],
          "ticks": [{"x": 182.5, "label": "17:38:10"}], "marks": [{"x": .., "y": .., "colour": ..,
          "title": "..", "href": "#ev-3f2a9c01d4-48", "runbook": ".."}], "legend": [..],
          "undated": [<items without a timestamp>], ...}

Hosts are horizontal lanes; each piece of evidence is a mark placed by its
timestamp and coloured by the (best ranked) finding it supports, grey when no
finding uses it. The template (`_timeline_svg.html`) draws it with
autoescaping, so log text never reaches the page unescaped. Pure functions:
no Django, no I/O.
"""

from __future__ import annotations

import hashlib
import math
from datetime import datetime, timedelta, timezone
from typing import Any

PALETTE = ["#0072b2", "#d55e00", "#009e73", "#cc79a7", "#e69f00", "#56b4e9", "#8c564b", "#6a3d9a"]
GREY = "#9aa3b2"
WIDTH = 960
LABEL_W = 170          # left column with the host names
RIGHT_PAD = 24
TOP = 12
LANE_H = 36
AXIS_H = 40
MAX_LANES = 60         # beyond this, the remaining hosts share one lane
MAX_TICKS = 8
OTHER_HOSTS = "(other hosts)"
NO_HOST = "(no host)"
# Tick steps in seconds, from 1 ms to 30 days.
STEPS = [0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30, 60, 120, 300,
         600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400, 172800, 604800, 2592000]
EPOCH = datetime(1970, 1, 1)


def evidence_anchor(path: str, line: Any) -> str:
    """The page anchor of one log line: "ev-<10 hex of sha1(path)>-<line>".

    >>> evidence_anchor("hadoop-081-159/flink-taskmanager.log", 48)
    'ev-9a13a7b3eb-48'
    """
    digest = hashlib.sha1(str(path).encode("utf-8", "surrogatepass")).hexdigest()[:10]
    return f"ev-{digest}-{line}"


def finding_colours(findings: list[dict[str, Any]]) -> dict[str, str]:
    """runbook slug -> colour, in rank order (the palette repeats past eight findings)."""
    return {f["runbook"]: PALETTE[i % len(PALETTE)] for i, f in enumerate(findings)}


def parse_ts(value: Any) -> datetime | None:
    """An ISO 8601 timestamp as a naive UTC datetime, or None."""
    if not value or not isinstance(value, str):
        return None
    try:
        ts = datetime.fromisoformat(value)
    except ValueError:
        return None
    if ts.tzinfo is not None:
        ts = ts.astimezone(timezone.utc).replace(tzinfo=None)
    return ts


def _seconds(ts: datetime) -> float:
    return (ts - EPOCH).total_seconds()


def _from_seconds(s: float) -> datetime:
    return EPOCH + timedelta(seconds=s)


def tick_step(span: float) -> float:
    """The smallest step (seconds) that gives at most MAX_TICKS ticks over `span` seconds."""
    for step in STEPS:
        if span / step <= MAX_TICKS:
            return step
    return STEPS[-1] * math.ceil(span / (STEPS[-1] * MAX_TICKS))


def _tick_label(ts: datetime, step: float, with_date: bool) -> str:
    if step >= 86400:
        return ts.strftime("%b %d")
    if step < 1:
        text = ts.strftime("%H:%M:%S.%f")[:-3]
    elif step < 60:
        text = ts.strftime("%H:%M:%S")
    else:
        text = ts.strftime("%H:%M")
    return f"{ts.strftime('%b %d')} {text}" if with_date else text


def _ticks(lo: float, hi: float, x_of) -> tuple[list[dict[str, Any]], float]:
    step = tick_step(hi - lo)
    crosses = _from_seconds(lo).date() != _from_seconds(hi).date()
    ticks, day = [], None
    n = math.ceil(lo / step)
    while n * step <= hi + 1e-9:
        ts = _from_seconds(round(n * step, 6))
        ticks.append({"x": round(x_of(n * step), 1),
                      "label": _tick_label(ts, step, with_date=crosses and ts.date() != day)})
        day = ts.date()
        n += 1
    return ticks, step


def _lanes(hosts: list[str]) -> list[str]:
    named = sorted(h for h in hosts if h not in (NO_HOST,))
    if len(named) > MAX_LANES:
        named = named[: MAX_LANES - 1] + [OTHER_HOSTS]
    return named + ([NO_HOST] if NO_HOST in hosts else [])


def _title(item: dict[str, Any], symptom_titles: dict[str, str], runbook_titles: dict[str, str]) -> str:
    text = str(item.get("text") or "").strip()
    if len(text) > 300:
        text = text[:300] + "…"
    supports = ", ".join(runbook_titles.get(s, s) for s in item.get("runbooks") or [])
    lines = [
        f"{item.get('timestamp') or 'no timestamp'}  {item.get('host') or NO_HOST}",
        symptom_titles.get(item.get("symptom") or "", item.get("symptom") or ""),
        f"{item.get('path')}:{item.get('line')}",
        text,
        f"supports: {supports}" if supports else "used by no finding",
    ]
    return "\n".join(line for line in lines if line)


def timeline_build(items: list[dict[str, Any]], *, colours: dict[str, str],
                   symptom_titles: dict[str, str] | None = None,
                   runbook_titles: dict[str, str] | None = None) -> dict[str, Any]:
    """Geometry of the timeline SVG (see the module docstring)."""
    symptom_titles, runbook_titles = symptom_titles or {}, runbook_titles or {}
    dated = [(parse_ts(i.get("timestamp")), i) for i in items]
    undated = [i for ts, i in dated if ts is None]
    dated = [(ts, i) for ts, i in dated if ts is not None]
    legend = [{"runbook": slug, "title": runbook_titles.get(slug, slug), "colour": c}
              for slug, c in colours.items()]
    legend.append({"runbook": "", "title": "symptom no finding uses", "colour": GREY})
    out: dict[str, Any] = {"width": WIDTH, "height": 0, "lanes": [], "ticks": [], "marks": [],
                           "legend": legend, "undated": undated, "count": len(dated),
                           "start": None, "end": None, "plot_x0": LABEL_W, "plot_x1": WIDTH - RIGHT_PAD}
    if not dated:
        return out
    lanes = _lanes(sorted({i.get("host") or NO_HOST for _, i in dated}))
    lane_of = {h: n for n, h in enumerate(lanes)}
    lo, hi = _seconds(min(ts for ts, _ in dated)), _seconds(max(ts for ts, _ in dated))
    out["start"], out["end"] = _from_seconds(lo), _from_seconds(hi)
    pad = max((hi - lo) * 0.03, 0.0005) if hi > lo else 30.0
    lo_p, hi_p = lo - pad, hi + pad
    x0, x1 = LABEL_W, WIDTH - RIGHT_PAD

    def x_of(s: float) -> float:
        return x0 + (s - lo_p) / (hi_p - lo_p) * (x1 - x0)

    out["height"] = TOP + LANE_H * len(lanes) + AXIS_H
    out["axis_y"] = TOP + LANE_H * len(lanes)
    out["lane_h"] = LANE_H
    out["lanes"] = [{"host": h, "y": TOP + LANE_H * n, "mid": TOP + LANE_H * n + LANE_H / 2,
                     "label": h if len(h) <= 24 else h[:23] + "…", "odd": n % 2 == 1} for n, h in enumerate(lanes)]
    out["ticks"], out["step"] = _ticks(lo_p, hi_p, x_of)
    out["marks"] = _marks(dated, lane_of, x_of, colours, symptom_titles, runbook_titles)
    return out


def _marks(dated, lane_of, x_of, colours, symptom_titles, runbook_titles) -> list[dict[str, Any]]:
    """Marks in time order. Marks that would overlap in a lane are packed into a
    small grid (three rows, then a column further right), keeping their order."""
    rows = [0, -9, 9]
    taken: dict[tuple[int, int], int] = {}
    marks = []
    for ts, item in sorted(dated, key=lambda p: (p[0], str(p[1].get("path")), p[1].get("line") or 0)):
        host = item.get("host") or NO_HOST
        lane = lane_of.get(host, lane_of.get(OTHER_HOSTS, 0))
        x = x_of(_seconds(ts))
        bucket = (lane, int(x // 8))
        n = taken.get(bucket, 0)
        taken[bucket] = n + 1
        uses = set(item.get("runbooks") or [])
        supported = [s for s in colours if s in uses]   # colours are in rank order
        runbook = supported[0] if supported else ""
        marks.append({
            "x": round(x + 11 * (n // len(rows)), 1),
            "y": TOP + LANE_H * lane + LANE_H / 2 + rows[n % len(rows)],
            "r": 5 if runbook else 4,
            "colour": colours[runbook] if runbook else GREY,
            "runbook": runbook,
            "href": "#" + evidence_anchor(item.get("path"), item.get("line")),
            "title": _title(item, symptom_titles, runbook_titles),
        })
    return marks

# Lower layers fail first and take the layers above them down: a chain that
# starts in the kernel comes before one that starts in a TaskManager.
COMPONENT_LAYERS = [
    ("kernel", 0), ("os", 0), ("syslog", 0), ("dmesg", 0), ("jvm", 1), ("gc", 1),
    ("zookeeper", 2), ("hdfs-", 3), ("yarn-", 3), ("hbase-", 4), ("kafka-", 4),
    ("flink-jobmanager", 5), ("spark-driver", 5), ("flink-taskmanager", 6), ("spark-executor", 6),
]
UNKNOWN_LAYER = 7
RELATED_WITHIN = timedelta(minutes=15)


def component_layer(component: str | None) -> int:
    for prefix, layer in COMPONENT_LAYERS:
        if (component or "").startswith(prefix):
            return layer
    return UNKNOWN_LAYER


def _finding_steps(finding: dict[str, Any]) -> list[dict[str, Any]]:
    """The finding's chain; without one, the first line of each symptom in time order."""
    if finding.get("chain"):
        return [dict(s) for s in finding["chain"]]
    firsts: dict[str, dict[str, Any]] = {}
    for ev in sorted(finding.get("evidence") or [], key=lambda e: (e.get("timestamp") or "9999", e.get("line") or 0)):
        firsts.setdefault(ev.get("symptom") or "", dict(ev))
    return list(firsts.values())[:5]


def _window(finding: dict[str, Any]) -> tuple[datetime, datetime] | None:
    stamps = [t for t in (parse_ts(e.get("timestamp")) for e in finding.get("evidence") or []) if t]
    return (min(stamps), max(stamps)) if stamps else None


def _near(a: tuple[datetime, datetime] | None, b: tuple[datetime, datetime] | None) -> bool:
    return bool(a and b) and a[0] - RELATED_WITHIN <= b[1] and b[0] - RELATED_WITHIN <= a[1]


def chain_build(findings: list[dict[str, Any]], *, components: dict[str, str],
                related: set[frozenset[str]]) -> list[dict[str, Any]]:
    """The findings' chains joined into stories, trigger first.

    Findings are in one story when one runbook names the other as a look-alike
    (`related` pairs of slugs) or their evidence lies within 15 minutes. Inside
    a story, a chain whose first step is lower in the stack (kernel < JVM <
    ZooKeeper < HDFS/YARN < ... < TaskManager) comes first: host clocks differ
    and a stall is only logged when it ends, so timestamps alone mislead.
    `components` maps a bundle path to its component.
    """
    slugs = [f["runbook"] for f in findings]
    group = {s: s for s in slugs}

    def root(s: str) -> str:
        while group[s] != s:
            s = group[s]
        return s

    windows = {f["runbook"]: _window(f) for f in findings}
    for i, a in enumerate(slugs):
        for b in slugs[i + 1:]:
            if frozenset((a, b)) in related or _near(windows[a], windows[b]):
                group[root(b)] = root(a)
    stories: dict[str, list[tuple[int, dict[str, Any]]]] = {}
    for rank, f in enumerate(findings):
        stories.setdefault(root(f["runbook"]), []).append((rank, f))
    out = []
    for members in stories.values():
        ordered = []
        for rank, f in members:
            steps = _finding_steps(f)
            first = steps[0] if steps else {}
            key = (component_layer(components.get(first.get("path") or "")), first.get("timestamp") or "9999", rank)
            ordered.append((key, f, steps))
        ordered.sort(key=lambda t: t[0])
        steps_out: list[dict[str, Any]] = []
        for _, f, steps in ordered:
            for n, step in enumerate(steps):
                step.update(runbook=f["runbook"], finding_title=f.get("title"), starts_finding=n == 0,
                            component=components.get(step.get("path") or ""),
                            href="#" + evidence_anchor(step.get("path"), step.get("line")))
                steps_out.append(step)
        out.append({"findings": [f["runbook"] for _, f, _ in ordered], "steps": steps_out,
                    "backwards": _backwards(steps_out)})
    return out


def _backwards(steps: list[dict[str, Any]]) -> list[int]:
    """Indexes of steps whose timestamp is earlier than the dated step before them."""
    out, last = [], None
    for n, step in enumerate(steps):
        ts = parse_ts(step.get("timestamp"))
        if ts is None:
            continue
        if last is not None and ts < last:
            out.append(n)
        last = ts
    return out
