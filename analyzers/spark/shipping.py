"""The analyzers package as a zip for Spark executors (SparkContext.addPyFile).

Executors then need only Python, the pinned hyperscan wheel and read access to
the bundle: not this checkout, not at any path. What a Python worker imports
(analyzers.scan, analyzers.signatures, analyzers.timestamps) is stdlib plus
hyperscan; the signature set itself is not in the zip but broadcast per
analysis (runner.shipped_signatures), because teams edit symptoms and each
signature set is its own. The zip is named by the hash of what it holds, so
a changed package is a new file and an executor never runs a stale copy
from an earlier application's cache.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import zipfile
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1]   # analyzers/
# Fixed timestamp: the same sources give the same bytes, so the hash names the content.
_EPOCH = (1980, 1, 1, 0, 0, 0)


def package_files() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*")
                  if p.is_file() and "__pycache__" not in p.parts and p.suffix not in (".pyc", ".pyo"))


def package_hash() -> str:
    digest = hashlib.sha256()
    for path in package_files():
        digest.update(path.relative_to(PACKAGE.parent).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def analyzers_zip(directory: str | os.PathLike | None = None) -> Path:
    """analyzers-<hash>.zip in `directory` (default: KB_SPARK_PYFILES_DIR or the
    system temp dir), built on first need and reused while the package is unchanged."""
    folder = Path(directory or os.environ.get("KB_SPARK_PYFILES_DIR")
                  or Path(tempfile.gettempdir()) / f"kb-spark-pyfiles-{os.getuid()}")
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / f"analyzers-{package_hash()}.zip"
    if not target.exists():
        # Written aside and renamed: a concurrent builder (another Celery child) never
        # hands Spark a half-written zip.
        fd, partial = tempfile.mkstemp(dir=folder, suffix=".zip.part")
        with os.fdopen(fd, "wb") as raw, zipfile.ZipFile(raw, "w", zipfile.ZIP_DEFLATED) as zf:
            for path in package_files():
                info = zipfile.ZipInfo(path.relative_to(PACKAGE.parent).as_posix(), _EPOCH)
                info.compress_type = zipfile.ZIP_DEFLATED
                zf.writestr(info, path.read_bytes())
        os.replace(partial, target)
    return target
