from django.urls import path

from offsets.bulk import views

app_name = "bulk-groups"
urlpatterns = [
    path("", views.bulk_groups, name="select"),
    path("preview/", views.bulk_groups_preview, name="preview"),
    path("execute/", views.bulk_groups_execute, name="execute"),
]
