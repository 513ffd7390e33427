"""Candidates for a result stored before the engine wrote its own `candidates`:
re-derived through the engine's ranker (analyzers.considered), so an old result
and a new one rank and word their candidates alike (docs/contract.md §2).

    derive_candidates(result, metas={slug: runbook front matter}) -> result["candidates"] shape

A stored result keeps one example line per symptom, not its hits: each symptom
seen becomes one hit from its example. Stored symptoms carry no captures, so the
runbooks are read without their `where` conditions (a condition on a capture
could never hold here: the weight counts as if it held, as the old fallback
did); relations are checked on the example lines. Pure functions: no Django, no I/O.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from analyzers.considered import considered
from analyzers.model import Hit
from analyzers.runbook_spec import RunbookSpec, runbook_spec


def _hit(symptom: dict[str, Any]) -> Hit:
    ex = symptom.get("example") or {}
    return Hit(symptom=symptom["id"], path=ex.get("path") or "", line=ex.get("line") or 0,
               text=ex.get("text") or "", captures={}, timestamp=ex.get("timestamp"), level=None,
               host=ex.get("host"), component="")


def _without_where(rb: RunbookSpec) -> RunbookSpec:
    return replace(rb, symptoms=tuple(replace(s, where=()) for s in rb.symptoms))


def derive_candidates(result: dict[str, Any], metas: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """The ranked candidates considered.py gives for `result`'s symptoms over the
    runbooks in `metas` (entries without a slug, placeholders, are skipped)."""
    if result.get("findings"):
        return []
    specs = [_without_where(runbook_spec(m)) for m in metas.values() if m.get("slug") and m.get("title")]
    hits = {s["id"]: [_hit(s)] for s in result.get("symptoms") or [] if s.get("id")}
    _, candidates = considered(hits, specs, [])
    return candidates
