from django.urls import path

from brokers import views

app_name = "brokermetrics"
urlpatterns = [
    path("", views.cluster_overview, name="overview"),
    path("brokers/<int:broker_id>/", views.broker_page, name="broker"),
    path("brokers/<int:broker_id>/log-dirs/", views.broker_log_dirs_section, name="log-dirs"),
    path("brokers/<int:broker_id>/log-dirs/preview/", views.log_dirs_preview, name="log-dirs-preview"),
    path("brokers/<int:broker_id>/log-dirs/apply/", views.log_dirs_apply, name="log-dirs-apply"),
    path("topics/<kafka_name:topic>/chart", views.topic_chart, name="topic-chart"),
]
