"""The application's one error family, and the middleware that renders it (and gateway errors) for people."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django_htmx.http import reswap, retarget

from gateway.errors import GatewayError
from gateway.kafka import errors as kafka_errors


class ConsoleError(Exception):
    """A refusal or failure with a message meant for the person who asked; `field` names the form field it is
    about, so the page can show it there."""

    status = 400

    def __init__(self, message: str, *, field: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.field = field

    @property
    def fields(self) -> list[tuple[str, str]]:
        """(field name, message) pairs the page shows at their fields."""
        return [(self.field, self.message)] if self.field else []


class FormRefused(ConsoleError):
    """A form's own validation failed: one message per field (and `__all__` for the form as a whole)."""

    def __init__(self, message: str, *, errors: dict[str, list[str]]) -> None:
        super().__init__(message)
        self.errors = errors

    @property
    def fields(self) -> list[tuple[str, str]]:
        return [(name, " ".join(messages)) for name, messages in self.errors.items() if name != "__all__"]

    @property
    def general(self) -> str:
        return " ".join(self.errors.get("__all__", []))


class PermissionRefused(ConsoleError):
    status = 403


class NotFound(ConsoleError):
    status = 404


class Conflict(ConsoleError):
    """The state changed or does not allow the action (active group, moved offsets...)."""

    status = 409


_GATEWAY_STATUS: dict[type, int] = {
    kafka_errors.ClusterUnavailable: 503,
    kafka_errors.NotAuthorized: 403,
    kafka_errors.TopicNotFound: 404,
    kafka_errors.GroupNotFound: 404,
    kafka_errors.GroupNotEmpty: 409,
    kafka_errors.TopicAlreadyExists: 409,
    kafka_errors.InvalidRequest: 400,
}


def error_status(exc: Exception) -> int:
    if isinstance(exc, ConsoleError):
        return exc.status
    if isinstance(exc, kafka_errors.RegistryError):
        # The registry's refusals (unknown subject, a record that does not fit) are the request's fault.
        return 503 if exc.status == 0 and exc.code == "unreachable" else 400 if exc.status < 500 else 502
    for cls, status in _GATEWAY_STATUS.items():
        if isinstance(exc, cls):
            return status
    if isinstance(exc, GatewayError) and isinstance(getattr(exc, "status", None), int):
        return exc.status  # Kafka Connect's errors say theirs
    return 502


def error_title(status: int) -> str:
    return {
        400: "Request refused", 403: "Not allowed", 404: "Not found", 409: "Not possible right now",
        502: "Kafka refused the request", 503: "Cluster unreachable",
    }.get(status, "Error")


class ConsoleErrorMiddleware:
    """Renders ConsoleError and gateway errors as an error partial (htmx) or an error page."""

    def __init__(self, get_response) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exc: Exception) -> HttpResponse | None:
        if not isinstance(exc, ConsoleError | GatewayError):
            return None
        status = error_status(exc)
        fields = getattr(exc, "fields", [])
        # With every problem at its field, the message over the form says only what no field says.
        message = exc.general if isinstance(exc, FormRefused) else ("" if fields else exc.message)
        context = {"error_title": error_title(status), "error_message": message, "error_fields": fields,
                   "error_status": status, "error_full": exc.message}
        if getattr(request, "htmx", False):
            response = render(request, "console/_error.html", context, status=status)
            # Show the error where errors go, instead of replacing the part of the page that asked.
            return reswap(retarget(response, "#flash"), "innerHTML")
        return render(request, "console/error.html", context, status=status)
