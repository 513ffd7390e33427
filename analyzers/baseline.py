"""A healthy bundle's templates: what the baseline diff (`analyze --baseline PATH`) subtracts.

The baseline is staged and scanned exactly as the incident is (same signatures, same
runner), and its lead records' keys and unmatched error lines' keys
(analyzers/template_key.py, LogJuicer-style) become a Baseline. An analysis given it
drops every lead and unmatched line whose key the healthy bundle also has: what is
left is what is new in the incident.
"""

from __future__ import annotations

import tempfile
from typing import Any

from analyzers.engine import RangeRunner, scan_staged
from analyzers.leads import Baseline, bundle_templates, collect
from analyzers.model import Limits
from analyzers.scan import RANGE_BYTES
from analyzers.signatures import signatures_from_runbooks
from analyzers.staging import stage_logs


def baseline_of(paths: list[str], runbooks: list[dict[str, Any]], *, limits: Limits = Limits(),
                runner: RangeRunner | None = None, range_bytes: int = RANGE_BYTES) -> Baseline:
    """The templates of the bundle at `paths` (BundleError for unusable input, as for any bundle)."""
    with tempfile.TemporaryDirectory(prefix="kb-baseline-") as tmp:
        staged = stage_logs(paths, tmp, limits)
        results = scan_staged(staged, signatures_from_runbooks(runbooks), limits, runner, range_bytes)
        by_file: dict[str, list] = {}
        for r in results:
            by_file.setdefault(r.path, []).append(r)
        files = {f.path: f for f in staged.files}
        candidates = collect(by_file, files, None)
        error_lines = [(r.path, ln, text) for r in results for ln, text in r.errors]
        return Baseline(path=", ".join(paths), templates=bundle_templates(candidates, error_lines))
