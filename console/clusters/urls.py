from django.urls import path

from console.clusters import views, views_manage

app_name = "clusters"
urlpatterns = [
    path("", views.cluster_list, name="list"),
    path("new/", views_manage.cluster_new, name="new"),
    path("<str:cluster>/", views.cluster_detail, name="detail"),
    path("<str:cluster>/edit/", views_manage.cluster_edit, name="edit"),
    path("<str:cluster>/remove/", views_manage.cluster_remove, name="remove"),
]
