"""HTTP to one Connect worker: every call bounded, 409 retried as Connect asks, answers and silences turned into
the errors of gateway/kafka_connect/errors.py. Nothing else in the console speaks HTTP to Connect."""

from __future__ import annotations

import json
import socket
import ssl
import threading
import time
import urllib.error
import urllib.request
from base64 import b64encode
from dataclasses import dataclass, field
from urllib.parse import quote, urlencode

from gateway.kafka_connect.errors import (
    MSG_AUTH, MSG_TLS, MSG_NOT_FOUND, MSG_NOT_JSON, MSG_REBALANCING, MSG_REFUSED, MSG_SERVER, MSG_UNAVAILABLE, ConnectAuthFailed,
    ConnectError, ConnectNotFound, ConnectRebalancing, ConnectRefused, ConnectUnavailable,
)

# Connect answers 409 while a rebalance or a concurrent configuration change is in progress and asks the caller
# to retry; these are the pauses between attempts, as long as the call's time allows.
REBALANCE_BACKOFF_S = (0.25, 0.5, 1.0, 2.0)
MAX_BODY = 16 * 1024 * 1024

_unreachable: dict[str, float] = {}  # url -> monotonic time until which calls fail fast
_unreachable_lock = threading.Lock()


@dataclass(frozen=True)
class ConnectEndpoint:
    """How to reach one Connect cluster: its REST address, its credentials (resolved from the environment by the
    caller at the last moment) and the bounds of every call."""

    name: str
    url: str
    username: str = ""
    password: str = field(default="", repr=False)
    ca_file: str = ""
    cert_file: str = ""
    key_file: str = ""
    timeout: float = 5.0  # reads: the whole call, 409 retries included
    write_timeout: float = 15.0  # changes: Connect itself may take seconds (a rebalance, offsets written)
    retries: int = 3  # 409 answers retried at most this many times
    unreachable_backoff: float = 5.0  # after a silence, calls fail fast for this long


def path(*segments: str | int) -> str:
    """A path whose every segment is percent-encoded whole: a connector named 'a/b #1?' stays one segment."""
    return "/" + "/".join(quote(str(segment), safe="") for segment in segments)


def forget_unreachable() -> None:
    with _unreachable_lock:
        _unreachable.clear()


