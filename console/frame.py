"""The frame around every page: the navigation grouped by what people come for (one line on a wide screen), the
cluster switcher that keeps the page, breadcrumbs and the page's title, all from the URL the request resolved to.
Pure apart from `reverse`: the views need not pass any of it."""

from __future__ import annotations

from dataclasses import dataclass, field

from django.urls import NoReverseMatch, reverse

from console.accounts.roles import Role

# (group, [(label, url name, takes the cluster, lowest role)]): the menus, in order.
GROUPS: tuple[tuple[str, tuple[tuple[str, str, bool, Role], ...]], ...] = (
    ("Cluster", (("Dashboard", "clusters:detail", True, Role.VIEWER),
                 ("Brokers", "brokers:list", True, Role.VIEWER),
                 ("Health", "brokermetrics:overview", True, Role.VIEWER),
                 ("Replication", "replication:overview", True, Role.VIEWER))),
    ("Topics", (("Topics", "topics:list", True, Role.VIEWER),
                ("Schemas", "records:schemas", True, Role.VIEWER),
                ("Topic policies", "topic-policies:list", True, Role.VIEWER),
                ("Bulk topic actions", "bulk-topics:select", True, Role.OPERATOR))),
    ("Consumers", (("Consumer groups", "offsets:groups", True, Role.VIEWER),
                   ("Protocol migration", "protocol-migration:page", True, Role.VIEWER),
                   ("Transactions", "transactions:list", True, Role.VIEWER),
                   ("Replays", "sparkjobs:list", True, Role.VIEWER),
                   ("Bulk group actions", "bulk-groups:select", True, Role.OPERATOR))),
    ("Connect", (("Connect clusters", "connect:list", True, Role.VIEWER),)),
    ("Security", (("ACLs", "access:acls", True, Role.VIEWER),
                  ("Users & quotas", "access:users", True, Role.VIEWER),
                  ("Masking rules", "masking:rules", True, Role.ADMIN),
                  ("Console roles", "user-list", False, Role.ADMIN),
                  ("API tokens", "tokens:list", False, Role.VIEWER))),
    ("Operations", (("Alerts", "alerts:page", False, Role.VIEWER),
                    ("Change requests", "changes:list", False, Role.VIEWER),
                    ("Config drift", "config-as-code:drift", True, Role.ADMIN),
                    ("Audit log", "audit:list", False, Role.VIEWER),
                    ("All clusters", "clusters:list", False, Role.VIEWER))),
)
# The URL namespace of a page -> the menu entry it belongs to (its group and the list it sits under).
SECTION_OF = {
    "brokers": "brokers:list", "brokermetrics": "brokermetrics:overview", "replication": "replication:overview",
    "topics": "topics:list", "records": "topics:list", "topic-policies": "topic-policies:list", "bulk-topics": "bulk-topics:select",
    "offsets": "offsets:groups", "transactions": "transactions:list", "sparkjobs": "sparkjobs:list",
    "bulk-groups": "bulk-groups:select", "protocol-migration": "protocol-migration:page", "connect": "connect:list",
    "access": "access:acls",
    "masking": "masking:rules", "alerts": "alerts:page", "audit": "audit:list", "tokens": "tokens:list",
    "config-as-code": "config-as-code:drift", "changes": "changes:list",
}
# Pages whose section is another than their namespace's.
SECTION_OF_VIEW = {
    "clusters:detail": "clusters:detail", "clusters:edit": "clusters:detail", "clusters:remove": "clusters:detail",
    "protection:edit": "clusters:detail",
    "clusters:list": "clusters:list", "clusters:new": "clusters:list", "access:users": "access:users",
    "access:credential-set": "access:users", "access:credential-delete": "access:users", "user-list": "user-list",
    "records:schemas": "records:schemas", "records:schema": "records:schemas", "records:subject": "records:schemas",
    "records:subject-version": "records:schemas",
}
# Object kwargs of a URL, how a crumb names them, and the page that shows the object.
OBJECTS = (
    ("topic", "{}", "topics:detail"), ("group", "{}", "offsets:detail"),
    ("transactional_id", "{}", "transactions:detail"), ("broker_id", "Broker {}", None), ("job_id", "Replay #{}", "sparkjobs:detail"),
    ("connect", "{}", None), ("name", "{}", None), ("subject", "{}", "records:subject"), ("schema_id", "Schema id {}", None),
    ("seq", "#{}", None), ("rule_id", "Rule {}", None), ("request_id", "Request #{}", None),
)
# The last crumb of a page below an object, by the URL name's last part.
SUBPAGES = {
    "lag": "Lag", "messages": "Messages", "search": "Search", "produce": "Produce", "import": "Import", "copy": "Copy",
    "reset": "Reset offsets", "revert": "Revert", "delete": "Delete", "edit": "Edit", "offsets": "Offsets",
    "create": "New connector", "new": "New", "log": "Log", "reset-here": "Reset a group to here",
    "registration-edit": "Edit registration", "registration-remove": "Remove registration", "import-status": "Import",
    "subject-version": "Version", "partitions": "Partitions", "purge": "Purge", "config-preview": "Configuration",
    "offsets-delete-preview": "Delete offsets", "report": "Report",
}


