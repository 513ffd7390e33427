"""Bundles a team admin names by URI instead of uploading them (issue 16).

    analysis = analysis_from_uri(user=admin, incident=incident, uri="file:///data/incident-42/")

A 50 GB log set already on a shared disk or on HDFS is analysed where it is:
the web server never carries it, the worker reads it (analyzers/bundle_uri.py:
file:// in place, hdfs:// and s3a:// copied by Spark's Hadoop filesystems, so
those always run on the Spark engine).

What may be named is settings.KB_BUNDLE_URI_ROOTS (empty: nothing, the field
is off). A file:// URI is normalised and its symlinks resolved before the
check, and is refused inside kb's own storage whatever the roots say: that
holds every team's uploads, and a URI must not read another team's. The
worker checks again before reading (a symlink may have been swapped in since).
Only a team's admins may name a URI: it reads with the worker's rights.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from urllib.parse import unquote, urlparse

from django.conf import settings
from django.db import transaction

from analyzers.bundle_uri import fetch_bundle, local_path, uri_scheme
from analyzers.model import BundleError
from kb.access import team_is_admin
from kb.models import Analysis, Bundle, Incident, Team
from kb.services.activity import activity_record
from kb.services.bundles import bundle_incident_for_upload, display_name, safe_label
from kb.services.storage import quota_admit

REMOTE_SCHEMES = ("hdfs", "s3a")


class UriRefused(Exception):
    """A bundle URI that may not be read; the message says why (shown to the user). `status`: HTTP answer."""

    def __init__(self, message: str, *, status: int = 400):
        super().__init__(message)
        self.status = status


def uris_enabled() -> bool:
    return bool(settings.KB_BUNDLE_URI_ROOTS)


def kb_storage_dirs() -> list[Path]:
    """Directories that hold kb's own data (every team's uploads, staged files, the database)."""
    dirs = [settings.VAR_DIR, settings.BUNDLES_DIR, settings.FILE_UPLOAD_TEMP_DIR, settings.DRAFT_FIXTURES_DIR]
    return [Path(os.path.realpath(d)) for d in dirs if d]


def _roots() -> tuple[list[Path], list[str]]:
    """(local directories, resolved; remote prefixes) of KB_BUNDLE_URI_ROOTS."""
    local, remote = [], []
    for root in settings.KB_BUNDLE_URI_ROOTS:
        scheme = uri_scheme(root)
        if scheme in REMOTE_SCHEMES:
            remote.append(root.rstrip("/"))
        elif scheme in ("", "file"):
            try:
                local.append(Path(os.path.realpath(local_path(root))))
            except BundleError:
                continue
    return local, remote


def _inside(path: Path, directory: Path) -> bool:
    return path == directory or directory in path.parents


def bundle_uri_check(uri: str) -> str:
    """The URI normalised (file://: its real path), or UriRefused saying why not."""
    uri = (uri or "").strip()
    if not uris_enabled():
        raise UriRefused("Bundle URIs are off here (KB_BUNDLE_URI_ROOTS is empty).")
    if "\x00" in uri or not uri:
        raise UriRefused("Name the bundle as file:///path, hdfs://namenode/path or s3a://bucket/path.")
    scheme = uri_scheme(uri)
    if scheme == "file":
        return _check_file(uri)
    if scheme in REMOTE_SCHEMES:
        return _check_remote(uri)
    raise UriRefused(f"{uri}: only file://, hdfs:// and s3a:// URIs are accepted.")


def _has_dots(path: str) -> bool:
    return any(part in ("..", ".") for part in path.split("/"))


def _check_file(uri: str) -> str:
    try:
        path = local_path(uri)
    except BundleError as exc:
        raise UriRefused(str(exc)) from None
    if not path.startswith("/") or _has_dots(path):
        raise UriRefused(f"{uri}: refused: name an absolute path without '.' or '..' parts.")
    real = Path(os.path.realpath(path))
    if any(_inside(real, d) for d in kb_storage_dirs()):
        raise UriRefused(f"{uri}: refused: it is in kb's own storage, which holds every team's uploads.")
    local, _ = _roots()
    if not any(_inside(real, root) for root in local):
        allowed = ", ".join(str(r) for r in local) or "none"
        raise UriRefused(f"{uri}: refused: {real} is not under an allowed directory ({allowed}; "
                         "symlinks are followed before this check).")
    if not real.exists():
        raise UriRefused(f"{uri}: no such file or directory.")
    return real.as_uri()


def _check_remote(uri: str) -> str:
    parsed = urlparse(uri)
    if _has_dots(unquote(parsed.path)) or parsed.query or parsed.fragment:
        raise UriRefused(f"{uri}: refused: no '.' or '..' path parts, query or fragment.")
    _, remote = _roots()
    if not any(uri == p or uri.startswith(p + "/") for p in remote):
        raise UriRefused(f"{uri}: refused: not under an allowed prefix ({', '.join(remote) or 'none'}).")
    return uri


def analysis_from_uri(*, user, uri: str, incident: Incident | None = None, team: Team | None = None) -> Analysis:
    """A queued analysis of the bundle `uri` names, on `incident` (or a new incident of `team`).
    UriRefused (nothing stored) unless the user is an admin of the team and the URI is allowed;
    QuotaExceeded past the team's analyses per hour."""
    from kb.services.analyses import analysis_start

    team_id = incident.team_id if incident is not None else team.pk
    if not team_is_admin(user, team_id):
        raise UriRefused("Only an admin of the team may name a bundle by URI.", status=403)
    normalised = bundle_uri_check(uri)
    name = display_name(unquote(urlparse(normalised).path).rstrip("/"))
    with transaction.atomic():
        quota_admit(team_id=team_id)   # the hourly limit, under the team's quota lock like uploads
        if incident is None:
            incident = bundle_incident_for_upload(user=user, team=team, name=name)
        bundle = Bundle.objects.create(team_id=incident.team_id, incident=incident, uploaded_by=user,
                                       original_name=name, source_uri=normalised)
        activity_record(incident=incident, actor=user, verb="uploaded", target=name, bundle=bundle.pk,
                        uri=normalised[:300])
        return analysis_start(bundle=bundle)


def bundle_source(bundle: Bundle, workdir: Path, spark=None) -> Path:
    """What the worker stages for `bundle`: the upload under (a safe form of) its original
    name, or what its URI names (checked again now; a remote one fetched into `workdir`)."""
    directory = workdir / "input"
    directory.mkdir(parents=True)
    if not bundle.source_uri:
        return _input_link(Path(bundle.stored_path), directory / safe_label(bundle.original_name))
    try:
        uri = bundle_uri_check(bundle.source_uri)
    except UriRefused as exc:   # the settings or the file system changed since it was named
        raise BundleError(str(exc)) from None
    return Path(fetch_bundle(uri, directory, spark))


def _input_link(stored: Path, target: Path) -> Path:
    """The upload under a safe version of its original name, so the engine reads
    host/component hints and names the file in messages (a hard link: no copy)."""
    try:
        os.link(stored, target)
    except OSError:
        shutil.copyfile(stored, target)
    return target


def needs_spark(bundle: Bundle) -> bool:
    """hdfs:// and s3a:// are read through Spark's Hadoop filesystems."""
    return uri_scheme(bundle.source_uri) in REMOTE_SCHEMES
