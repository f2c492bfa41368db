"""/mcp: the MCP server's streamable HTTP transport, served by the console's WSGI web processes.

The SDK's transport is an ASGI application, and its stateful mode keeps sessions (and a GET event stream) in one
process's memory, which gunicorn's several workers cannot share. So the server runs stateless with JSON answers,
as the SDK offers for horizontally scaled servers: each POST is a complete exchange (its JSON-RPC request in, its
answer out, no session to find again), built per request on the same MCPServer. This view authenticates the
token (the same tokens as the API), turns the Django request into an ASGI call of the SDK's session manager and its
answer back into a Django response; asgiref runs the event loop beside the request's thread and brings each tool's
database work back onto that thread. A GET (an event stream) is answered 405, as the SDK's stateless mode does."""

from __future__ import annotations

import anyio
from asgiref.sync import async_to_sync
from django.contrib.auth.decorators import login_not_required
from django.http import HttpResponse
from django.views.decorators.csrf import csrf_exempt
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

from api.mcp.tools import current_call, server
from console.audit.models import AuditEvent
from console.errors import ConsoleError
from console.tokens.auth import RateLimited, TokenRefused, bearer_secret, token_authenticate
from console.tokens.sso import SsoProviderDown

MAX_BODY_BYTES = 1024 * 1024
PASSED_HEADERS = ("content-type", "accept", "mcp-protocol-version", "mcp-session-id", "last-event-id")


def _scope(request, body: bytes) -> dict:
    headers = [(name.encode("latin-1"), request.headers[name].encode("latin-1"))
               for name in PASSED_HEADERS if name in request.headers]
    headers.append((b"content-length", str(len(body)).encode()))
    host = request.get_host()
    return {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": request.method,
            "scheme": request.scheme, "path": request.path, "raw_path": request.path.encode(), "root_path": "",
            "query_string": request.META.get("QUERY_STRING", "").encode(), "headers": headers,
            "server": (host.rsplit(":", 1)[0], int(request.get_port())), "client": (request.META.get("REMOTE_ADDR"), 0)}


async def _exchange(scope: dict, body: bytes, call) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
    """One request through the SDK's stateless session manager; its status, headers and body."""
    answered = anyio.Event()
    sent: dict = {"status": 500, "headers": [], "body": b""}
    delivered = False

    async def receive():
        nonlocal delivered
        if not delivered:
            delivered = True
            return {"type": "http.request", "body": body, "more_body": False}
        await answered.wait()  # the client "disconnects" only once the answer is complete
        return {"type": "http.disconnect"}

    async def send(message):
        if message["type"] == "http.response.start":
            sent["status"], sent["headers"] = message["status"], list(message.get("headers", []))
        elif message["type"] == "http.response.body":
            sent["body"] += message.get("body", b"")
            if not message.get("more_body", False):
                answered.set()

    manager = StreamableHTTPSessionManager(app=server._lowlevel_server, json_response=True, stateless=True,
                                           max_request_body_size=MAX_BODY_BYTES)
    reset = current_call.set(call)
    try:
        async with manager.run():
            await manager.handle_request(scope, receive, send)
    finally:
        current_call.reset(reset)
        answered.set()
    return sent["status"], sent["headers"], sent["body"]


def _refusal(exc: ConsoleError, status: int) -> HttpResponse:
    response = HttpResponse(exc.message, status=status, content_type="text/plain; charset=utf-8")
    if status == 401:
        response["WWW-Authenticate"] = 'Bearer realm="kafka-console"'
    if isinstance(exc, RateLimited):
        response["Retry-After"] = str(exc.retry_after)
    return response


@csrf_exempt  # a bearer token, not a cookie, authenticates: no page can make a browser send it
@login_not_required
def mcp_endpoint(request):
    try:
        call = token_authenticate(bearer_secret(request.headers.get("Authorization", "")),
                                  source=AuditEvent.Source.MCP, remote_addr=request.META.get("REMOTE_ADDR") or None)
    except TokenRefused as exc:
        return _refusal(exc, 401)
    except RateLimited as exc:
        return _refusal(exc, 429)
    except SsoProviderDown as exc:
        return _refusal(exc, 503)
    if request.method not in ("POST", "GET", "DELETE"):
        return HttpResponse(status=405, headers={"Allow": "POST"})
    body = request.body if request.method == "POST" else b""
    if len(body) > MAX_BODY_BYTES:
        return HttpResponse("Request body too large.", status=413, content_type="text/plain")
    status, headers, content = async_to_sync(_exchange)(_scope(request, body), body, call)
    response = HttpResponse(content, status=status)
    for name, value in headers:
        if name.lower() not in (b"content-length", b"connection", b"transfer-encoding"):
            response[name.decode("latin-1")] = value.decode("latin-1")
    return response
