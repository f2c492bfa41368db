from django.urls import path

from topics.bulk import views

app_name = "bulk-topics"
urlpatterns = [
    path("", views.bulk_topics, name="select"),
    path("preview/", views.bulk_topics_preview, name="preview"),
    path("execute/", views.bulk_topics_execute, name="execute"),
]
