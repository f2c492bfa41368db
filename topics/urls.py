from django.urls import path

from records import browse_views
from topics import views

app_name = "topics"
urlpatterns = [
    path("", views.topic_list, name="list"),
    path("new/", views.topic_create, name="create"),
    path("<kafka_name:topic>/", views.topic_detail, name="detail"),
    path("<kafka_name:topic>/lag/", views.topic_lag, name="lag"),
    path("<kafka_name:topic>/messages/", browse_views.topic_messages, name="messages"),
    path("<kafka_name:topic>/messages/<int:partition>/<int:offset>/", browse_views.topic_record, name="record"),
    path("<kafka_name:topic>/configs/preview/", views.topic_config_preview, name="config-preview"),
    path("<kafka_name:topic>/configs/apply/", views.topic_config_apply, name="config-apply"),
    path("<kafka_name:topic>/partitions/", views.topic_partitions_add, name="partitions"),
    path("<kafka_name:topic>/delete/", views.topic_delete, name="delete"),
    path("<kafka_name:topic>/purge/preview/", views.topic_purge_preview, name="purge-preview"),
    path("<kafka_name:topic>/purge/", views.topic_purge, name="purge"),
]
