from django.urls import path

from changes import views

app_name = "protection"
urlpatterns = [
    path("", views.protection_edit, name="edit"),
    path("remove/", views.protection_remove, name="remove"),
]
