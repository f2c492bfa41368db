from django.urls import path

from offsets import views

app_name = "offsets"
urlpatterns = [
    path("", views.group_list, name="groups"),
    path("<str:group>/", views.group_detail, name="detail"),
    path("<str:group>/lag/", views.group_lag, name="lag"),
    path("<str:group>/reset/", views.group_reset, name="reset"),
    path("<str:group>/reset/export.csv", views.group_reset_export, name="reset-export"),
    path("<str:group>/reset/execute/", views.group_reset_execute, name="reset-execute"),
    path("<str:group>/revert/<int:seq>/", views.group_revert, name="revert"),
    path("<str:group>/delete/", views.group_delete, name="delete"),
    path("<str:group>/offsets/delete/preview/", views.group_offsets_delete_preview, name="offsets-delete-preview"),
    path("<str:group>/offsets/delete/", views.group_offsets_delete, name="offsets-delete"),
]
