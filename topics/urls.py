from django.urls import path

from topics import views

app_name = "topics"
urlpatterns = [
    path("", views.topic_list, name="list"),
    path("new/", views.topic_create, name="create"),
    path("<str:topic>/", views.topic_detail, name="detail"),
    path("<str:topic>/lag/", views.topic_lag, name="lag"),
    path("<str:topic>/messages/", views.topic_messages, name="messages"),
    path("<str:topic>/configs/preview/", views.topic_config_preview, name="config-preview"),
    path("<str:topic>/configs/apply/", views.topic_config_apply, name="config-apply"),
    path("<str:topic>/partitions/", views.topic_partitions_add, name="partitions"),
    path("<str:topic>/delete/", views.topic_delete, name="delete"),
    path("<str:topic>/purge/preview/", views.topic_purge_preview, name="purge-preview"),
    path("<str:topic>/purge/", views.topic_purge, name="purge"),
]
