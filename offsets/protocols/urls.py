from django.urls import path

from offsets.protocols import views

app_name = "protocol-migration"
urlpatterns = [
    path("", views.migration_page, name="page"),
]
