"""The timeline's labels (kb/lib/timeline.py): each cluster of marks, and each
run of bins that share their symptoms, carries its symptoms' short names where
there is room. A mark cluster's label sits beside it on the marks' row; a bin
run's label sits above the bins (a lane of bins has no room beside them), so a
timeline drawn wholly as bins (thousands of events) still says what it shows.
Pure functions: no Django, no I/O."""

from __future__ import annotations

from typing import Any

LABEL_CHARS = 24       # a label names a symptom by its title, cut
LABEL_PX = 5.6         # width of a label character at font-size 10
GAP = 6                # between two labels of a lane


def short_name(title: str) -> str:
    """A symptom's title as a label: without its parenthesis, cut at a word.

    >>> short_name("Kernel soft lockup (a CPU stuck in kernel mode)")
    'Kernel soft lockup'
    """
    title = title.split(" (", 1)[0]
    if len(title) <= LABEL_CHARS:
        return title
    return title[:LABEL_CHARS].rsplit(" ", 1)[0].rstrip(",;:") + "…"


def label_text(names: list[str]) -> str:
    """Two names and how many more: "Kernel soft lockup, JVM pause +2"."""
    names = list(dict.fromkeys(names))
    return ", ".join(names[:2]) + (f" +{len(names) - 2}" if len(names) > 2 else "")


def label(marks: list[dict[str, Any]], bins: list[dict[str, Any]], *, x0: float, x1: float,
          top: float, lane_h: float) -> None:
    """Set `label`, `label_x`, `label_anchor`, `label_start`, `label_y` on the
    first mark of each labelled cluster (one bucket of a lane) and on the first
    bin of each labelled run: finding evidence first, then left to right, never
    over another label, mark or bin of the lane nor outside the plot [x0, x1]."""
    clusters: dict[tuple[int, int], list[dict[str, Any]]] = {}
    for m in marks:
        clusters.setdefault((m["lane"], m["bucket"]), []).append(m)
    placed: dict[int, list[tuple[float, float]]] = {}
    order = sorted(clusters.values(), key=lambda ms: (not any(m["runbook"] for m in ms), min(m["x"] for m in ms)))
    for members in order:
        text = label_text([m["short"] for m in members])
        lane, width = members[0]["lane"], LABEL_PX * len(text)
        right, left = max(m["x"] for m in members) + 8, min(m["x"] for m in members) - 8
        for start, end, anchor in ((right, right + width, "start"), (left - width, left, "end")):
            if (start < x0 or end > x1 or _crosses(placed.get(lane, []), start, end)
                    or any(o["lane"] == lane and start - 4 < o["x"] < end + 4 for o in marks if o not in members)
                    or any(b["lane"] == lane and b["x"] < end + 4 and start - 4 < b["x"] + b["w"] for b in bins)):
                continue   # outside, or over another label, another cluster's mark or a bin
            placed.setdefault(lane, []).append((start, end))
            members[0].update(label=text, label_x=round(right if anchor == "start" else left, 1), label_anchor=anchor,
                              label_start=round(start, 1), label_y=top + lane_h * lane + lane_h / 2 + 3.5)
            break
    _label_bins(bins, marks, x0=x0, x1=x1, top=top, lane_h=lane_h)


def _label_bins(bins: list[dict[str, Any]], marks: list[dict[str, Any]], *, x0: float, x1: float,
                top: float, lane_h: float) -> None:
    """One label per run of neighbouring bins of a lane with the same names, above
    the run's first bin, in the band between the lane's top and the bins (marks
    reach into that band only on their upper row, so a label skips those)."""
    runs: list[list[dict[str, Any]]] = []
    for b in sorted(bins, key=lambda b: (b["lane"], b["x"])):
        b["label"] = ""
        last = runs[-1][-1] if runs else None
        if last and last["lane"] == b["lane"] and b["x"] - (last["x"] + last["w"]) < 12 \
                and label_text(last["shorts"]) == label_text(b["shorts"]):
            runs[-1].append(b)
        else:
            runs.append([b])
    placed: dict[int, list[tuple[float, float]]] = {}
    for run in sorted(runs, key=lambda r: (not any(b["runbook"] for b in r), r[0]["x"])):
        head, text = run[0], label_text(run[0]["shorts"])
        start, end = head["x"], head["x"] + LABEL_PX * len(text)
        if (not text or end > x1 or start < x0 or _crosses(placed.get(head["lane"], []), start, end)
                or any(m["lane"] == head["lane"] and m["y"] < top + lane_h * (head["lane"] + 0.5)
                       and start - 4 < m["x"] < end + 4 for m in marks)):
            continue
        placed.setdefault(head["lane"], []).append((start, end))
        head.update(label=text, label_x=round(start, 1), label_anchor="start", label_start=round(start, 1),
                    label_y=top + lane_h * head["lane"] + 9.5, label_run=len(run))


def _crosses(spans: list[tuple[float, float]], start: float, end: float) -> bool:
    return any(start < b + GAP and a < end + GAP for a, b in spans)
