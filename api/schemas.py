"""Request bodies, and the envelope of paged lists. Answers are the shell's JSON shapes (the apps' serializers),
so their schemas say what the shell's --format json says."""

from __future__ import annotations

from typing import Any

from ninja import Schema
from pydantic import Field

from api.pagination import DEFAULT_LIMIT, MAX_LIMIT

REASON = Field(min_length=1, max_length=2000, description="why: it goes into the audit log, as --reason does")


class Page(Schema):
    items: list[Any]
    next_cursor: str | None = Field(description="pass it as `cursor` for the next page; null on the last page")
    total: int | None = Field(description="items in the whole list, as read for this page (the audit log says it "
                                          "on its first page only)")


class Problem(Schema):
    """RFC 9457 problem details; `detail` is the message the console's page shows for the same refusal."""

    type: str
    title: str
    status: int
    detail: str
    instance: str
    console_title: str
    errors: list[dict] | None = None


PROBLEMS = {400: Problem, 401: Problem, 403: Problem, 404: Problem, 409: Problem, 429: Problem, 502: Problem,
            503: Problem}


def limit_field(default: int = DEFAULT_LIMIT):
    return Field(default, ge=1, le=MAX_LIMIT, description=f"items per page (at most {MAX_LIMIT})")
