"""The cross-host timeline of an analysis, as geometry for an inline SVG.

    timeline_build(result["timeline"], colours=finding_colours(findings), ...)
      -> {"width": 960, "height": 118, "lanes": [{"host": "hadoop-080-037", "y": 24, ...}],
          "ticks": [{"x": 182.5, "label": "17:38:10"}], "marks": [{"x": .., "y": .., "colour": ..,
          "title": "..", "href": "#ev-3f2a9c01d4-48", "runbook": ".."}], "legend": [..],
          "undated": [<items without a timestamp>], ...}

Hosts are horizontal lanes; each piece of evidence is a mark placed by its
timestamp, coloured by the (best ranked) finding it supports (grey when no
finding uses it) and labelled with its symptom's short name where there is
room (kb/lib/timeline_labels.py). Where marks crowd a lane (thousands of
events) they are drawn as bins with their count that zoom into their time
range, labelled with their commonest symptoms; `zoom` narrows the axis to
a time range (the page's `tl_from`/`tl_to` query parameters). The template (`_timeline_svg.html`) draws it with
autoescaping, so log text never reaches the page unescaped. Pure functions:
no Django, no I/O.
"""

from __future__ import annotations

import hashlib
import math
from datetime import datetime, timedelta, timezone
from collections import Counter
from typing import Any

from kb.lib.timeline_labels import label, short_name

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
BUCKET_PX = 12         # marks closer than this in a lane share a bucket ...
FAN_MAX = 9            # ... which becomes one bin past this many marks,
DENSE_ABOVE = 500      # or, past this many events in all (more than a result's timeline holds),
DENSE_FAN_MAX = 3      # past this many: thousands of fanned-out marks are unreadable,
DENSE_BUCKET_PX = 24   # and the buckets twice as wide (about 30 bins a lane)
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
                   runbook_titles: dict[str, str] | None = None,
                   zoom: dict[str, datetime] | None = None) -> dict[str, Any]:
    """Geometry of the timeline SVG (see the module docstring). `zoom`
    ({"start", "end"} naive UTC datetimes) keeps only what lies between them."""
    symptom_titles, runbook_titles = symptom_titles or {}, runbook_titles or {}
    dated = [(parse_ts(i.get("timestamp")), i) for i in items]
    undated = [i for ts, i in dated if ts is None]
    dated = [(ts, i) for ts, i in dated if ts is not None]
    full = (min(ts for ts, _ in dated), max(ts for ts, _ in dated)) if dated else (None, None)
    if zoom:
        dated = [(ts, i) for ts, i in dated if zoom["start"] <= ts <= zoom["end"]]
    legend = [{"runbook": slug, "title": runbook_titles.get(slug, slug), "colour": c}
              for slug, c in colours.items()]
    legend.append({"runbook": "", "title": "symptom no finding uses", "colour": GREY})
    out: dict[str, Any] = {"width": WIDTH, "height": 0, "lanes": [], "ticks": [], "marks": [], "bins": [],
                           "legend": legend, "undated": undated, "count": len(dated), "zoomed": bool(zoom),
                           "full_start": full[0], "full_end": full[1], "spans": [],
                           "start": None, "end": None, "plot_x0": LABEL_W, "plot_x1": WIDTH - RIGHT_PAD}
    if not dated:
        return out
    lanes = _lanes(sorted({i.get("host") or NO_HOST for _, i in dated}))
    lane_of = {h: n for n, h in enumerate(lanes)}
    if zoom:
        lo, hi = _seconds(zoom["start"]), _seconds(zoom["end"])
    else:
        lo, hi = _seconds(min(ts for ts, _ in dated)), _seconds(max(ts for ts, _ in dated))
    out["start"], out["end"] = _from_seconds(lo), _from_seconds(hi)
    pad = 0.0 if zoom else (max((hi - lo) * 0.03, 0.0005) if hi > lo else 30.0)
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
    edges = [lo_p] + [lo_p + (t["x"] - x0) / (x1 - x0) * (hi_p - lo_p) for t in out["ticks"]] + [hi_p]
    out["spans"] = [{"x": round(x_of(a), 1), "w": round(x_of(b) - x_of(a), 1),
                     "start": _iso(a), "end": _iso(b)} for a, b in zip(edges, edges[1:]) if b > a]
    out["marks"], out["bins"] = _marks(dated, lane_of, x_of, colours, symptom_titles, runbook_titles)
    label(out["marks"], out["bins"], x0=LABEL_W, x1=WIDTH - 2, top=TOP, lane_h=LANE_H)
    return out


