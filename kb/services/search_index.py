"""The word-search index: SQLite FTS5 over a team's runbook catalog, ranked by BM25.

Each index is an in-memory SQLite database built from the runbooks one team sees
(kb.selectors.catalog: the shipped and published runbooks, the team's overlays in
place of the rows they change, its own runbooks, its versions of library
symptoms), whatever database the app runs on (SQLite or PostgreSQL): FTS5 ships
with Python's sqlite3, gives BM25 with a weight per column, Porter stemming
("lockups" finds "lockup") and highlighted snippets, and a catalog (about 130
runbooks) indexes in milliseconds. One index per catalog, never one shared by all
teams: another team's overlay or unpublished runbook must not be found, nor move
BM25's word statistics (what ranks first) or what counts as a common word.
An index is rebuilt when its catalog changes (the signature below) and shared by
the threads of one process; the least recently used ones are dropped past
MAX_CATALOGS.
"""

from __future__ import annotations

import sqlite3
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from kb.models import Runbook, SymptomOverlay, Team
from kb.selectors.catalog import runbook_catalog
from kb.services.symptom_overlays import catalog_resolve

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
# Catalogs whose index is kept (the shared one and one per team searching).
MAX_CATALOGS = 64


@dataclass
class IndexHit:
    runbook_id: int
    rank: float                 # BM25, positive: higher is better
    matched_terms: int          # how many of the query's words the runbook contains
    fields: list[str]           # the columns with a match, in COLUMNS order
    title: str                  # with MARK_OPEN/MARK_CLOSE around matched words
    snippet: str                # the matching part of the best column, marked the same way
    snippet_field: str


def _row(runbook: Runbook, meta: dict[str, Any]) -> tuple:
    # meta holds each symptom resolved from the library as the team sees it (title
    # included): a library symptom edited in the app re-saves the runbooks using it,
    # and a team's symptom overlay is in the signature, so either rebuilds the index.
    symptoms = " · ".join(f"{s.get('title') or s['id']} ({s['id']})" for s in meta.get("symptoms") or [])
    knobs = " ".join(k["key"] for k in meta.get("knobs") or [])
    return (runbook.pk, runbook.slug, runbook.title, symptoms, knobs, runbook.summary, runbook.body)


def _team_id(team: Team | int | None) -> int | None:
    return team.pk if isinstance(team, Team) else team


class RunbookIndex:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        # team id (None: the shared catalog) -> (signature, database)
        self._dbs: OrderedDict[int | None, tuple[tuple, sqlite3.Connection]] = OrderedDict()

    def _current_signature(self, team_id: int | None) -> tuple:
        """What the team's index is built from: each runbook row of its catalog with
        its last save (an overlay going in or out, a runbook published or saved),
        and the team's live symptom overlays likewise. About 130 short rows."""
        rows = tuple(runbook_catalog(team=team_id).order_by("pk").values_list("pk", "updated"))
        overlays = tuple(SymptomOverlay.objects.filter(team_id=team_id, dropped__isnull=True)
                         .order_by("pk").values_list("pk", "updated")) if team_id is not None else ()
        return rows, overlays

    def _build(self, team_id: int | None) -> sqlite3.Connection:
        db = sqlite3.connect(":memory:", check_same_thread=False)
        db.execute(
            f"CREATE VIRTUAL TABLE idx USING fts5({', '.join(COLUMNS)}, tokenize='porter unicode61')")
        runbooks = list(runbook_catalog(team=team_id).order_by("pk").only(
            "id", "slug", "title", "summary", "body", "meta"))
        metas = catalog_resolve([rb.meta or {} for rb in runbooks], team_id)
        rows = [_row(rb, meta) for rb, meta in zip(runbooks, metas)]
        db.executemany(f"INSERT INTO idx(rowid, {', '.join(COLUMNS)}) VALUES (?, ?, ?, ?, ?, ?, ?)", rows)
        return db

    def _connection(self, team_id: int | None) -> sqlite3.Connection:
        """The index of `team_id`'s catalog, rebuilt if the catalog changed (under the lock)."""
        signature = self._current_signature(team_id)
        kept = self._dbs.get(team_id)
        if kept is None or kept[0] != signature:
            if kept is not None:
                kept[1].close()
            kept = self._dbs[team_id] = (signature, self._build(team_id))
        self._dbs.move_to_end(team_id)
        while len(self._dbs) > MAX_CATALOGS:
            self._dbs.popitem(last=False)[1][1].close()
        return kept[1]

    def search(self, terms: list[str], limit: int, *,
               team: Team | int | None) -> tuple[list[IndexHit], list[str], bool]:
        """Runbooks of `team`'s catalog containing any of `terms`, those with more of the terms first,
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
            db = self._connection(_team_id(team))
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
