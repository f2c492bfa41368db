from django.urls import path

from offsets import views

app_name = "offsets"
urlpatterns = [
    path("", views.group_list, name="groups"),
    path("<kafka_name:group>/", views.group_detail, name="detail"),
    path("<kafka_name:group>/lag/", views.group_lag, name="lag"),
    path("<kafka_name:group>/reset/", views.group_reset, name="reset"),
    path("<kafka_name:group>/reset/export.csv", views.group_reset_export, name="reset-export"),
    path("<kafka_name:group>/reset/execute/", views.group_reset_execute, name="reset-execute"),
    path("<kafka_name:group>/revert/<int:seq>/", views.group_revert, name="revert"),
    path("<kafka_name:group>/delete/", views.group_delete, name="delete"),
    path("<kafka_name:group>/offsets/delete/preview/", views.group_offsets_delete_preview, name="offsets-delete-preview"),
    path("<kafka_name:group>/offsets/delete/", views.group_offsets_delete, name="offsets-delete"),
    path("<kafka_name:group>/start-offsets/delete/", views.share_offsets_delete, name="share-offsets-delete"),
]