def _iso(seconds: float) -> str:
    return _from_seconds(round(seconds, 3)).isoformat(timespec="milliseconds")


def _best_runbook(items: list[dict[str, Any]], colours: dict[str, str]) -> str:
    uses = {r for i in items for r in i.get("runbooks") or []}
    return next((s for s in colours if s in uses), "")   # colours are in rank order


def _marks(dated, lane_of, x_of, colours, symptom_titles, runbook_titles):
    """Marks in time order, and bins. Marks that would overlap in a lane are
    packed into a small grid (three rows, then a column further right); past
    FAN_MAX in one BUCKET_PX column of a lane (DENSE_FAN_MAX in DENSE_BUCKET_PX
    when there are thousands) they become one bin that shows its count and
    zooms into its time range."""
    rows = [0, -9, 9]
    dense = len(dated) > DENSE_ABOVE
    bucket_px = DENSE_BUCKET_PX if dense else BUCKET_PX
    buckets: dict[tuple[int, int], list[tuple[datetime, dict[str, Any], float]]] = {}
    for ts, item in sorted(dated, key=lambda p: (p[0], str(p[1].get("path")), p[1].get("line") or 0)):
        lane = lane_of.get(item.get("host") or NO_HOST, lane_of.get(OTHER_HOSTS, 0))
        x = x_of(_seconds(ts))
        buckets.setdefault((lane, int(x // bucket_px)), []).append((ts, item, x))
    marks, bins = [], []
    fan_max = DENSE_FAN_MAX if dense else FAN_MAX
    for (lane, bucket), members in buckets.items():
        mid = TOP + LANE_H * lane + LANE_H / 2
        if len(members) > fan_max:
            runbook = _best_runbook([i for _, i, _ in members], colours)
            counts = Counter(symptom_titles.get(i.get("symptom") or "", i.get("symptom") or "") for _, i, _ in members)
            names = sorted(counts)
            first, last = members[0][0], members[-1][0]
            bins.append({"x": round(min(x for *_, x in members), 1), "y": mid, "count": len(members), "lane": lane,
                         "w": max(bucket_px - 2, round(max(x for *_, x in members) - min(x for *_, x in members), 1)),
                         "colour": colours[runbook] if runbook else GREY, "runbook": runbook,
                         "start": _iso(_seconds(first) - 0.0005), "end": _iso(_seconds(last) + 0.0005),
                         "title": f"{len(members)} events, {first:%H:%M:%S} to {last:%H:%M:%S}: " + ", ".join(names[:6]),
                         "shorts": [short_name(n) for n, _ in sorted(counts.items(), key=lambda c: (-c[1], c[0]))]})
            continue
        for n, (ts, item, x) in enumerate(members):
            runbook = _best_runbook([item], colours)
            symptom = symptom_titles.get(item.get("symptom") or "", item.get("symptom") or "")
            marks.append({
                "x": round(x + 11 * (n // len(rows)), 1), "y": mid + rows[n % len(rows)],
                "r": 5 if runbook else 4, "colour": colours[runbook] if runbook else GREY, "runbook": runbook,
                "href": "#" + evidence_anchor(item.get("path"), item.get("line")),
                "title": _title(item, symptom_titles, runbook_titles),
                "short": short_name(symptom),
                "lane": lane, "bucket": bucket, "label": "",
            })
    marks.sort(key=lambda m: (m["lane"], m["x"]))
    return marks, bins
