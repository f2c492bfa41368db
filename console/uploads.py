"""Uploads are refused as they stream past the largest file the console takes (IMPORT_MAX_BYTES: an import's
file is the largest upload there is), never after the whole body has been written to disk.

Django reads a multipart body before the view runs (the CSRF check reads the form), so the limit is an upload
handler, first in FILE_UPLOAD_HANDLERS: past the limit it stops storing, drains the rest without keeping it (so
the person still gets the page's answer rather than a reset connection) and marks the request, and the view says
why (`upload_refusal`)."""

from __future__ import annotations

import os

from django.conf import settings
from django.core.files.uploadhandler import FileUploadHandler, StopUpload

DEFAULT_MAX_BYTES = 200 * 1024 * 1024
MSG_UPLOAD_TOO_LARGE = ("The file is larger than the {limit} bytes the console accepts (IMPORT_MAX_BYTES): it was "
                        "refused as it arrived, and nothing of it was kept. Use the shell for larger files.")


def upload_max_bytes() -> int:
    value = getattr(settings, "IMPORT_MAX_BYTES", None) or os.environ.get("IMPORT_MAX_BYTES", "")
    try:
        return int(value) if str(value).strip() else DEFAULT_MAX_BYTES
    except ValueError:
        return DEFAULT_MAX_BYTES


class BoundedUploadHandler(FileUploadHandler):
    def __init__(self, request=None) -> None:
        super().__init__(request)
        self.limit = upload_max_bytes()
        self.received = 0

    def handle_raw_input(self, input_data, META, content_length, boundary, encoding=None):
        # A body announced as larger than the limit (the form's own fields add little) is refused unread.
        if content_length and content_length > self.limit + 64 * 1024:
            self._refuse()
        return None

    def receive_data_chunk(self, raw_data, start):
        self.received += len(raw_data)
        if self.received > self.limit or getattr(self.request, "upload_refused", False):
            self._refuse()
            raise StopUpload(connection_reset=False)
        return raw_data

    def file_complete(self, file_size):
        return None

    def _refuse(self) -> None:
        if self.request is not None:
            self.request.upload_refused = MSG_UPLOAD_TOO_LARGE.format(limit=self.limit)


def upload_refusal(request) -> str:
    """Why the request's upload was refused, or ""."""
    return getattr(request, "upload_refused", "") or ""
