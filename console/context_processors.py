from django.urls import NoReverseMatch, reverse

from console.accounts.roles import Role, user_role

# (label, url name, takes the cluster). Sections whose app is not installed yet show as unavailable.
NAV = (
    ("Clusters", "clusters:list", False),
    ("Topics", "topics:list", True),
    ("Brokers", "brokers:list", True),
    ("Health", "brokermetrics:overview", True),
    ("Consumer groups", "offsets:groups", True),
    ("Schemas", "records:schemas", True),
    ("Transactions", "transactions:list", True),
    ("Replays", "sparkjobs:list", True),
    ("Connect", "connect:list", True),
    ("ACLs", "access:acls", True),
    ("Users & quotas", "access:users", True),
    ("Alerts", "alerts:page", False),
    ("Audit", "audit:list", False),
)


def nav_items(request, cluster_name: str | None) -> list[dict]:
    cluster_name = cluster_name or request.COOKIES.get("cluster") or "local"
    items = []
    for label, url_name, scoped in NAV:
        try:
            url = reverse(url_name, kwargs={"cluster": cluster_name} if scoped else None)
        except NoReverseMatch:
            items.append({"label": label, "url": None, "why": "Not available in this version yet"})
            continue
        items.append({"label": label, "url": url, "active": request.path.startswith(url) and url != "/"})
    return items


def console(request) -> dict:
    role = user_role(getattr(request, "user", None))
    match = getattr(request, "resolver_match", None)
    cluster_name = match.kwargs.get("cluster") if match else None
    return {
        "user_role": role.group_name if role else "",
        "can_operate": role is not None and role >= Role.OPERATOR,
        "can_admin": role is not None and role >= Role.ADMIN,
        "current_cluster": cluster_name,
        "nav_items": nav_items(request, cluster_name) if role is not None else [],
    }
