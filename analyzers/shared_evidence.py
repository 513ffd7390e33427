"""Candidates ranked by shared evidence: when the symptoms seen are all shared with
other root causes (so no runbook is a finding), which runbooks do they point at
most strongly?

A runbook's support is the weight its own file gives each symptom seen (required
and supporting roles), less the weight of an excluding symptom seen; ties go to
the runbook showing more of its symptoms. A runbook with a vetoing excluding
symptom seen is ruled out and ranked last, with the reason. What would confirm a
candidate is its required symptoms not seen.

Works on an engine result (docs/contract.md §2) and the runbooks it was matched
against; the result's symptoms carry no captures, so a symptom's `where`
condition is not checked here (the weight is counted as if it held).
"""

from __future__ import annotations

from typing import Any


def rank_candidates(result: dict[str, Any], runbooks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every runbook (not already a finding) that lists a symptom seen in `result`,
    best supported first. Each: runbook, title, score, shown (the symptoms seen,
    with role and weight), shown_count / listed_count, required_seen /
    required_missing (symptom ids; confirm_with: the missing ones with their
    titles), excluded_by (excluding symptoms seen) and
    ruled_out (an excluding symptom that vetoes the runbook was seen)."""
    seen = {s["id"]: s for s in result.get("symptoms") or []}
    found = {f["runbook"] for f in result.get("findings") or []}
    candidates = []
    for rb in runbooks:
        if rb["slug"] in found:
            continue
        listed = [s for s in rb["symptoms"] if s["role"] != "excluding"]
        shown = [s for s in listed if s["id"] in seen]
        if not shown:
            continue
        excluding = [s for s in rb["symptoms"] if s["role"] == "excluding" and s["id"] in seen]
        required = [s for s in listed if s["role"] == "required"]
        score = sum(float(s.get("weight", 0.0)) for s in shown)
        score -= sum(float(s.get("weight", 0.0)) for s in excluding)
        candidates.append({
            "runbook": rb["slug"],
            "title": rb["title"],
            "score": round(score, 3),
            "shown": [
                {"symptom": s["id"], "title": seen[s["id"]].get("title") or s["id"], "role": s["role"],
                 "weight": float(s.get("weight", 0.0)), "count": seen[s["id"]].get("count", 0)}
                for s in shown
            ],
            "shown_count": len(shown),
            "listed_count": len(listed),
            "required_seen": [s["id"] for s in required if s["id"] in seen],
            "required_missing": [s["id"] for s in required if s["id"] not in seen],
            # What to look for next: the required symptoms not seen, with the
            # titles the library gives them (the runbook's symptom entries carry them).
            "confirm_with": [{"symptom": s["id"], "title": s.get("title") or s["id"]}
                             for s in required if s["id"] not in seen],
            "excluded_by": [s["id"] for s in excluding],
            "ruled_out": any(s.get("veto", True) for s in excluding),
        })
    candidates.sort(key=lambda c: (c["ruled_out"], -c["score"], -c["shown_count"], c["runbook"]))
    return candidates
