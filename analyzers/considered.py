"""Runbooks the evidence touched but did not make findings: why not, and what
would decide them (docs/contract.md §2, `ruled_out` and `candidates`).

A runbook is considered when one of its required or supporting symptoms was
seen. If it is no finding, `ruled_out` says which rule stopped it:
`excluded` (an excluding symptom vetoed it), `missing-required` (a required
symptom was never seen), `condition` (a required symptom was seen but its
`where` never held, a required relation did not hold, or all its evidence is
shared with other runbooks). When a bundle gives no finding at all, the
considered runbooks that were not excluded become ranked `candidates`, each
with what is missing, the next step that would confirm or rule it out (from
the missing symptoms and the runbooks' `differential`) and where to look.

The rules are diagnose.py's, re-read here for the reason; tests/analyzers/
test_considered.py checks that every considered runbook is a finding or
ruled out, never both, on every fixture bundle.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from analyzers.diagnose import _relation_holds, present_uses, symptom_requirers
from analyzers.model import Hit
from analyzers.occurrences import Occurrences, as_occurrences
from analyzers.runbook_spec import Condition, RunbookSpec, SymptomUse

MAX_CANDIDATES = 10
MAX_RELATION_HITS = 200
KIND_ORDER = ("excluded", "missing-required", "condition")


def _cond_text(conds: tuple[Condition, ...]) -> str:
    return " and ".join(f"{c.capture} {c.op} {c.value}" for c in conds)


def _verdict(rb: RunbookSpec, occurrences: Occurrences,
             requirers: dict[str, list[str]]) -> dict[str, Any] | None:
    """Why `rb` (not a finding) failed, or None when none of its symptoms was seen."""
    uses = {s.id: s for s in rb.symptoms}
    seen = [sid for sid in uses if occurrences.count(sid)]
    if not any(uses[sid].role != "excluding" for sid in seen):
        return None
    present = present_uses(rb, occurrences)
    # A burst usage not met counts as missing; why, in the reason and the candidate's next step.
    bursts = {sid: use.burst(s.burst).shortfall(use.count, s.burst) for sid, s in uses.items()
              if s.burst and sid not in present and (use := occurrences.use(sid, s.where)) is not None}
    # Relations pair occurrences (quadratic when they fail); for a runbook that is no
    # finding anyway, its earliest occurrences are enough to say which relation held.
    sample = {sid: use.earliest.items[:MAX_RELATION_HITS] for sid, use in present.items()}
    problems: list[tuple[str, str]] = []
    for sid, s in uses.items():
        if s.role == "excluding" and s.veto and sid in present:
            problems.append(("excluded", f"excluded by {sid} ({s.title}, {present[sid].count}x): "
                                         "evidence of another cause"))
    groups: dict[str, list[SymptomUse]] = defaultdict(list)
    for s in rb.symptoms:
        if s.role == "required":
            groups[s.group or s.id].append(s)
    missing: list[SymptomUse] = []
    for members in groups.values():
        if any(m.id in present for m in members):
            continue
        missing.extend(members)
        for m in members:
            if m.id in bursts:
                problems.append(("condition", f"required {m.id} {bursts[m.id]}"))
            elif m.id in seen:
                problems.append(("condition", f"required {m.id} seen {occurrences.count(m.id)}x but never "
                                              f"with {_cond_text(m.where)}"))
        unseen = [m for m in members if m.id not in seen]
        if len(unseen) == len(members):
            names = " or ".join(f"{m.id} ({m.title})" for m in members)
            problems.append(("missing-required", f"required {names} not seen"))
    for rel in rb.relations:
        if rel.role == "required" and _relation_holds(rel, sample) is None:
            problems.append(("condition", f"required relation {rel.first} -> {rel.then} did not hold "
                                          f"(within {rel.within or 'any time'}, hosts {rel.hosts})"))
    required_present = [s.id for members in groups.values() for s in members if s.id in present]
    if not missing and len(groups) < 2 and all(requirers.get(sid) != [rb.slug] for sid in required_present):
        others = sorted({o for sid in required_present for o in requirers.get(sid, []) if o != rb.slug})
        problems.append(("condition", f"only shared evidence: {', '.join(required_present)} is also required by "
                                      f"{', '.join(others)}; a finding needs a symptom of its own or two "
                                      "required symptoms together"))
    if not problems:
        problems.append(("condition", "the evidence did not meet the runbook's rules"))
    kind = min((k for k, _ in problems), key=KIND_ORDER.index)
    score = sum(uses[sid].weight for sid in present if uses[sid].role != "excluding")
    score += sum(r.weight for r in rb.relations if _relation_holds(r, sample))
    return {
        "runbook": rb.slug, "title": rb.title, "kind": kind,
        "reason": "; ".join(text for _, text in problems), "symptoms": seen,
        "_found": [sid for sid in present if uses[sid].role != "excluding"],
        "_missing": missing, "_bursts": bursts, "_score": round(score, 2),
    }


def considered(occurrences: Occurrences | dict[str, list[Hit]], runbooks: list[RunbookSpec],
               findings: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(ruled_out, candidates); candidates only when there is no finding."""
    occurrences = as_occurrences(occurrences, runbooks)
    requirers = symptom_requirers(runbooks)
    found = {f["runbook"] for f in findings}
    verdicts = [v for rb in runbooks if rb.slug not in found
                and (v := _verdict(rb, occurrences, requirers)) is not None]
    verdicts.sort(key=lambda v: (KIND_ORDER.index(v["kind"]), -v["_score"], v["runbook"]))
    ruled_out = [{k: v[k] for k in ("runbook", "title", "kind", "reason", "symptoms")} for v in verdicts]
    if findings:
        return ruled_out, []
    open_ = [v for v in verdicts if v["kind"] != "excluded" and v["_found"]]
    open_.sort(key=lambda v: (-v["_score"], len(v["_missing"]), v["runbook"]))
    open_ = open_[:MAX_CANDIDATES]
    by_slug = {rb.slug: rb for rb in runbooks}
    rivals = {v["runbook"] for v in open_}
    return ruled_out, [_candidate(v, by_slug, rivals) for v in open_]


