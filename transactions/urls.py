from django.urls import path

from transactions import views

app_name = "transactions"
urlpatterns = [
    path("", views.transaction_list, name="list"),
    path("hanging/", views.transaction_hanging, name="hanging"),
    path("abort/preview/", views.transaction_abort_preview, name="abort-preview"),
    path("abort/", views.transaction_abort, name="abort"),
    path("id/<kafka_name:transactional_id>/", views.transaction_detail, name="detail"),
]
