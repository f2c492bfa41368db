import re

from django.http import HttpRequest
from django.shortcuts import redirect
from django_htmx.http import HttpResponseClientRedirect
from django_htmx.middleware import HtmxDetails

from console.errors import FormRefused


class HtmxHttpRequest(HttpRequest):
    """For type checking views: django-htmx's middleware adds `htmx`."""

    htmx: HtmxDetails


def redirect_after_change(request: HtmxHttpRequest, url: str):
    """A client-side redirect for htmx requests (the page reloads with its flash message), a 302 otherwise."""
    return HttpResponseClientRedirect(url) if request.htmx else redirect(url)


def safe_filename(name: str, *, limit: int = 100) -> str:
    """A download name from a Kafka name: quotes, slashes, new lines and the like cannot reach the header."""
    cleaned = re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._")[:limit]
    return cleaned or "unnamed"


def form_errors_text(form) -> str:
    return "; ".join(f"{'' if k == '__all__' else k + ': '}{' '.join(v)}" for k, v in form.errors.items())


def valid_data(form) -> dict:
    """The form's cleaned data, or a FormRefused (rendered as the error partial, each problem at its field)."""
    if not form.is_valid():
        raise FormRefused(form_errors_text(form), errors={k: list(v) for k, v in form.errors.items()})
    return form.cleaned_data
