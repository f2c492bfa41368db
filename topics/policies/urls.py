from django.urls import path

from topics.policies import views

app_name = "topic-policies"
urlpatterns = [
    path("", views.policy_list, name="list"),
    path("new/", views.policy_create, name="create"),
    path("report/", views.policy_report, name="report"),
    path("edit/<kafka_name:name>/", views.policy_edit, name="edit"),
    path("delete/<kafka_name:name>/", views.policy_delete, name="delete"),
]
