from django.urls import path

from records import browse_views, export_views, import_views, views

app_name = "records"
urlpatterns = [
    path("schemas/", views.schema_list, name="schemas"),
    path("schemas/ids/<int:schema_id>/", views.schema_detail, name="schema"),
    path("schemas/subjects/<kafka_name:subject>/", views.schema_detail, name="subject"),
    path("schemas/subjects/<kafka_name:subject>/versions/<int:version>/", views.schema_detail, name="subject-version"),
    path("filters/<int:filter_id>/delete/", browse_views.saved_filter_remove, name="filter-delete"),
    path("<kafka_name:topic>/filters/", browse_views.saved_filter_create, name="filter-save"),
    path("<kafka_name:topic>/search/", views.topic_search, name="search"),
    path("<kafka_name:topic>/export/", export_views.topic_export, name="export"),
    path("<kafka_name:topic>/import/", import_views.topic_import, name="import"),
    path("<kafka_name:topic>/import/<int:job_id>/", import_views.import_status, name="import-status"),
    path("<kafka_name:topic>/import/<int:job_id>/cancel/", import_views.import_cancel, name="import-cancel"),
    path("<kafka_name:topic>/search/step/", views.topic_search_step, name="search-step"),
    path("<kafka_name:topic>/produce/", views.topic_produce, name="produce"),
    path("<kafka_name:topic>/copy/", views.topic_copy, name="copy"),
    path("<kafka_name:topic>/reset-here/", views.topic_reset_here, name="reset-here"),
]
