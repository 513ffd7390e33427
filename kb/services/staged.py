"""What an analysis staged, and where: BUNDLES_DIR/<code>/staged/<analysis id>/.

The engine unpacks and transcodes a bundle there; the pipeline then writes
manifest.json, bundle path -> file on disk (relative to the bundle's
directory), so a page can show the lines around a piece of evidence. A bundle
path from a request is only ever looked up in that manifest, and the file it
names must stay inside the bundle's directory (symlinks resolved).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Iterable

from analyzers.model import BundleFile
from kb.models import Analysis, Bundle
from kb.services.bundles import bundle_dir

MANIFEST = "manifest.json"


def staged_dir(bundle: Bundle, analysis_id: int) -> Path:
    return bundle_dir(bundle) / "staged" / str(analysis_id)


def staged_manifest_write(*, bundle: Bundle, analysis_id: int, files: Iterable[BundleFile]) -> None:
    root = bundle_dir(bundle)
    manifest = {f.path: os.path.relpath(f.disk_path, root) for f in files}
    directory = staged_dir(bundle, analysis_id)
    directory.mkdir(parents=True, exist_ok=True)
    (directory / MANIFEST).write_text(json.dumps(manifest, indent=1, ensure_ascii=False))


def analysis_staged_file(*, analysis: Analysis, path: str) -> Path | None:
    """Where the staged (UTF-8) copy of bundle path `path` of a done analysis is,
    for showing lines around evidence; None if unknown, gone, or outside the bundle."""
    root = bundle_dir(analysis.bundle)
    try:
        manifest = json.loads((staged_dir(analysis.bundle, analysis.id) / MANIFEST).read_text())
    except (OSError, ValueError):
        return None
    rel = manifest.get(path) if isinstance(manifest, dict) else None
    if not rel:
        return None
    try:
        disk = (root / rel).resolve(strict=True)
        inside = disk.is_relative_to(root.resolve(strict=True))
    except (OSError, RuntimeError, ValueError):
        return None
    return disk if inside and disk.is_file() else None
