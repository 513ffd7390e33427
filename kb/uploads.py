"""The upload handler (settings.FILE_UPLOAD_HANDLERS): every upload streams to
a temporary file, and a request past the limits is cut short (docs/reliability.md
C2: Django has no cap on uploaded file size of its own).

- handle_raw_input: a Content-Length beyond UPLOAD_MAX_BYTES (plus room for the
  multipart framing) marks the request as too large; the first file part then
  stops the parse, so the body is not read (the form fields before the file,
  such as the CSRF token, are still parsed).
- receive_data_chunk counts the bytes of every file of the request: past
  UPLOAD_MAX_BYTES the parse stops and the temporary file is closed (and so
  deleted: it is a NamedTemporaryFile).
- more than UPLOAD_MAX_FILES file parts stop the parse too.

Views ask `upload_refusal(request)` after reading request.FILES and answer
413 with its message.
"""

from __future__ import annotations

import os

from django.conf import settings
from django.core.files.uploadhandler import StopUpload, TemporaryFileUploadHandler
from django.http import HttpRequest

MULTIPART_SLACK = 64 * 1024   # headers and boundaries around the file bytes
_ATTR = "kb_upload_refusal"


def upload_refusal(request: HttpRequest) -> str | None:
    """Why the upload handler cut this request short, or None."""
    return getattr(request, _ATTR, None)


def human_bytes(n: int) -> str:
    for unit in ("bytes", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n} {unit}" if unit == "bytes" else f"{n:.1f} {unit}".replace(".0 ", " ")
        n /= 1024
    return str(n)   # pragma: no cover


class BundleUploadHandler(TemporaryFileUploadHandler):
    """TemporaryFileUploadHandler with a size cap over all files and a file count cap."""

    def __init__(self, request=None):
        super().__init__(request)
        self.received = 0
        self.files_seen = 0

    def _refuse(self, message: str) -> None:
        if self.request is not None and upload_refusal(self.request) is None:
            setattr(self.request, _ATTR, message)
        raise StopUpload(connection_reset=True)

    def _too_large(self) -> str:
        return f"The upload is larger than the limit of {human_bytes(settings.UPLOAD_MAX_BYTES)}."

    def handle_raw_input(self, input_data, META, content_length, boundary, encoding=None):
        if content_length and content_length > settings.UPLOAD_MAX_BYTES + MULTIPART_SLACK:
            # Not raised here (that would escape request.POST); the first file part stops.
            if self.request is not None:
                setattr(self.request, _ATTR, self._too_large())
        return None

    def new_file(self, *args, **kwargs):
        if self.request is not None and upload_refusal(self.request):
            raise StopUpload(connection_reset=True)
        self.files_seen += 1
        if self.files_seen > settings.UPLOAD_MAX_FILES:
            self._refuse(f"At most {settings.UPLOAD_MAX_FILES} files may be sent at once.")
        if settings.FILE_UPLOAD_TEMP_DIR:
            os.makedirs(settings.FILE_UPLOAD_TEMP_DIR, exist_ok=True)
        super().new_file(*args, **kwargs)

    def receive_data_chunk(self, raw_data, start):
        self.received += len(raw_data)
        if self.received > settings.UPLOAD_MAX_BYTES:
            self.upload_interrupted()       # close and remove the temporary file now
            self._refuse(self._too_large())
        return super().receive_data_chunk(raw_data, start)
