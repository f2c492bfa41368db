from django.contrib import admin
from django.urls import include, path
from django.views.generic import RedirectView

from console.health import health

urlpatterns = [
    path("", RedirectView.as_view(pattern_name="clusters:list", permanent=False)),
    path("health", health, name="health"),
    path("accounts/", include("django.contrib.auth.urls")),
    path("admin/", admin.site.urls),
    path("clusters/<str:cluster>/topics/", include("topics.urls")),
    path("clusters/<str:cluster>/brokers/", include("topics.broker_urls")),
    path("clusters/<str:cluster>/groups/", include("offsets.urls")),
    path("clusters/<str:cluster>/replays/", include("sparkjobs.urls")),
    path("clusters/", include("console.clusters.urls")),
    path("audit/", include("console.audit.urls")),
]
