"""A RangeResult as the bytes a Spark task sends back to the driver, and back.

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
from analyzers.scan import RangeResult, RawHit


def encode(result: RangeResult) -> bytes:
    headers: dict[str, str] = {}
    hits = [(h.key, h.line_in_range, h.text, h.captures or None,
             None if h.header is None else headers.setdefault(h.header, h.header))
            for h in result.hits]
    # Every other field as it is (bounded samples: errors, lead records, stops...), by name,
    # so a field added to RangeResult travels without a change here.
    rest = {f.name: getattr(result, f.name) for f in fields(RangeResult) if f.name not in ("hits", "leads")}
    leads = {key: astuple(record) for key, record in result.leads.items()}   # tuples: no class per record
    return zlib.compress(pickle.dumps((hits, leads, rest), protocol=pickle.HIGHEST_PROTOCOL), 1)


def decode(blob: bytes) -> RangeResult:
    hits, leads, rest = pickle.loads(zlib.decompress(blob))
    return RangeResult(hits=[RawHit(key, line, text, captures or {}, header)
                             for key, line, text, captures, header in hits],
                       leads={key: LeadRecord(*values) for key, values in leads.items()}, **rest)
