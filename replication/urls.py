from django.urls import path

from replication import views

app_name = "replication"
urlpatterns = [
    path("", views.replication_overview, name="overview"),
    path("elect/", views.leaders_elect, name="elect"),
    path("reassign/preview/", views.reassign_preview, name="reassign-preview"),
    path("reassign/", views.reassign_start, name="reassign"),
    path("reassign/cancel/", views.reassign_cancel, name="cancel"),
    path("reassign/finish/", views.reassign_finish, name="finish"),
]
