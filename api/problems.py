"""Errors as RFC 9457 problem details (application/problem+json), with the messages the pages show: the console's
one error family (console/errors.py) and the gateway's errors keep their status and text; the API's own refusals
(no token, a request that does not parse) say what to send instead."""

from __future__ import annotations

from http import HTTPStatus

from django.http import Http404, JsonResponse
from ninja.errors import AuthenticationError, HttpError, ValidationError

from console.errors import ConsoleError, FormRefused, error_status, error_title
from gateway.kafka.errors import KafkaGatewayError
from console.tokens.auth import MSG_NO_TOKEN, RateLimited

PROBLEM_TYPE = "application/problem+json"
MSG_INVALID = "The request does not fit this operation: see `errors` (each names where, and what is wrong)."
MSG_NOT_FOUND = "Nothing is at this address."


def problem(request, status: int, detail: str, **extensions) -> JsonResponse:
    """One problem: `title` is the HTTP status phrase (type about:blank, as RFC 9457 asks), `detail` the message
    a page shows for the same refusal, `console_title` the heading the page gives it."""
    body = {"type": "about:blank", "title": HTTPStatus(status).phrase, "status": status, "detail": detail,
            "instance": request.get_full_path(), "console_title": error_title(status), **extensions}
    return JsonResponse(body, status=status, content_type=PROBLEM_TYPE, json_dumps_params={"ensure_ascii": False})


def _console_error(request, exc: ConsoleError):
    extensions = {}
    if isinstance(exc, FormRefused):
        extensions["errors"] = [{"field": name, "message": " ".join(messages)} for name, messages in exc.errors.items()]
    elif exc.field:
        extensions["errors"] = [{"field": exc.field, "message": exc.message}]
    response = problem(request, error_status(exc), exc.message, **extensions)
    if isinstance(exc, RateLimited):
        response["Retry-After"] = str(exc.retry_after)
    if exc.status == 401:
        response["WWW-Authenticate"] = 'Bearer realm="kafka-console"'
    return response


def _gateway_error(request, exc: KafkaGatewayError):
    return problem(request, error_status(exc), exc.message)


def _validation_error(request, exc: ValidationError):
    errors = [{"field": ".".join(str(part) for part in e.get("loc", ()) if part not in ("body", "query", "path")),
               "message": e.get("msg", "")} for e in exc.errors]
    return problem(request, 400, MSG_INVALID, errors=errors)


def _authentication_error(request, exc: AuthenticationError):
    response = problem(request, 401, MSG_NO_TOKEN)
    response["WWW-Authenticate"] = 'Bearer realm="kafka-console"'
    return response


def _http_error(request, exc: HttpError):
    return problem(request, exc.status_code, str(exc.message))


def _not_found(request, exc: Http404):
    return problem(request, 404, str(exc) or MSG_NOT_FOUND)


def install(api) -> None:
    api.add_exception_handler(ConsoleError, _console_error)
    api.add_exception_handler(KafkaGatewayError, _gateway_error)
    api.add_exception_handler(ValidationError, _validation_error)
    api.add_exception_handler(AuthenticationError, _authentication_error)
    api.add_exception_handler(HttpError, _http_error)
    api.add_exception_handler(Http404, _not_found)
