"""Login everywhere, roles enforced in code (views and commands), groups made by a data migration."""

import pytest
from django.contrib.auth.models import Group
from django.core.management import CommandError, call_command
from django.urls import URLPattern, URLResolver, get_resolver

from console.accounts.roles import Role, has_role, require_role, user_role
from console.audit.models import AuditEvent
from console.clusters.models import Cluster
from console.errors import PermissionRefused

pytestmark = pytest.mark.django_db


def test_data_migration_created_the_three_role_groups():
    assert set(Group.objects.values_list("name", flat=True)) >= {"viewer", "operator", "admin"}


def test_roles_are_ordered_and_superusers_are_admins(viewer, operator, admin, django_user_model):
    root = django_user_model.objects.create_superuser("root", password="x")
    nobody = django_user_model.objects.create_user("nobody", password="x")

    assert [user_role(u) for u in (viewer, operator, admin, root, nobody)] == [
        Role.VIEWER, Role.OPERATOR, Role.ADMIN, Role.ADMIN, None]
    assert has_role(admin, Role.OPERATOR) and not has_role(viewer, Role.OPERATOR)
    with pytest.raises(PermissionRefused, match="needs the operator role; vera has viewer"):
        require_role(viewer, Role.OPERATOR)


def test_inactive_user_holds_no_role(admin):
    admin.is_active = False
    assert user_role(admin) is None


@pytest.mark.parametrize("url", ["/clusters/", "/audit/", "/audit/export.csv", "/clusters/local/"])
def test_pages_redirect_anonymous_users_to_login(client, url):
    response = client.get(url)

    assert response.status_code == 302 and response.url.startswith("/accounts/login/")


def test_user_without_role_is_refused(client_for, make_user):
    response = client_for(make_user("norole", None)).get("/audit/")

    assert response.status_code == 403 and "needs the viewer role" in response.content.decode()


def _console_views():
    def walk(patterns, prefix=""):
        for p in patterns:
            if isinstance(p, URLResolver):
                if p.app_name in ("admin",) or "accounts" in str(p.pattern):
                    continue
                yield from walk(p.url_patterns, prefix + str(p.pattern))
            elif isinstance(p, URLPattern):
                yield prefix + str(p.pattern), p.callback

    return [(route, view) for route, view in walk(get_resolver().url_patterns)
            if getattr(view, "__module__", "").startswith(("console", "topics", "offsets", "sparkjobs", "transactions",
                                                                     "access", "replication"))]


# /metrics takes no session: Prometheus authenticates with the bearer token (tests/console/metrics/test_views.py).
PUBLIC_ROUTES = {"health", "health/ready", "health/live", "metrics", "favicon.ico"}


def test_every_console_view_declares_its_role_except_health():
    undeclared = [route for route, view in _console_views()
                  if route not in PUBLIC_ROUTES and getattr(view, "required_role", None) is None]

    assert undeclared == []


def test_mutating_command_refuses_an_actor_without_the_role(viewer):
    with pytest.raises(CommandError, match="needs the admin role; vera has viewer"):
        call_command("clusters", "add", "--name", "prod", "--bootstrap-servers", "k:9092", "--actor", "vera",
                     "--reason", "try")

    assert not Cluster.objects.filter(name="prod").exists()
    assert not AuditEvent.objects.exists()


def test_mutating_command_refuses_unknown_actor_and_missing_reason(admin):
    with pytest.raises(CommandError, match="Unknown or inactive user 'ghost'"):
        call_command("clusters", "add", "--name", "prod", "--bootstrap-servers", "k:9092", "--actor", "ghost",
                     "--reason", "x")
    with pytest.raises(CommandError, match="--reason is required"):
        call_command("clusters", "add", "--name", "prod", "--bootstrap-servers", "k:9092", "--actor", "ada")


def test_admin_registers_a_cluster_with_an_audit_trail(admin):
    call_command("clusters", "add", "--name", "prod", "--bootstrap-servers", "k1:9092,k2:9092",
                 "--config", "security.protocol=SASL_SSL", "--secret-env", "sasl.password=CONSOLE_SECRET_PROD_KAFKA_PASSWORD",
                 "--actor", "ada", "--reason", "onboarding prod")

    cluster = Cluster.objects.get(name="prod")
    assert cluster.secret_env == {"sasl.password": "CONSOLE_SECRET_PROD_KAFKA_PASSWORD"}
    intent, success = AuditEvent.objects.order_by("seq")
    assert (intent.outcome, success.outcome, success.source, success.actor_name) == ("intent", "success", "cli", "ada")
    assert success.target == "cluster:prod" and success.reason == "onboarding prod"
