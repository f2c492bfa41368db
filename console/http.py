from django.http import HttpRequest
from django_htmx.middleware import HtmxDetails


class HtmxHttpRequest(HttpRequest):
    """For type checking views: django-htmx's middleware adds `htmx`."""

    htmx: HtmxDetails
