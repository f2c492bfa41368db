from django.contrib.auth.decorators import login_not_required
from django.urls import include, path
from mozilla_django_oidc.views import OIDCAuthenticationCallbackView, OIDCAuthenticationRequestView

from console.accounts import views

urlpatterns = [
    path("login/", views.login_view, name="login"),
    path("logout/", views.logout_view, name="logout"),
    # mozilla-django-oidc's own views, under the names its backend reverses.
    path("oidc/authenticate/", login_not_required(OIDCAuthenticationRequestView.as_view()),
         name="oidc_authentication_init"),
    path("oidc/callback/", login_not_required(OIDCAuthenticationCallbackView.as_view()),
         name="oidc_authentication_callback"),
    path("", include("django.contrib.auth.urls")),
]
