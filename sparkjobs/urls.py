from django.urls import path

from sparkjobs import views

app_name = "sparkjobs"
urlpatterns = [
    path("", views.replay_list, name="list"),
    path("new/", views.replay_new, name="new"),
    path("<int:job_id>/", views.replay_detail, name="detail"),
    path("<int:job_id>/cancel/", views.replay_cancel, name="cancel"),
    path("<int:job_id>/log/", views.replay_log, name="log"),
    path("<int:job_id>/files/<str:name>", views.replay_file, name="file"),
]
