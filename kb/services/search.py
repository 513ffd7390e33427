"""Search: words against the catalog, and a pasted log against its signatures."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from django.utils.html import escape
from django.utils.safestring import mark_safe

from analyzers.engine import analyze_text
from kb.models import Runbook, Team
from kb.selectors.catalog import runbook_catalog
from kb.services.search_index import MARK_CLOSE, MARK_OPEN, RUNBOOK_INDEX
from kb.services.symptom_overlays import catalog_resolve

WORD_RE = re.compile(r"[\w.\-]+")
MAX_LOG_CHARS = 1_000_000
MAX_WORD_HITS = 50
# A hit scoring under this share of the best one is listed folded as a weaker match:
# a common word ("the", "hdfs") still ranks the few runbooks about it first
# instead of listing the whole catalog as equals.
WEAK_SHARE = 0.35


@dataclass
class WordHit:
    runbook: Runbook
    score: float
    matched_words: int
    fields: list[str] = field(default_factory=list)
    title_html: str = ""
    snippet_html: str = ""
    snippet_field: str = ""
    weak: bool = False


def _marked_html(text: str) -> str:
    """The index's marked text as HTML: everything escaped, then the match markers
    (control characters no runbook holds) turned into <mark>."""
    return mark_safe(escape(text).replace(MARK_OPEN, "<mark>").replace(MARK_CLOSE, "</mark>"))


@dataclass
class WordSearch:
    hits: list[WordHit]
    ignored_words: list[str]      # too common to select by, left out (kb.services.search_index)
    too_common_words: list[str] = field(default_factory=list)  # all the query had: searched, barely ranked


def runbook_search_words(*, q: str, team: Team | None, limit: int = MAX_WORD_HITS) -> list[WordHit]:
    return word_search(q=q, team=team, limit=limit).hits


def word_search(*, q: str, team: Team | None, limit: int = MAX_WORD_HITS) -> WordSearch:
    """Rank the runbooks `team` sees (kb.selectors.catalog; None: the shipped and
    published ones) for the words of q (kb.services.search_index: the team's own
    SQLite FTS5 index, weighted BM25, title above body): runbooks containing more
    of the words first, then by relevance. Each hit carries its title and the
    matching part of its text with the words marked."""
    words = list(dict.fromkeys(w.lower() for w in WORD_RE.findall(q or "") if len(w) >= 2))
    if not words:
        return WordSearch([], [])
    hits, common, left_out = RUNBOOK_INDEX.search(words, limit, team=team)
    runbooks = Runbook.objects.in_bulk([h.runbook_id for h in hits])
    best = {}
    for h in hits:
        best.setdefault(h.matched_terms, h.rank)
    out = []
    for h in hits:
        if h.runbook_id not in runbooks:
            continue  # deleted since the index was read
        out.append(WordHit(
            runbook=runbooks[h.runbook_id], score=round(h.rank, 2), matched_words=h.matched_terms,
            fields=h.fields, title_html=_marked_html(h.title), snippet_html=_marked_html(h.snippet),
            snippet_field=h.snippet_field,
            # Words in most runbooks rank nothing: then every hit is a weak one.
            weak=(bool(common) and not left_out) or h.matched_terms < hits[0].matched_terms
            or h.rank < WEAK_SHARE * best[h.matched_terms],
        ))
    if left_out:
        return WordSearch(out, common)
    return WordSearch(out, [], common)


def runbook_search_log(*, text: str, team: Team | None) -> dict[str, Any]:
    """Match a pasted log excerpt against the signatures of every runbook `team` sees.

    Returns the engine result (docs/contract.md §2) with Runbook rows
    attached for the page: findings[i]["runbook_obj"]; for each symptom its
    candidate runbooks split into "explained_by" (already findings) and
    "candidates" (possible causes that the excerpt alone cannot confirm).
    The ranking is the engine's own (analyzers.considered), as on the incident
    page: result["candidates"] (only without a finding), each with what it
    found, what is missing, its next step and where to look; result["others"]:
    the rest of its `ruled_out`, the runbooks the excerpt touched but that are
    neither findings nor candidates, excluded ones last. Each carries
    "runbook_obj" and "listed_count" (its required and supporting symptoms).
    """
    text = (text or "")[:MAX_LOG_CHARS].replace("\r\n", "\n")
    runbooks, metas = _paste_catalog(team)
    result = analyze_text(text, metas)
    result["engine"] = result["stats"]["engine"]
    for finding in result["findings"]:
        finding["runbook_obj"] = runbooks.get(finding["runbook"])
    found = {f["runbook"] for f in result["findings"]}
    for symptom in result["symptoms"]:
        slugs = [s for s in symptom.get("candidate_runbooks", []) if s in runbooks]
        symptom["explained_by"] = [runbooks[s] for s in slugs if s in found]
        symptom["candidates"] = [runbooks[s] for s in slugs if s not in found]
    ranked = {c["runbook"] for c in result["candidates"]}
    # Engine order within a kind (best supported first); an excluded runbook points
    # at another cause, so it goes after the ones merely missing evidence.
    result["others"] = sorted((r for r in result["ruled_out"] if r["runbook"] not in ranked),
                              key=lambda r: r["kind"] == "excluded")
    listed = {m["slug"]: sum(u.get("role") != "excluding" for u in m.get("symptoms") or []) for m in metas}
    for entry in result["candidates"] + result["others"]:
        entry["runbook_obj"] = runbooks[entry["runbook"]]
        entry["listed_count"] = listed[entry["runbook"]]
    return result


def _paste_catalog(team: Team | None) -> tuple[dict[str, Runbook], list[dict[str, Any]]]:
    """The runbooks `team` sees and their metas resolved against its symptoms, in the
    order the matcher is built from (the warm-up compiles exactly this set)."""
    runbooks = {r.slug: r for r in runbook_catalog(team=team).order_by("slug")}
    return runbooks, catalog_resolve([r.meta for r in runbooks.values()], team.pk if team else None)


def paste_matcher_warm() -> str | None:
    """Compile, now, the matcher runbook_search_log will use (0.6-1.2 s on first use
    otherwise: the first pasted snippet of a web process would pay it). Called once
    at web start (kb/wsgi.py): the shared catalog's (a team with its own runbooks or
    overlays compiles its set on its first paste). Returns the signature-set hash,
    None without runbooks."""
    from analyzers.serialised_matcher import signature_set_hash
    from analyzers.signatures import matcher_for, signatures_from_runbooks

    _, metas = _paste_catalog(None)
    if not metas:
        return None
    signatures = signatures_from_runbooks(metas)
    matcher = matcher_for(signatures)
    matcher.candidates(b"\n", errors=False)                # the lazily compiled databases too
    matcher.candidates(b"\n", errors=True, leads=False)
    return signature_set_hash(signatures)