def _candidate(v: dict[str, Any], by_slug: dict[str, RunbookSpec], rivals: set[str]) -> dict[str, Any]:
    rb = by_slug[v["runbook"]]
    missing = [{"symptom": m.id, "title": m.title} for m in v["_missing"]]
    steps = []
    if missing:
        steps.append("look for " + " or ".join(
            f"'{m['title']}'" + (f" ({v['_bursts'][m['symptom']]})" if m["symptom"] in v["_bursts"] else "")
            for m in missing))
    tell = _differential(rb, by_slug, rivals)
    if tell:
        steps.append(tell)
    if not steps:
        steps.append("the evidence is all shared with other runbooks; see this runbook's 'How to confirm'")
    where = "; or ".join(dict.fromkeys(m.look_in for m in v["_missing"] if m.look_in)) or None
    if where is None:
        where = next((st.command for f in rb.fixes if f.kind == "diagnosis"
                      for st in f.steps if st.command), None)
    return {"runbook": v["runbook"], "title": v["title"], "score": v["_score"], "found": v["_found"],
            "missing": missing, "next_step": "; ".join(steps)[:1].upper() + "; ".join(steps)[1:],
            "where": where}


def _differential(rb: RunbookSpec, by_slug: dict[str, RunbookSpec], rivals: set[str]) -> str | None:
    """How to tell this candidate from a rival candidate, as either runbook's differential says."""
    for d in rb.differential:
        if d.slug in rivals and d.slug != rb.slug:
            return f"to tell it from {d.slug}: {d.how.strip()}"
    for other in sorted(rivals - {rb.slug}):
        for d in by_slug[other].differential:
            if d.slug == rb.slug:
                return f"to tell it from {other}: {d.how.strip()}"
    return None
