from django.conf import settings
from django.contrib import admin
from django.http import HttpResponsePermanentRedirect
from django.views.decorators.http import require_GET
from django.contrib.auth.decorators import login_not_required
from django.templatetags.static import static
from django.urls import include, path, register_converter
from django.views.generic import RedirectView

from api.main import api_urls
from api.mcp.http import mcp_endpoint
from console.health import health, health_live
from console.urlnames import KafkaNameConverter

register_converter(KafkaNameConverter, "kafka_name")


@require_GET
@login_not_required
def favicon(request):
    # Resolved at request time: the hashed name exists only once collectstatic has run.
    return HttpResponsePermanentRedirect(static("console/favicon.svg"))

urlpatterns = [
    path("", RedirectView.as_view(pattern_name="clusters:list", permanent=False)),
    path("favicon.ico", favicon),
    path("health", health, name="health"),
    path("health/ready", health, name="health-ready"),
    path("health/live", health_live, name="health-live"),
    path("accounts/", include("console.accounts.urls")),
    path("clusters/<str:cluster>/topics/", include("topics.urls")),
    path("clusters/<str:cluster>/brokers/", include("topics.broker_urls")),
    path("clusters/<str:cluster>/topic-policies/", include("topics.policies.urls")),
    path("clusters/<str:cluster>/bulk/topics/", include("topics.bulk.urls")),
    path("clusters/<str:cluster>/bulk/groups/", include("offsets.bulk.urls")),
    path("clusters/<str:cluster>/groups/", include("offsets.urls")),
    path("clusters/<str:cluster>/protocol-migration/", include("offsets.protocols.urls")),
    path("clusters/<str:cluster>/replays/", include("sparkjobs.urls")),
    path("clusters/<str:cluster>/transactions/", include("transactions.urls")),
    path("clusters/<str:cluster>/access/", include("access.urls")),
    path("clusters/<str:cluster>/replication/", include("replication.urls")),
    path("clusters/<str:cluster>/messages/", include("records.urls")),
    path("clusters/<str:cluster>/connect/", include("connect.urls")),
    path("clusters/<str:cluster>/health/", include("brokers.urls")),
    path("clusters/<str:cluster>/masking/", include("masking.urls")),
    path("clusters/<str:cluster>/config/", include("config_as_code.urls")),
    path("clusters/<str:cluster>/protection/", include("changes.protection_urls")),
    path("clusters/", include("console.clusters.urls")),
    path("audit/", include("console.audit.urls")),
    path("tokens/", include("console.tokens.urls")),
    path("api/v1/", api_urls()),
    path("mcp", mcp_endpoint, name="mcp"),
    path("metrics", include("console.metrics.urls")),
    path("alerts/", include("alerts.urls")),
    path("changes/", include("changes.urls")),
]
# Django's own admin changes rows with no role check of ours; production leaves it out (CONSOLE_DJANGO_ADMIN).
if settings.CONSOLE_DJANGO_ADMIN:
    urlpatterns.append(path("admin/", admin.site.urls))
