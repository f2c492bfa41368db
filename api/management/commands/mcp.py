"""`manage.py mcp`: the MCP server over stdio, for an assistant that starts it as a subprocess. It acts with the
API token in CONSOLE_API_TOKEN (an environment variable: a token on the command line would show in `ps`), checked
again at every tool call, so a revoked or expired token stops working at once."""

from __future__ import annotations

import os

import anyio
from django.core.management.base import CommandError

from api.mcp.tools import current_call, server
from console.audit.models import AuditEvent
from console.commands import ConsoleCommand
from console.errors import ConsoleError
from console.tokens.auth import token_authenticate

TOKEN_ENV = "CONSOLE_API_TOKEN"
MSG_NO_TOKEN = f"Set {TOKEN_ENV} to an API token (made on the console's API tokens page) before starting the server."


class Command(ConsoleCommand):
    help = __doc__

    def handle(self, *args, **options):
        secret = os.environ.get(TOKEN_ENV, "").strip()
        if not secret:
            raise CommandError(MSG_NO_TOKEN)

        def check():
            return token_authenticate(secret, source=AuditEvent.Source.MCP, remote_addr=None)

        try:
            check()  # a wrong token fails here, not at the assistant's first question
        except ConsoleError as exc:
            raise CommandError(exc.message) from exc
        current_call.set(check)
        anyio.run(server.run_stdio_async)
