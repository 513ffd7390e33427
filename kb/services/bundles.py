"""Uploaded bundles on disk: BUNDLES_DIR/<code>/upload (the name is ours; the
user's file name is kept for display only, docs/reliability.md C1).

    BUNDLES_DIR/<code>/upload                   the bytes as uploaded
    BUNDLES_DIR/<code>/staged/<analysis id>/    what an analysis unpacked (see analyses.py)
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
from pathlib import Path

from django.conf import settings
from django.core.files.uploadedfile import UploadedFile
from django.db import transaction

from analyzers.model import Limits
from kb.models import Bundle, Incident, Team
from kb.selectors.catalog import viewer_team
from kb.services.activity import activity_record

UPLOAD_NAME = "upload"
COPY_CHUNK = 1024 * 1024
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


class NoTeam(Exception):
    """The user belongs to no team, so an upload has nowhere to go."""


def bundle_limits() -> Limits:
    """The unpacking limits (bombs) from settings, for the worker and the CLI alike."""
    return Limits(max_unpacked_bytes=settings.BUNDLE_MAX_UNPACKED_BYTES,
                  max_files=settings.BUNDLE_MAX_FILES, max_ratio=settings.BUNDLE_MAX_RATIO)


def bundle_dir(bundle: Bundle) -> Path:
    return Path(settings.BUNDLES_DIR) / str(bundle.code)


def display_name(name: str | None) -> str:
    """The user's file name as a label: last path part, printable, at most 255 characters."""
    name = (name or "").replace("\\", "/").rsplit("/", 1)[-1]
    name = "".join(ch for ch in name if ch.isprintable()).strip()
    return name[-255:] or "upload"


def safe_label(name: str) -> str:
    """A file-system-safe version of the user's file name, for the engine to read
    host and component hints from ("hadoop-hdfs-datanode-dn1.log"); only
    [A-Za-z0-9._-], no leading dot, at most 100 characters, suffix kept."""
    label = _UNSAFE.sub("_", display_name(name)).lstrip("._-")
    if len(label) > 100:
        label = label[-100:].lstrip("._-")
    return label or "upload"


def bundle_store(*, incident: Incident, user, uploaded_file: UploadedFile) -> Bundle:
    """Copy an upload to BUNDLES_DIR/<code>/upload, computing its size and SHA-256 on the way."""
    # Writes only (no read before the first INSERT): on SQLite a transaction that
    # reads first and then writes can fail at once with "database is locked"
    # while the worker writes; one that writes first waits for the lock.
    with transaction.atomic():
        bundle = Bundle.objects.create(
            team_id=incident.team_id, incident=incident, uploaded_by=user,
            original_name=display_name(uploaded_file.name),
        )
        directory = bundle_dir(bundle)
        target = directory / UPLOAD_NAME
        try:
            directory.mkdir(parents=True)
            size, digest = _copy(uploaded_file, target)
        except BaseException:
            shutil.rmtree(directory, ignore_errors=True)
            raise
        bundle.stored_path, bundle.size, bundle.sha256 = str(target), size, digest
        bundle.save(update_fields=["stored_path", "size", "sha256"])
        activity_record(incident=incident, actor=user, verb="uploaded", target=bundle.original_name,
                        bundle=bundle.pk, size=size)
    return bundle


def _copy(uploaded_file: UploadedFile, target: Path) -> tuple[int, str]:
    sha = hashlib.sha256()
    size = 0
    partial = target.with_name(target.name + ".part")
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o640)
    with os.fdopen(fd, "wb") as out:
        uploaded_file.seek(0)
        for chunk in uploaded_file.chunks(COPY_CHUNK):
            sha.update(chunk)
            out.write(chunk)
            size += len(chunk)
        out.flush()
        os.fsync(out.fileno())
    os.replace(partial, target)
    return size, sha.hexdigest()


def bundle_default_team(*, user) -> Team:
    """Where an upload that names no incident goes: the user's first team."""
    team = viewer_team(user)
    if team is None:
        raise NoTeam(f"{user} belongs to no team")
    return team


def bundle_incident_for_upload(*, user, team: Team, name: str) -> Incident:
    """An incident for an upload that names none, titled after the file."""
    return Incident.objects.create(team=team, title=display_name(name)[:200], created_by=user, owner=user)
