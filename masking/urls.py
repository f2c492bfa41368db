from django.urls import path

from masking import views

app_name = "masking"
urlpatterns = [
    path("", views.mask_rules, name="rules"),
    path("<int:rule_id>/delete/", views.mask_rule_delete, name="delete"),
]
