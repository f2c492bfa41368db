"""A real HTTP receiver for webhooks (on loopback, a thread of the test process) and the channels that name it."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest


class Receiver:
    def __init__(self) -> None:
        self.received: list[dict] = []
        self.status = 200  # what it answers; a test may make it fail
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 (http.server's naming)
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                if receiver.status == 200:
                    receiver.received.append(json.loads(body))
                self.send_response(receiver.status)
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}/hook"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def webhook(settings):
    """A receiver registered as webhook channel `oncall` (mail goes to Django's locmem outbox in tests)."""
    receiver = Receiver()
    settings.ALERT_WEBHOOKS = f"oncall={receiver.url}"
    yield receiver
    receiver.close()
