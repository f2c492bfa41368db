from django.urls import path

from console.metrics.views import metrics

app_name = "metrics"
urlpatterns = [path("", metrics, name="metrics")]
