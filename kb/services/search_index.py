"""The word-search index: SQLite FTS5 over the runbook catalog, ranked by BM25.

The index is an in-memory SQLite database built from the Runbook rows, whatever
database the app runs on (SQLite or PostgreSQL): FTS5 ships with Python's sqlite3,
gives BM25 with a weight per column, Porter stemming ("lockups" finds "lockup")
and highlighted snippets, and the catalog (about 130 runbooks) indexes in
milliseconds. It is rebuilt when a runbook is added, removed or saved (the
signature below changes) and shared by the threads of one process.
"""

from __future__ import annotations

import sqlite3
import threading
from dataclasses import dataclass

from django.db.models import Count, Max

from kb.models import Runbook

# The indexed columns and their BM25 weights: a word in the title counts ten times
# a word in the body, so title matches rank above body matches.
COLUMNS = ("slug", "title", "symptoms", "knobs", "summary", "body")
WEIGHTS = {"slug": 6.0, "title": 10.0, "symptoms": 4.0, "knobs": 4.0, "summary": 2.0, "body": 1.0}
# Where the shown snippet comes from, most telling first (the title is shown anyway).
SNIPPET_COLUMNS = ("symptoms", "summary", "knobs", "body")
# Markers FTS5 puts around a matched word; control characters no runbook contains,
# so the page can escape the text and then turn only these into <mark>.
MARK_OPEN, MARK_CLOSE = "\x02", "\x03"
SNIPPET_TOKENS = 24
# A word found in more than this share of the runbooks ("the", "error") selects
# nothing: it is left out of a query that has other words, so it does not pull the
# whole catalog in. Only in a catalog of COMMON_MIN_RUNBOOKS or more.
COMMON_SHARE = 0.5
COMMON_MIN_RUNBOOKS = 10


@dataclass
class IndexHit:
    runbook_id: int
    rank: float                 # BM25, positive: higher is better
    matched_terms: int          # how many of the query's words the runbook contains
    fields: list[str]           # the columns with a match, in COLUMNS order
    title: str                  # with MARK_OPEN/MARK_CLOSE around matched words
    snippet: str                # the matching part of the best column, marked the same way
    snippet_field: str


def _row(runbook: Runbook) -> tuple:
    # meta holds each symptom resolved from the library (title included); a symptom
    # edited in the app re-saves the runbooks using it, which moves the signature.
    meta = runbook.meta or {}
    symptoms = " · ".join(f"{s.get('title') or s['id']} ({s['id']})" for s in meta.get("symptoms") or [])
    knobs = " ".join(k["key"] for k in meta.get("knobs") or [])
    return (runbook.pk, runbook.slug, runbook.title, symptoms, knobs, runbook.summary, runbook.body)


class RunbookIndex:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None
        self._signature: tuple | None = None

    def _current_signature(self) -> tuple:
        agg = Runbook.objects.aggregate(n=Count("id"), last=Max("updated"))
        return agg["n"], agg["last"]

    def _build(self) -> sqlite3.Connection:
        db = sqlite3.connect(":memory:", check_same_thread=False)
        db.execute(
            f"CREATE VIRTUAL TABLE idx USING fts5({', '.join(COLUMNS)}, tokenize='porter unicode61')")
        rows = [_row(rb) for rb in Runbook.objects.only(
            "id", "slug", "title", "summary", "body", "meta")]
        db.executemany(f"INSERT INTO idx(rowid, {', '.join(COLUMNS)}) VALUES (?, ?, ?, ?, ?, ?, ?)", rows)
        return db

    def _connection(self) -> sqlite3.Connection:
        signature = self._current_signature()
        if self._db is None or signature != self._signature:
            self._db, self._signature = self._build(), signature
        return self._db

    def search(self, terms: list[str], limit: int) -> tuple[list[IndexHit], list[str], bool]:
        """Runbooks containing any of `terms`, those with more of the terms first,
        then by weighted BM25; the terms that are too common (in most runbooks);
        and whether they were left out (True) or were all there was to search
        (False). Each term is matched as a phrase, so a knob key
        (dfs.datanode.du.reserved) or an exception name needs its parts in order."""
        phrases = {t: _phrase(t) for t in terms}
        phrases = {t: p for t, p in phrases.items() if p}
        if not phrases:
            return [], [], False
        weights = ", ".join(str(WEIGHTS[c]) for c in COLUMNS)
        with self._lock:
            db = self._connection()
            (total,) = db.execute("SELECT count(*) FROM idx").fetchone()
            found = {t: {r for (r,) in db.execute("SELECT rowid FROM idx WHERE idx MATCH ?", (p,))}
                     for t, p in phrases.items()}
            common = [t for t, ids in found.items()
                      if total >= COMMON_MIN_RUNBOOKS and len(ids) > COMMON_SHARE * total]
            left_out = len(common) < len(phrases)  # else only common words: search them
            if left_out:
                phrases = {t: p for t, p in phrases.items() if t not in common}
            per_term = [found[t] for t in phrases]
            highlight_cols = ", ".join(
                f"highlight(idx, {i}, '{MARK_OPEN}', '{MARK_CLOSE}')" for i in range(len(COLUMNS)))
            snippet_cols = ", ".join(
                f"snippet(idx, {COLUMNS.index(c)}, '{MARK_OPEN}', '{MARK_CLOSE}', ' … ', {SNIPPET_TOKENS})"
                for c in SNIPPET_COLUMNS)
            rows = db.execute(
                f"SELECT rowid, -bm25(idx, {weights}), {highlight_cols}, {snippet_cols} "
                "FROM idx WHERE idx MATCH ? ORDER BY bm25(idx, " + weights + ")",
                (" OR ".join(phrases.values()),),
            ).fetchall()
        hits = []
        for row in rows:
            rowid, rank = row[0], row[1]
            marked = row[2:2 + len(COLUMNS)]
            snippets = dict(zip(SNIPPET_COLUMNS, row[2 + len(COLUMNS):]))
            fields = [c for c, text in zip(COLUMNS, marked) if MARK_OPEN in (text or "")]
            field = next((c for c in SNIPPET_COLUMNS if MARK_OPEN in (snippets[c] or "")), "summary")
            hits.append(IndexHit(
                runbook_id=rowid, rank=rank, matched_terms=sum(rowid in ids for ids in per_term),
                fields=fields, title=marked[COLUMNS.index("title")], snippet=snippets[field] or "",
                snippet_field=field,
            ))
        hits.sort(key=lambda h: (-h.matched_terms, -h.rank))
        return hits[:limit], common, left_out


def _phrase(term: str) -> str:
    """An FTS5 string literal for `term` (quotes doubled), so no word of the user's
    is read as query syntax (AND, NEAR, column filters, *)."""
    term = term.replace(MARK_OPEN, "").replace(MARK_CLOSE, "").strip()
    return '"' + term.replace('"', '""') + '"' if term else ""


RUNBOOK_INDEX = RunbookIndex()
