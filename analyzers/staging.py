"""Staging, the engine's first step: unpack safely, transcode, and refuse a bundle
with nothing to scan. The engine (analyze_paths) and the worker's pipeline
(kb.services.analyses) both stage through stage_logs, so "no log files found"
is decided and worded in one place.
"""

from __future__ import annotations

from analyzers.bundle import stage_bundle
from analyzers.model import BundleError, Limits, StagedBundle

SKIPPED_NAMED = 3   # skipped files named in the error, at most


def stage_logs(paths: list[str], workdir: str, limits: Limits = Limits(), *,
               label: str | None = None) -> StagedBundle:
    """analyzers.bundle.stage_bundle, and BundleError when no log file came out of it.
    `label` names the input in that error (default: the paths as given)."""
    staged = stage_bundle(paths, workdir, limits)
    if not staged.files:
        skipped = "; ".join(f"{s.path}: {s.reason}" for s in staged.skipped[:SKIPPED_NAMED])
        name = label if label is not None else ", ".join(map(str, paths))
        raise BundleError(f"{name}: no log files found" + (f" (skipped {skipped})" if skipped else ""))
    return staged
