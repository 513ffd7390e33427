"""Rank findings: the root cause above what it led to, whatever the confidences.

Confidence says how sure the evidence makes a runbook, not which of two sure
runbooks came first. The order comes from the runbooks' `leads_to` links
(runbooks/README.md), two kinds:

- `as: cause`: this runbook's root cause fully explains the other's finding
  (a GC pause longer than the session explains the RegionServer's session
  expiry). The cause ranks first; the other gets `explained_by` the cause and
  is shown as its consequence, not as a rival.
- `as: trigger`: this runbook only set off the other's latent defect (a host
  stall cancelled a writer whose pre-2.8 client then left its file open).
  The defect is the root cause and ranks first: it holds the fix that stops
  the damage from happening again, whatever triggers it next time; the
  trigger ranks below it and says whose trigger it is.

A link counts only when both findings are in the bundle and their evidence
meets the link's `hosts` and `within` conditions, so two unrelated incidents
in one bundle are not chained. Every finding gets a `rank_reason`.
"""

from __future__ import annotations

from typing import Any

from analyzers.model import Occurrence, occurrences_meet, parse_when
from analyzers.runbook_spec import Link, RunbookSpec


def _evidence_meets(link: Link, upstream: dict[str, Any], downstream: dict[str, Any]) -> bool:
    """Some evidence of each finding satisfies the link's host and time conditions."""
    if link.hosts == "any" and link.within_s is None:
        return True
    ups, downs = _occurrences(upstream), _occurrences(downstream)
    return any(occurrences_meet(a, b, hosts=link.hosts, within_s=link.within_s) for a in ups for b in downs)


def _occurrences(finding: dict[str, Any]) -> list[Occurrence]:
    """(host, when) of each evidence line of a finding."""
    return [(e["host"], parse_when(e["timestamp"])) for e in finding["evidence"]]


def _links(findings: list[dict[str, Any]], runbooks: list[RunbookSpec]) -> list[tuple[str, str, Link]]:
    """(upstream slug, downstream slug, link) for every link whose two findings are here and connected."""
    found = {f["runbook"]: f for f in findings}
    out = []
    for rb in runbooks:
        if rb.slug not in found:
            continue
        for link in rb.leads_to:
            other = found.get(link.slug)
            if other is not None and other["runbook"] != rb.slug and _evidence_meets(link, found[rb.slug], other):
                out.append((rb.slug, link.slug, link))
    return out


def rank_findings(findings: list[dict[str, Any]], runbooks: list[RunbookSpec]) -> list[dict[str, Any]]:
    """The findings (given best confidence first) reordered so that each root
    cause precedes what it explains or what triggered it; otherwise the
    confidence order stays. Adds `explained_by` and `rank_reason` to each."""
    links = _links(findings, runbooks)
    before: dict[str, set[str]] = {f["runbook"]: set() for f in findings}  # slug -> slugs that must precede it
    for up, down, link in links:
        if link.kind == "cause":
            before[down].add(up)
        else:
            before[up].add(down)
    order = [f["runbook"] for f in findings]
    ranked: list[str] = []
    while len(ranked) < len(order):
        waiting = [s for s in order if s not in ranked]
        # The best-confidence finding whose predecessors are all placed; a cycle
        # (the catalog check refuses one) falls back to confidence order.
        ready = next((s for s in waiting if before[s] <= set(ranked)), waiting[0])
        ranked.append(ready)
    by_slug = {f["runbook"]: f for f in findings}
    position = {s: i for i, s in enumerate(ranked)}
    for f in findings:
        f["explained_by"], f["rank_reason"] = _explain(f, links, position)
    return [by_slug[s] for s in ranked]


def _explain(f: dict[str, Any], links: list[tuple[str, str, Link]],
             position: dict[str, int]) -> tuple[str | None, str]:
    slug = f["runbook"]
    causes = sorted((up for up, down, link in links if down == slug and link.kind == "cause"), key=position.get)
    reasons = []
    for up, down, link in links:
        if link.kind == "cause" and down == slug:
            reasons.append(f"consequence of {up}: {link.why}")
        elif link.kind == "cause" and up == slug:
            reasons.append(f"root cause of {down}: {link.why}")
        elif up == slug:  # this one only triggered the other's defect
            reasons.append(f"trigger of {down}, which holds the defect and ranks first: {link.why}")
        elif down == slug:
            reasons.append(f"root cause; {up} only triggered it: {link.why}")
    if not reasons:
        reasons.append(f"confidence {f['confidence']:.2f}; no runbook link ties it to another finding")
    return (causes[0] if causes else None), "; ".join(reasons)
