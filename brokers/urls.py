from django.urls import path

from brokers import views

app_name = "brokermetrics"
urlpatterns = [
    path("", views.cluster_overview, name="overview"),
    path("brokers/<int:broker_id>/", views.broker_page, name="broker"),
    path("topics/<kafka_name:topic>/chart", views.topic_chart, name="topic-chart"),
]
