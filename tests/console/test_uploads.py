"""An upload is refused as it streams past IMPORT_MAX_BYTES: the handler stops passing chunks on at the limit
(so no later handler writes them anywhere), and the page says why instead of a form error about a missing file."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.files.uploadhandler import StopUpload
from django.test import RequestFactory

from console.uploads import MSG_UPLOAD_TOO_LARGE, BoundedUploadHandler, upload_refusal


def test_the_handler_stops_at_the_limit_and_passes_nothing_past_it(settings):
    settings.IMPORT_MAX_BYTES = 10_000
    request = RequestFactory().post("/")
    handler = BoundedUploadHandler(request)
    handler.handle_raw_input(None, {}, 0, b"--b")
    passed = []
    with pytest.raises(StopUpload) as stopped:
        for start in range(0, 50_000, 4_096):
            passed.append(handler.receive_data_chunk(b"x" * 4_096, start))
    assert stopped.value.connection_reset is False  # the rest is drained unkept, so the page can answer
    assert sum(len(chunk) for chunk in passed) <= 10_000 and len(passed) == 2
    assert upload_refusal(request) == MSG_UPLOAD_TOO_LARGE.format(limit=10_000)


def test_a_body_announced_as_too_large_is_refused_before_a_byte_is_read(settings):
    settings.IMPORT_MAX_BYTES = 10_000
    request = RequestFactory().post("/")
    handler = BoundedUploadHandler(request)
    handler.handle_raw_input(None, {}, 5_000_000, b"--b")
    with pytest.raises(StopUpload):
        handler.receive_data_chunk(b"x", 0)
    assert upload_refusal(request)


@pytest.mark.kafka
@pytest.mark.django_db
def test_the_import_page_says_the_file_was_refused_as_it_arrived(client_for, operator, topic_factory,
                                                                 local_cluster, settings, tmp_path):
    settings.IMPORT_MAX_BYTES = 50_000
    settings.FILE_UPLOAD_MAX_MEMORY_SIZE = 0  # what a large file does: every byte kept goes to a temporary file
    settings.FILE_UPLOAD_TEMP_DIR = str(tmp_path)
    topic = topic_factory("too-big", partitions=1)
    big = SimpleUploadedFile("big.jsonl", b'{"value": "x"}\n' * 40_000)  # 600,000 bytes
    refused = client_for(operator).post(f"/clusters/local/messages/{topic}/import/",
                                        {"file": big, "rate": 100, "reason": "load", "preview": "1"})
    assert refused.status_code == 400 and MSG_UPLOAD_TOO_LARGE.format(limit=50_000).split(":")[0] in \
        refused.content.decode().replace("&#x27;", "'")
    assert list(tmp_path.iterdir()) == []
