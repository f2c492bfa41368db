from django.urls import path

from console.tokens import views

app_name = "tokens"
urlpatterns = [
    path("", views.token_list, name="list"),
    path("new/", views.token_new, name="new"),
    path("<int:token_id>/revoke/", views.token_revoke_view, name="revoke"),
]
