import gc
import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "console.settings")
application = get_wsgi_application()


def _freeze_startup_objects() -> None:
    """What every request needs and nothing frees (modules, settings, the URL patterns) is left out of the cycle
    collector's full passes. A web worker holding a big cluster's decoded tables makes such passes as new tables
    come in, and each walked these ~140,000 objects too: 65-100 ms measured (0-5 ms frozen), holding the GIL
    while a page waits."""
    from django.urls import get_resolver

    get_resolver().url_patterns  # noqa: B018 - imports every view module now, so they are frozen too
    gc.collect()
    gc.freeze()


_freeze_startup_objects()