@dataclass
class NavGroup:
    label: str
    items: list[dict] = field(default_factory=list)
    current: bool = False


def _url(url_name: str, cluster: str | None, scoped: bool) -> str | None:
    if scoped and not cluster:
        return None
    try:
        return reverse(url_name, kwargs={"cluster": cluster} if scoped else None)
    except NoReverseMatch:
        return None


def section_of(view_name: str, namespace: str) -> str:
    return SECTION_OF_VIEW.get(view_name) or SECTION_OF.get(namespace, "")


def nav_groups(view_name: str, namespace: str, cluster: str | None, role: Role) -> list[NavGroup]:
    """The menus for a user of `role` on a page of `cluster` (or the last cluster seen)."""
    current_section = section_of(view_name, namespace)
    groups = []
    for label, entries in GROUPS:
        group = NavGroup(label)
        for item_label, url_name, scoped, lowest in entries:
            if role < lowest:
                continue
            url = _url(url_name, cluster, scoped)
            group.items.append({"label": item_label, "url": url, "active": url_name == current_section})
            group.current = group.current or url_name == current_section
        if group.items:
            groups.append(group)
    return groups


def switch_url(view_name: str, kwargs: dict, namespace: str, other: str) -> str:
    """The same page on another cluster where the page is a cluster's own (a list, a dashboard); else the list
    the page sits under, since an object of one cluster (a topic, a group) may not exist on another."""
    if set(kwargs) == {"cluster"}:
        try:
            return reverse(view_name, kwargs={"cluster": other})
        except NoReverseMatch:
            pass
    section = section_of(view_name, namespace)
    return _url(section, other, True) or reverse("clusters:detail", kwargs={"cluster": other})


def breadcrumbs(view_name: str, url_name: str, namespace: str, kwargs: dict) -> list[dict]:
    """[{label, url}] from the clusters list down to this page; the last one has no url."""
    crumbs = [{"label": "Clusters", "url": reverse("clusters:list")}]
    cluster = kwargs.get("cluster")
    if cluster:
        crumbs.append({"label": cluster, "url": reverse("clusters:detail", kwargs={"cluster": cluster})})
    section = section_of(view_name, namespace)
    labels = {name: label for _, entries in GROUPS for label, name, _, _ in entries}
    if section and section not in ("clusters:detail", "clusters:list"):
        crumbs.append({"label": labels.get(section, section), "url": _url(section, cluster, bool(cluster))})
    for key, template, detail_view in OBJECTS:
        if key not in kwargs:
            continue
        url = None
        if detail_view:
            try:
                url = reverse(detail_view, kwargs={"cluster": cluster, key: kwargs[key]})
            except NoReverseMatch:
                url = None
        crumbs.append({"label": template.format(kwargs[key]), "url": url})
    last = SUBPAGES.get(url_name)
    if last and crumbs[-1]["label"] != last:
        crumbs.append({"label": last, "url": None})
    elif url_name in ("new",) or view_name == "clusters:new":
        crumbs.append({"label": "New", "url": None})
    crumbs[-1] = {**crumbs[-1], "url": None}
    return crumbs
