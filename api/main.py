"""The REST API under /api/v1/: an OpenAPI 3.1 document (/api/v1/openapi.json) and its explorer (/api/v1/docs, a
console page, Swagger UI from static files under the console's CSP). Every operation authenticates a token, checks
what the page or the shell checks, and calls the same selectors and services; answers are the shell's
--format json, errors RFC 9457 problem details."""

from __future__ import annotations

from ninja import NinjaAPI, Swagger

from api import problems
from api.auth import ApiToken
from api.routers import (access, changes, clusters, config, connect, groups, operations, records, replays, topics,
                         transactions)

DESCRIPTION = """
The Kafka console's pages and shell, for programs. Send an API token (made on the console's *API tokens* page) as
`Authorization: Bearer kc_…`: the call acts as the token's owner, with the token's role as a ceiling, on the
clusters the token reaches; changes are audited in the owner's and the token's name.

Answers are what `manage.py … --format json` prints for the same state. Errors are RFC 9457 problem details whose
`detail` is the message the console's page shows. Big lists are paged by cursor: pass `next_cursor` back as
`cursor`. A Kafka name holding `/` or `~` is written with `~2F` and `~7E` in a path, as in the console's own
addresses.
"""

api = NinjaAPI(title="Kafka console API", version="1", description=DESCRIPTION, auth=ApiToken(),
               urls_namespace="api", docs=Swagger(settings={"persistAuthorization": False}), docs_url="/docs")
problems.install(api)
for module in (clusters, topics, records, groups, replays, connect, access, transactions, operations, config,
               changes):
    api.add_router("", module.router)


def api_urls():
    """The API's URL patterns: every operation (and the OpenAPI document) authenticates its own callers, so the
    console's login redirect does not apply to them; the explorer is a page for people logged in."""
    patterns, app_name, namespace = api.urls
    for pattern in patterns:
        if getattr(pattern, "name", None) != "openapi-view":
            pattern.callback.login_required = False
    return patterns, app_name, namespace
