from django.contrib.auth.decorators import login_not_required
from django.urls import include, path
from mozilla_django_oidc.views import OIDCAuthenticationRequestView

from console.accounts import views

urlpatterns = [
    path("login/", views.login_view, name="login"),
    path("logout/", views.logout_view, name="logout"),
    path("users/", views.user_list, name="user-list"),
    path("users/role/", views.user_role_set_view, name="user-role-set"),
    # mozilla-django-oidc's own views, under the names its backend reverses.
    path("oidc/authenticate/", login_not_required(OIDCAuthenticationRequestView.as_view()),
         name="oidc_authentication_init"),
    path("oidc/callback/", views.oidc_callback_view, name="oidc_authentication_callback"),
    path("", include("django.contrib.auth.urls")),
]
