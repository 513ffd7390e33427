"""What an analysis keeps of its staged files: BUNDLES_DIR/<code>/context/<analysis id>/.

The unpacked tree (kb.services.staged) is removed once the analysis is done
(issue 17: each analysis kept a full unpacked copy, 110 MB for a 712 kB
upload); the ±10 lines around a piece of evidence are read from this
compressed, line-indexed copy of each staged file instead (kb.lib.line_store),
in bounded bytes whatever the file's length.

    context/<id>/manifest.json      bundle path -> number of the store
    context/<id>/<n>.lines, .idx    the store of that file

A bundle path from a request is only looked up in the manifest; the files
read are named by the app (numbers), never by the request.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Iterable

from analyzers.model import BundleFile
from kb.lib.line_store import StoredLine, line_store_paths, line_store_read, line_store_write
from kb.models import Analysis, Bundle
from kb.services.bundles import bundle_dir

MANIFEST = "manifest.json"


def context_dir(bundle: Bundle, analysis_id: int) -> Path:
    return bundle_dir(bundle) / "context" / str(analysis_id)


def context_store_write(*, bundle: Bundle, analysis_id: int, files: Iterable[BundleFile]) -> int:
    """Store every staged file of an analysis; returns the bytes stored. Rewritten
    whole on a redelivery (a partial store from a killed run goes first)."""
    directory = context_dir(bundle, analysis_id)
    shutil.rmtree(directory, ignore_errors=True)
    directory.mkdir(parents=True)
    manifest: dict[str, int] = {}
    stored = 0
    for number, f in enumerate(files):
        _, size = line_store_write(Path(f.disk_path), directory / str(number))
        manifest[f.path] = number
        stored += size
    text = json.dumps(manifest, ensure_ascii=False)
    (directory / MANIFEST).write_text(text, encoding="utf-8")
    return stored + len(text.encode("utf-8"))


def context_store_lines(*, analysis: Analysis, path: str, first: int, last: int,
                        max_line_bytes: int) -> list[StoredLine] | None:
    """Lines first..last of bundle file `path` of the analysis; None when the
    analysis kept no store of it (an older analysis, or pruned)."""
    directory = context_dir(analysis.bundle, analysis.id)
    try:
        manifest = json.loads((directory / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    number = manifest.get(path) if isinstance(manifest, dict) else None
    if not isinstance(number, int) or isinstance(number, bool):
        return None
    prefix = directory / str(number)
    if not all(p.is_file() for p in line_store_paths(prefix)):
        return None
    return line_store_read(prefix, first, last, max_line_bytes=max_line_bytes)
