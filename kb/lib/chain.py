"""The findings' chains joined into stories, trigger first (the "Chain of
events" of the analysis page). Pure functions: no Django, no I/O."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from kb.lib.timeline import evidence_anchor, parse_ts

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
