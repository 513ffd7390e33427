"""A RangeResult as the bytes a Spark task sends back to the driver, and back.

The hits stay packed (analyzers/scan.py pack_hits, chunks of PACK_CHUNK_HITS) in the
decoded RangeResult: the driver unpacks one chunk at a time while it assembles, so it never holds
every hit of a big bundle (analyzers/occurrences.py).

Measured on the bench's 1 GB bundle (95,000 hits, 33,000 sampled error lines):
the results pickled as dataclasses are 35 MB; the driver took 0.6 CPU-s to
unpickle them (one object reconstruction per hit) and the JVM carried all 35
MB from the Python workers to the driver. As plain tuples, with each
record's header string shared by the hits under it (pickle writes a shared
object once), and zlib level 1 (0.11 CPU-s spread over the workers), they are
about 4 MB, and decoding takes about half the CPU.
"""

from __future__ import annotations

import pickle
import zlib
from dataclasses import astuple, fields

from analyzers.lead_scan import LeadRecord
from analyzers.scan import PACK_MIN_HITS, RangeResult, hit_rows, pack_hits, rows_to_hits


def encode(result: RangeResult) -> bytes:
    # Every other field as it is (bounded samples: errors, lead records, stops...), by name,
    # so a field added to RangeResult travels without a change here.
    rest = {f.name: getattr(result, f.name) for f in fields(RangeResult)
            if f.name not in ("hits", "leads", "packed", "errors")}
    leads = {key: astuple(record) for key, record in result.leads.items()}   # tuples: no class per record
    # The scan's packed chunks travel as they are and stay packed; fewer than PACK_MIN_HITS loose
    # hits travel inside the one compressed body and are unpacked at once (a small result
    # compresses better whole).
    chunks = [(p if isinstance(p, bytes) else pack_hits(p), off) for p, off in result.packed]
    rows = [] if len(result.hits) >= PACK_MIN_HITS else hit_rows(result.hits)
    if result.hits and not rows:
        chunks.insert(0, (pack_hits(result.hits), 0))   # `hits` come before `packed`
    body = zlib.compress(pickle.dumps((rows, leads, rest), protocol=pickle.HIGHEST_PROTOCOL), 1)
    errors = zlib.compress(pickle.dumps(result.errors, protocol=pickle.HIGHEST_PROTOCOL), 1)
    return pickle.dumps((chunks, errors, body), protocol=pickle.HIGHEST_PROTOCOL)


def decode(blob: bytes) -> RangeResult:
    """The RangeResult; packed hits stay packed (RangeResult.all_hits unpacks them when read)."""
    chunks, errors, body = pickle.loads(blob)
    rows, leads, rest = pickle.loads(zlib.decompress(body))
    result = Received(hits=rows_to_hits(rows), packed=chunks, errors=None,
                      leads={key: LeadRecord(*values) for key, values in leads.items()}, **rest)
    result.packed_errors = errors
    return result


class Received(RangeResult):
    """A decoded RangeResult whose error-line sample (up to MAX_ERROR_LINES lines) stays compressed
    and is decoded on each read, until something else is assigned: the driver then holds the
    sample of the range it assembles, not of every range (7.5 MiB of objects on the bench's 1 GB
    bundle, 3.0 on its 100 MB one; 0.4 / 0.2 compressed)."""

    packed_errors = b""

    @property
    def errors(self) -> list[tuple[int, str]]:
        held = self.__dict__["_errors"]
        return pickle.loads(zlib.decompress(self.packed_errors)) if held is None else held

    @errors.setter
    def errors(self, value: list[tuple[int, str]] | None) -> None:
        self.__dict__["_errors"] = value
