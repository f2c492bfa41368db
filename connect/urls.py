from django.urls import path

from connect.views import connectors, lists, offsets, registrations

app_name = "connect"
_connector = "<str:connect>/connectors/<kafka_name:name>/"
urlpatterns = [
    path("", lists.connector_list, name="list"),
    path("bulk/", lists.connectors_bulk, name="bulk"),
    path("new/", registrations.registration_new, name="register"),
    path("revert/<int:seq>/", offsets.offsets_revert, name="offsets-revert"),
    path("<str:connect>/edit/", registrations.registration_edit, name="registration-edit"),
    path("<str:connect>/remove/", registrations.registration_remove, name="registration-remove"),
    path("<str:connect>/create/", connectors.connector_create, name="create"),
    path(_connector, connectors.connector_detail, name="connector"),
    path(_connector + "action/", connectors.connector_action, name="action"),
    path(_connector + "edit/", connectors.connector_edit, name="edit"),
    path(_connector + "delete/", connectors.connector_delete, name="delete"),
    path(_connector + "offsets/", offsets.offsets_page, name="offsets"),
    path(_connector + "offsets/preview/", offsets.offsets_preview, name="offsets-preview"),
    path(_connector + "offsets/execute/", offsets.offsets_execute, name="offsets-execute"),
]
