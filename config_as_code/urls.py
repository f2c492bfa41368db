from django.urls import path

from config_as_code import views

app_name = "config-as-code"
urlpatterns = [
    path("", views.drift, name="drift"),
    path("export/", views.export, name="export"),
]
