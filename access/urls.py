from django.urls import path

from access import views

app_name = "access"
urlpatterns = [
    path("acls/", views.acl_list, name="acls"),
    path("acls/create/preview/", views.acl_create_preview, name="acl-create-preview"),
    path("acls/create/", views.acl_create, name="acl-create"),
    path("acls/delete/preview/", views.acl_delete_preview, name="acl-delete-preview"),
    path("acls/delete/", views.acl_delete, name="acl-delete"),
    path("users/", views.user_list, name="users"),
    path("users/credential/", views.credential_set, name="credential-set"),
    path("users/credential/delete/", views.credential_delete, name="credential-delete"),
]
