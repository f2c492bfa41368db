from django.urls import path

from topics import broker_views

app_name = "brokers"
urlpatterns = [
    path("", broker_views.broker_list, name="list"),
    path("<int:broker_id>/", broker_views.broker_detail, name="detail"),
    path("<int:broker_id>/configs/preview/", broker_views.broker_config_preview, name="config-preview"),
    path("<int:broker_id>/configs/apply/", broker_views.broker_config_apply, name="config-apply"),
]
