"""Several uploaded files, or a dropped folder, as one bundle: a zip of them, stored like any
upload, so the pipeline, the staged manifest and the engine see one archive.

    upload_as_one(files=[dn1.tgz, dn2.tgz], paths=[]) -> UploadedFile "dn1-and-1-more.zip"
    upload_as_one(files=[a.log, b.log], paths=["prod2-logs/dn1/a.log", "prod2-logs/dn2/b.log"])
        -> "prod2-logs.zip" holding prod2-logs/dn1/a.log, prod2-logs/dn2/b.log

The members are stored, not compressed again (most are archives already); the engine expands
archives inside the zip as it does any nested archive, and ignores a folder that wraps them all.
"""

from __future__ import annotations

import os
import zipfile

from django.core.files.uploadedfile import TemporaryUploadedFile, UploadedFile

from analyzers.paths import safe_member_path, strip_archive_suffix
from kb.services.bundles import COPY_CHUNK, display_name


def upload_as_one(*, files: list[UploadedFile], paths: list[str] | None = None) -> UploadedFile:
    """One file as it is; several as one zip. paths[i], when given, is files[i]'s path in the
    dropped folder (the browser's webkitRelativePath); unsafe or missing paths fall back to the
    file's own name."""
    paths = list(paths or [])
    names = _member_names(files, paths)
    if len(files) == 1 and "/" not in names[0]:
        return files[0]
    combined = TemporaryUploadedFile(_bundle_name(files, names), "application/zip", 0, None)
    with zipfile.ZipFile(combined.file, "w", compression=zipfile.ZIP_STORED, allowZip64=True) as zf:
        for f, name in zip(files, names):
            with zf.open(zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0)), "w", force_zip64=True) as out:
                f.seek(0)
                for chunk in f.chunks(COPY_CHUNK):
                    out.write(chunk)
    combined.file.flush()
    combined.size = os.path.getsize(combined.temporary_file_path())
    combined.seek(0)
    return combined


def _member_names(files: list[UploadedFile], paths: list[str]) -> list[str]:
    names, seen = [], set()
    for i, f in enumerate(files):
        name = display_name(f.name)
        try:
            given = safe_member_path(paths[i]) if i < len(paths) and paths[i] else None
        except ValueError:
            given = None
        name = given or name
        if name in seen:                       # two "app.log" from different places: keep both
            name = f"upload-{i + 1}/{name}"
        seen.add(name)
        names.append(name)
    return names


def _bundle_name(files: list[UploadedFile], names: list[str]) -> str:
    tops = {n.split("/", 1)[0] for n in names}
    if len(tops) == 1 and "/" in names[0]:
        return f"{tops.pop()}.zip"                                   # a dropped folder
    first = strip_archive_suffix(display_name(files[0].name))
    return f"{first}-and-{len(files) - 1}-more.zip"