class Transport:
    def __init__(self, endpoint: ConnectEndpoint) -> None:
        self.endpoint = endpoint
        handlers = []
        if endpoint.url.startswith("https://"):
            context = ssl.create_default_context(cafile=endpoint.ca_file or None)
            if endpoint.cert_file:
                context.load_cert_chain(endpoint.cert_file, endpoint.key_file or None)
            handlers.append(urllib.request.HTTPSHandler(context=context))
        # No proxies from the environment: the console talks to the worker it was given, and a proxy would see
        # the credentials.
        handlers.append(urllib.request.ProxyHandler({}))
        self._opener = urllib.request.build_opener(*handlers)

    def call(self, method: str, where: str, *, query: list[tuple[str, str]] | None = None, body=None,
             write: bool = False, what: str = "such resource") -> tuple[int, object]:
        """(status, parsed JSON or None for an empty body). Raises a ConnectError for anything but 2xx."""
        endpoint = self.endpoint
        budget = endpoint.write_timeout if write else endpoint.timeout
        url = endpoint.url.rstrip("/") + where + (("?" + urlencode(query)) if query else "")
        self._fail_fast()
        deadline = time.monotonic() + budget
        attempts = 0
        while True:
            attempts += 1
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                self._silent(budget, "no time left for another attempt")
            try:
                return self._once(method, url, body, min(remaining, budget))
            except _Conflict as conflict:
                pause = REBALANCE_BACKOFF_S[min(attempts - 1, len(REBALANCE_BACKOFF_S) - 1)]
                if attempts > endpoint.retries or time.monotonic() + pause >= deadline:
                    raise ConnectRebalancing(MSG_REBALANCING.format(name=endpoint.name, attempts=attempts,
                                                                    detail=conflict.detail),
                                             connect=endpoint.name, http_status=409) from None
                time.sleep(pause)
            except urllib.error.HTTPError as exc:
                raise self._refusal(exc, what) from None
            except (urllib.error.URLError, OSError, socket.timeout) as exc:
                # An SSLError has a `reason` of its own (a word); URLError's is the error it wraps.
                reason = exc if isinstance(exc, ssl.SSLError) else getattr(exc, "reason", exc)
                if isinstance(reason, ssl.SSLError) and not isinstance(reason, ssl.SSLZeroReturnError):
                    # An untrusted certificate either way, or a client certificate refused: no retry helps.
                    raise ConnectAuthFailed(MSG_TLS.format(name=endpoint.name, detail=reason.reason or reason),
                                            connect=endpoint.name) from None
                self._silent(budget, str(reason) or type(reason).__name__)

    def _once(self, method: str, url: str, body, timeout: float) -> tuple[int, object]:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(url, data=data, method=method, headers=self._headers(data is not None))
        try:
            with self._opener.open(request, timeout=timeout) as response:
                raw = response.read(MAX_BODY)
                return response.status, self._parse(response.status, raw)
        except urllib.error.HTTPError as exc:
            if exc.code not in (409, 500):
                raise
            detail = _error_detail(exc)
            # Connect asks for a retry with 409 (and, while a rebalance is expected, with 500); "already exists" is
            # a 409 too, and no retry changes it.
            if (exc.code == 409 and "already exists" not in detail) or (exc.code == 500 and "rebalance" in detail):
                raise _Conflict(detail) from None
            raise _Refusal(exc, detail) from None

    def _headers(self, has_body: bool) -> dict[str, str]:
        headers = {"Accept": "application/json"}
        if has_body:
            headers["Content-Type"] = "application/json"
        if self.endpoint.username:
            token = b64encode(f"{self.endpoint.username}:{self.endpoint.password}".encode()).decode()
            headers["Authorization"] = f"Basic {token}"
        return headers

    def _parse(self, status: int, raw: bytes) -> object:
        if not raw.strip():
            return None
        try:
            return json.loads(raw)
        except ValueError:
            raise ConnectError(MSG_NOT_JSON.format(name=self.endpoint.name, status=status,
                                                   detail=raw[:200].decode(errors="replace")),
                               connect=self.endpoint.name, http_status=status) from None

    def _refusal(self, exc: urllib.error.HTTPError, what: str) -> ConnectError:
        name, status = self.endpoint.name, exc.code
        detail = exc.detail if isinstance(exc, _Refusal) else _error_detail(exc)
        if status in (401, 403):
            return ConnectAuthFailed(MSG_AUTH.format(name=name, status=status, detail=detail), connect=name,
                                     http_status=status)
        if status == 404:
            return ConnectNotFound(MSG_NOT_FOUND.format(name=name, what=what, detail=detail), connect=name,
                                   http_status=status)
        if 400 <= status < 500:
            return ConnectRefused(MSG_REFUSED.format(name=name, status=status, detail=detail), connect=name,
                                  http_status=status)
        return ConnectError(MSG_SERVER.format(name=name, status=status, detail=detail), connect=name,
                            http_status=status)

    def _fail_fast(self) -> None:
        with _unreachable_lock:
            until = _unreachable.get(self.endpoint.url, 0.0)
        if time.monotonic() < until:
            raise ConnectUnavailable(MSG_UNAVAILABLE.format(
                name=self.endpoint.name, url=self.endpoint.url, timeout=self.endpoint.timeout,
                detail="it did not answer a moment ago; the console tries again in a few seconds"),
                connect=self.endpoint.name)

    def _silent(self, budget: float, detail: str):
        if self.endpoint.unreachable_backoff > 0:
            with _unreachable_lock:
                _unreachable[self.endpoint.url] = time.monotonic() + self.endpoint.unreachable_backoff
        raise ConnectUnavailable(MSG_UNAVAILABLE.format(name=self.endpoint.name, url=self.endpoint.url,
                                                        timeout=budget, detail=detail), connect=self.endpoint.name)


class _Conflict(Exception):
    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


class _Refusal(urllib.error.HTTPError):
    def __init__(self, exc: urllib.error.HTTPError, detail: str) -> None:
        super().__init__(exc.url, exc.code, exc.msg, exc.headers, None)
        self.detail = detail


MSG_AMBIGUOUS_PATH = ("Connect's REST server (Jetty) refuses a path holding an encoded '%', '/' or '\\' ({jetty}), so "
                      "a connector whose name holds one cannot be read, changed or deleted through Connect's API.")


def _error_detail(exc: urllib.error.HTTPError) -> str:
    """Connect's {"error_code": ..., "message": ...}, or the start of whatever else the body held."""
    try:
        raw = exc.read(64 * 1024) if exc.fp is not None else b""
    except OSError:
        raw = b""
    try:
        parsed = json.loads(raw)
    except ValueError:
        parsed = None
    if isinstance(parsed, dict) and parsed.get("message"):
        return str(parsed["message"])
    text = raw[:2000].decode(errors="replace")
    if "/badURI" in text:  # Jetty's own page for a path it will not route
        return MSG_AMBIGUOUS_PATH.format(jetty=text.split("<title>", 1)[-1].split("</title>", 1)[0].strip())
    return text[:300].strip() or exc.reason or f"HTTP {exc.code}"
