"""All signatures of all runbooks compiled into one multi-pattern matcher.

Hyperscan finds candidate lines in one pass over the bytes (Spark SQL regex is
two orders of magnitude too slow: docs/architecture.md); Python `re` then
confirms each candidate line and extracts the named captures. Patterns are
compiled with HS_FLAG_PREFILTER, so Hyperscan may report more than the
pattern matches but never less: the confirmation step keeps results exact.
Without the hyperscan wheel, a pure-Python matcher does the same job slowly.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Iterable

from analyzers.lead_records import LEAD_CONFIRM_CHARS, LEAD_PATTERNS

try:
    import hyperscan
except ImportError:  # pragma: no cover - exercised only where the wheel is missing
    hyperscan = None

_NAMED_GROUP = re.compile(r"\(\?P<\w+>")

# Lines worth reporting when no signature explains them (unmatched templates).
ERROR_LINE = r"\b(?:ERROR|FATAL|SEVERE|CRITICAL)\b|^\s*(?:Caused by: )?(?:[a-zA-Z_$][\w$]*\.)+[A-Z][\w$]*(?:Exception|Error)\b"
ERROR_KEY = "__error__"
# Lines worth a lead besides those (analyzers/lead_records.py: failures at INFO/WARN, other formats).
LEAD_KEY = "__lead__"
SAMPLE_KEYS = (ERROR_KEY, LEAD_KEY)

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


def signatures_from_runbooks(runbooks: Iterable[dict[str, Any]]) -> list[Signature]:
    """One Signature per (symptom, pattern); a shared symptom is compiled once."""
    seen: set[tuple[str, str]] = set()
    out: list[Signature] = []
    for meta in runbooks:
        for s in meta.get("symptoms", []):
            for p in s.get("patterns") or []:
                if (s["id"], p) not in seen:
                    seen.add((s["id"], p))
                    out.append(Signature(s["id"], p))
    out.append(Signature(ERROR_KEY, ERROR_LINE))
    out.extend(Signature(LEAD_KEY, p) for p in LEAD_PATTERNS)
    for comp, pats in VERSION_PATTERNS.items():
        out.extend(Signature(VERSION_KEY_PREFIX + comp, p) for p in pats)
    return out


def to_hyperscan(pattern: str) -> bytes:
    """Python named groups are not Hyperscan syntax; the captures come from `re` later."""
    return _NAMED_GROUP.sub("(?:", pattern).encode("utf-8")


class Matcher:
    """Finds, in a block of complete lines, the lines each signature may match.

    `candidates(data)` yields (signature index, line start, line end) with
    byte offsets into data; each (signature, line) at most once.
    """

    def __init__(self, signatures: list[Signature]):
        self.signatures = signatures
        self.regexes = [re.compile(s.pattern) for s in signatures]
        # A second database without the error-line and lead patterns: once a range has sampled
        # enough unmatched error lines and lead candidates, scanning goes on without paying for them.
        self._signature_ids = [i for i, s in enumerate(signatures) if s.key not in SAMPLE_KEYS]
        self._error_regexes = [self.regexes[i] for i, s in enumerate(signatures) if s.key == ERROR_KEY]
        self._lead_ids = frozenset(i for i, s in enumerate(signatures) if s.key == LEAD_KEY)
        self._lead_regexes = [self.regexes[i] for i in sorted(self._lead_ids)]
        self._db = self._compile(list(range(len(signatures)))) if hyperscan is not None else None
        self._db_no_errors = None   # compiled on first need: most bundles never fill the error sample
        # ... and one without the lead patterns only, for ranges whose lead sample is full first.
        self._no_lead_ids = [i for i in range(len(signatures)) if i not in self._lead_ids]
        self._db_no_leads = None

    @property
    def engine(self) -> str:
        return "hyperscan" if self._db is not None else "python-re"

    def _compile(self, ids: list[int]):
        db = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
        flags = hyperscan.HS_FLAG_PREFILTER | hyperscan.HS_FLAG_MULTILINE | hyperscan.HS_FLAG_ALLOWEMPTY
        db.compile(
            expressions=[to_hyperscan(self.signatures[i].pattern) for i in ids],
            ids=ids,
            elements=len(ids),
            flags=[flags] * len(ids),
        )
        return db

    def candidates(self, data: bytes, errors: bool = True, leads: bool = True) -> list[tuple[int, int, int]]:
        """`errors`: the error and lead patterns too; `leads=False` leaves the lead patterns out
        (a range whose lead sample is full, analyzers/lead_scan.py, still samples error lines)."""
        if self._db is None:
            return self._candidates_python(data, errors, leads)
        if not errors and self._db_no_errors is None:
            self._db_no_errors = self._compile(self._signature_ids)
        if errors and not leads and self._db_no_leads is None:
            self._db_no_leads = self._compile(self._no_lead_ids) if self._lead_ids else self._db
        db = self._db_no_errors if not errors else self._db if leads else self._db_no_leads
        found: set[tuple[int, int]] = set()
        add = found.add

        def on_match(idx: int, _from: int, to: int, _flags: int, _ctx: Any) -> None:
            add((idx, data.rfind(b"\n", 0, to) + 1 if to else 0))

        db.scan(data, match_event_handler=on_match)
        out = []
        for idx, start in found:
            end = data.find(b"\n", start)
            out.append((idx, start, len(data) if end < 0 else end))
        out.sort(key=lambda t: (t[1], t[0]))
        return out

    def _candidates_python(self, data: bytes, errors: bool, leads: bool = True) -> list[tuple[int, int, int]]:
        out = []
        pos = 0
        ids = (range(len(self.regexes)) if leads else self._no_lead_ids) if errors else self._signature_ids
        for raw in data.split(b"\n"):
            line = raw.decode("utf-8", errors="replace")
            for idx in ids:
                if self.regexes[idx].search(line):
                    out.append((idx, pos, pos + len(raw)))
            pos += len(raw) + 1
        return out

    def confirm(self, idx: int, line: str) -> re.Match[str] | None:
        if idx in self._lead_ids:
            line = line[:LEAD_CONFIRM_CHARS]
        return self.regexes[idx].search(line)

    def is_lead_candidate(self, line: str) -> bool:
        """Would the scan take this line as a lead candidate (the error or the lead pattern)?"""
        return (any(rx.search(line) for rx in self._error_regexes)
                or any(rx.search(line[:LEAD_CONFIRM_CHARS]) for rx in self._lead_regexes))


_CACHE: dict[tuple[Signature, ...], Matcher] = {}


def matcher_for(signatures: list[Signature]) -> Matcher:
    """Hyperscan databases cannot be pickled: each process builds (and keeps) its own."""
    key = tuple(signatures)
    if key not in _CACHE:
        _CACHE.clear()
        _CACHE[key] = Matcher(signatures)
    return _CACHE[key]

