import pytest

from alerts.models import Alert, AlertRule, Silence
from console.audit.models import AuditEvent

pytestmark = pytest.mark.django_db
RULE = {"name": "stalled", "kind": "status", "cluster": "", "group_pattern": "orders-*", "statuses": ["ERR", "STOP"],
        "for_minutes": "5", "webhook": "oncall", "emails": "a@example.com, b@example.com", "reason": "on-call asked"}


def test_viewers_see_the_page_but_change_nothing(client_for, viewer, local_cluster, webhook):
    client = client_for(viewer)
    page = client.get("/alerts/")
    assert page.status_code == 200 and b"Add a rule" not in page.content
    assert client.post("/alerts/rules/", RULE).status_code == 403
    assert client.post("/alerts/silences/", {"hours": "1", "reason": "x"}).status_code == 403
    assert not AlertRule.objects.exists() and not Silence.objects.exists()


def test_operator_adds_silences_and_removes_a_rule_each_audited(client_for, operator, local_cluster, webhook):
    client = client_for(operator)
    response = client.post("/alerts/rules/", RULE)
    assert response.status_code == 302
    rule = AlertRule.objects.get()
    assert (rule.statuses, rule.emails, rule.for_minutes) == (["ERR", "STOP"], ["a@example.com", "b@example.com"], 5)
    page = client.get("/alerts/").content.decode()
    assert "status ERR or STOP for 5 min" in page and "webhook oncall" in page
    assert client.post("/alerts/silences/", {"rule": "stalled", "hours": "2", "group_pattern": "*",
                                             "reason": "deploy"}).status_code == 302
    silence = Silence.objects.get()
    assert client.post(f"/alerts/silences/{silence.pk}/end/", {"reason": "deploy done"}).status_code == 302
    assert client.post("/alerts/rules/stalled/remove/", {"reason": "noisy"}).status_code == 302
    assert not AlertRule.objects.exists()
    actions = list(AuditEvent.objects.filter(outcome="success").order_by("seq").values_list("action", "actor_name"))
    assert actions == [("alert.rule.create", "otto"), ("alert.silence.create", "otto"), ("alert.silence.end", "otto"),
                       ("alert.rule.remove", "otto")]


@pytest.mark.parametrize("change, message", [
    ({"webhook": "nowhere"}, "nowhere is not one of the available choices"),
    ({"webhook": "", "emails": ""}, "Say where the alert goes"),
    ({"emails": "not-an-address"}, "is not an email address"),
    ({"statuses": []}, "A status rule needs one or more of"),
    ({"cluster": "nope"}, "nope is not one of the available choices"),
    ({"name": "has space"}, "A rule name is"),
])
def test_bad_rules_are_refused_with_a_reason_and_store_nothing(client_for, operator, local_cluster, webhook,
                                                                change, message):
    response = client_for(operator).post("/alerts/rules/", {**RULE, **change})
    assert response.status_code == 400 and message in response.content.decode()
    assert not AlertRule.objects.exists()


def test_odd_group_ids_are_shown_as_text(client_for, viewer, local_cluster, webhook):
    from django.utils import timezone

    rule = AlertRule.objects.create(name="r", kind="status", statuses=["ERR"], webhook="oncall", created_by="t",
                                    created_at=timezone.now())
    Alert.objects.create(rule=rule, cluster="local", group='<img src=x onerror=alert(1)>/"#%', state="firing",
                         reason="ERR: <b>x</b>", since=timezone.now())
    page = client_for(viewer).get("/alerts/").content.decode()
    assert "<img src=x" not in page and "&lt;img src=x onerror=alert(1)&gt;/&quot;#%" in page
    assert "ERR: &lt;b&gt;x&lt;/b&gt;" in page
