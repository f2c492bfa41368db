from django.urls import path

from changes import views

app_name = "changes"
urlpatterns = [
    path("", views.change_list, name="list"),
    path("<int:request_id>/", views.change_detail, name="detail"),
    path("<int:request_id>/approve/", views.change_approve, name="approve"),
    path("<int:request_id>/reject/", views.change_reject, name="reject"),
    path("<int:request_id>/break-glass/", views.change_break_glass, name="break-glass"),
]
