"""All signatures of all runbooks behind one multi-literal prefilter.

Hyperscan finds candidate lines in one pass over the bytes (Spark SQL regex is
two orders of magnitude too slow: docs/architecture.md); Python `re` then
decides each candidate line and extracts the named captures. What Hyperscan
looks for are the literal strings each pattern cannot match without
(analyzers/literals.py), compiled with its pure-literal compiler: the bundled
Vectorscan drops matches of regexes compiled together into one database (see
analyzers/literals.py), so the regexes themselves never go to Hyperscan. A
line holding a pattern's literal is a candidate for that pattern; `re` keeps
the result exact. Without the hyperscan wheel, a pure-Python matcher does the
same job slowly.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Iterable

from analyzers.literals import is_caseless, required_literal_sets
from analyzers.runbook_spec import RunbookSpec, as_specs

try:
    import hyperscan
except ImportError:  # pragma: no cover - exercised only where the wheel is missing
    hyperscan = None

_NAMED_GROUP = re.compile(r"\(\?P<\w+>")

# Lines worth reporting when no signature explains them (unmatched templates).
ERROR_LINE = r"\b(?:ERROR|FATAL|SEVERE|CRITICAL)\b|^\s*(?:Caused by: )?(?:[a-zA-Z_$][\w$]*\.)+[A-Z][\w$]*(?:Exception|Error)\b"
ERROR_KEY = "__error__"

# Version banners: component -> patterns whose group 1 is the version.
VERSION_PATTERNS: dict[str, list[str]] = {
    "hadoop": [
        r"STARTUP_MSG:\s+version = (\d+\.\d+\.\d+[\w.-]*)",
        r"hadoop-(?:common|hdfs|hdfs-client|yarn-common)-(\d+\.\d+\.\d+[\w.-]*?)\.jar",
        r"Hadoop version:\s*(\d+\.\d+\.\d+[\w.-]*)",
    ],
    "flink": [
        r"\(Version: (\d+\.\d+(?:\.\d+)?)[,)]",
        r"flink-dist(?:_2\.1[12])?-(\d+\.\d+\.\d+)\.jar",
    ],
    "hbase": [
        r"\bHBase (\d+\.\d+\.\d+[\w.-]*)",
        r"hbase-(?:server|common|client)-(\d+\.\d+\.\d+[\w.-]*?)\.jar",
    ],
    "zookeeper": [r"zookeeper\.version=(\d+\.\d+\.\d+)"],
    "kafka": [r"Kafka version\s*:\s*(\d+\.\d+\.\d+)"],
    "spark": [r"Running Spark version (\d+\.\d+\.\d+)"],
    "kernel": [
        r"Linux version (\d+\.\d+\.\d+[\w.-]*)",
        r"Tainted: [A-Z ]{0,20}(\d+\.\d+\.\d+[\w.+-]*) #",
        r"Not tainted (\d+\.\d+\.\d+[\w.+-]*) #",
    ],
    "curator": [r"curator-(?:framework|recipes|client)-(\d+\.\d+\.\d+)\.jar"],
}
VERSION_KEY_PREFIX = "__version__:"


@dataclass(frozen=True)
class Signature:
    key: str          # symptom id, ERROR_KEY, or "__version__:<component>"
    pattern: str      # Python regex


def signatures_from_runbooks(runbooks: Iterable[RunbookSpec | dict[str, Any]]) -> list[Signature]:
    """One Signature per (symptom, pattern); a shared symptom is compiled once."""
    seen: set[tuple[str, str]] = set()
    out: list[Signature] = []
    for rb in as_specs(runbooks):
        for s in rb.symptoms:
            for p in s.patterns:
                if (s.id, p) not in seen:
                    seen.add((s.id, p))
                    out.append(Signature(s.id, p))
    out.append(Signature(ERROR_KEY, ERROR_LINE))
    for comp, pats in VERSION_PATTERNS.items():
        out.extend(Signature(VERSION_KEY_PREFIX + comp, p) for p in pats)
    return out


def to_hyperscan(pattern: str) -> bytes:
    """Python named groups are not Hyperscan syntax (scripts/bench.py turns signatures into grep EREs)."""
    return _NAMED_GROUP.sub("(?:", pattern).encode("utf-8")


class Matcher:
    """Finds, in a block of complete lines, the lines each signature may match.

    `candidates(data)` yields (signature index, line start, line end) with
    byte offsets into data; each (signature, line) at most once.
    """

    def __init__(self, signatures: list[Signature]):
        self.signatures = signatures
        self.regexes = [re.compile(s.pattern) for s in signatures]
        # A second database without the error-line pattern: once a range has sampled
        # enough unmatched error lines, scanning goes on without paying for them.
        self._signature_ids = [i for i, s in enumerate(signatures) if s.key != ERROR_KEY]
        # Per signature, one or two sets of literals: a candidate line holds one string of each.
        self._literals = [required_literal_sets(s.pattern) for s in signatures]
        # A pattern with no literal every match contains: `re` tries it on every line.
        self._unfiltered = [i for i, lits in enumerate(self._literals) if not lits]
        self._db = self._compile(list(range(len(signatures)))) if hyperscan is not None else None
        self._db_no_errors = None   # compiled on first need: most bundles never fill the error sample

    @property
    def engine(self) -> str:
        return "hyperscan" if self._db is not None else "python-re"

    def _compile(self, ids: list[int]) -> _LiteralDatabase:
        """A pure-literal database, and per literal id the signatures it stands for."""
        owners: dict[tuple[bytes, bool], tuple[list[int], list[tuple[int, int]]]] = {}
        for i in ids:
            caseless = is_caseless(self.signatures[i].pattern)
            sets = self._literals[i]
            for part, literals in enumerate(sets):
                for literal in sorted(literals):
                    single, paired = owners.setdefault((literal.encode("utf-8"), caseless), ([], []))
                    if len(sets) == 1:
                        single.append(i)
                    else:
                        paired.append((i, part))
        keys = list(owners)
        db = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
        if keys:
            db.compile(
                expressions=[literal for literal, _ in keys],
                ids=list(range(len(keys))),
                elements=len(keys),
                flags=[hyperscan.HS_FLAG_CASELESS if caseless else 0 for _, caseless in keys],
                literal=True,
            )
        chosen = set(ids)
        return _LiteralDatabase(db, [owners[k][0] for k in keys], [owners[k][1] for k in keys],
                                {n for n, k in enumerate(keys) if owners[k][1]},
                                [i for i in self._unfiltered if i in chosen])

    def candidates(self, data: bytes, errors: bool = True) -> list[tuple[int, int, int]]:
        if self._db is None:
            return self._candidates_python(data, errors)
        if not errors and self._db_no_errors is None:
            self._db_no_errors = self._compile(self._signature_ids)
        lits = self._db if errors else self._db_no_errors
        single, paired, paired_ids = lits.single, lits.paired, lits.paired_ids
        hits: set[tuple[int, int]] = set()   # (line start, literal id)
        add = hits.add

        def on_match(literal_id: int, _from: int, to: int, _flags: int, _ctx: Any) -> None:
            # The line of the literal's last byte, itself a "\n" when the literal ends with $.
            # Returns None: a truthy value would stop the scan.
            add((data.rfind(b"\n", 0, to - 1) + 1, literal_id))

        if single:
            # The last line's $ needs its "\n" too (offsets in data are unchanged).
            lits.db.scan(data if data.endswith(b"\n") else data + b"\n", match_event_handler=on_match)
        found = {(start, idx) for start, literal_id in hits for idx in single[literal_id]}
        if paired_ids:
            first_part: dict[tuple[int, int], int] = {}
            for start, literal_id in hits:
                if literal_id in paired_ids:
                    for idx, part in paired[literal_id]:
                        if first_part.setdefault((start, idx), part) != part:
                            found.add((start, idx))   # a string of each set on this line
        if lits.unfiltered:
            found.update((start, idx) for start in _line_starts(data) for idx in lits.unfiltered)
        out = []
        last_start = end = -1
        for start, idx in sorted(found):
            if start != last_start:
                last_start, end = start, data.find(b"\n", start)
                end = len(data) if end < 0 else end
            out.append((idx, start, end))
        return out

    def _candidates_python(self, data: bytes, errors: bool) -> list[tuple[int, int, int]]:
        out = []
        pos = 0
        ids = range(len(self.regexes)) if errors else self._signature_ids
        for raw in data.split(b"\n"):
            line = raw.decode("utf-8", errors="replace")
            for idx in ids:
                if self.regexes[idx].search(line):
                    out.append((idx, pos, pos + len(raw)))
            pos += len(raw) + 1
        return out

    def confirm(self, idx: int, line: str) -> re.Match[str] | None:
        return self.regexes[idx].search(line)


def _line_starts(data: bytes) -> Iterable[int]:
    yield 0
    pos = data.find(b"\n")
    while 0 <= pos < len(data) - 1:
        yield pos + 1
        pos = data.find(b"\n", pos + 1)


@dataclass(frozen=True)
class _LiteralDatabase:
    db: Any
    single: list[list[int]]                   # literal id -> signatures with one literal set
    paired: list[list[tuple[int, int]]]       # literal id -> (signature, which of its two sets)
    paired_ids: set[int]                      # literal ids with paired owners
    unfiltered: list[int]                     # signatures with no literal: every line


_CACHE: dict[tuple[Signature, ...], Matcher] = {}


def matcher_for(signatures: list[Signature]) -> Matcher:
    """Hyperscan databases cannot be pickled: each process builds (and keeps) its own."""
    key = tuple(signatures)
    if key not in _CACHE:
        _CACHE.clear()
        _CACHE[key] = Matcher(signatures)
    return _CACHE[key]

