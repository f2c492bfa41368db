from django.urls import path

from alerts import views

app_name = "alerts"
urlpatterns = [
    path("", views.alerts_page, name="page"),
    path("rules/", views.rule_create, name="rule-create"),
    path("rules/<str:name>/remove/", views.rule_remove, name="rule-remove"),
    path("silences/", views.silence_create, name="silence-create"),
    path("silences/<int:silence_id>/end/", views.silence_end, name="silence-end"),
]
