from console.accounts.roles import Role, user_role
from console.frame import breadcrumbs, nav_groups, switch_url

LAST_CLUSTER_COOKIE = "cluster"


def _cluster_names() -> list[str]:
    from console.clusters.models import Cluster

    return list(Cluster.objects.order_by("name").values_list("name", flat=True)[:500])


def console(request) -> dict:
    role = user_role(getattr(request, "user", None))
    match = getattr(request, "resolver_match", None)
    kwargs = dict(match.kwargs) if match else {}
    view_name, url_name, namespace = (match.view_name, match.url_name or "", match.namespace) if match else ("", "", "")
    cluster_name = kwargs.get("cluster")
    context = {
        "user_role": role.group_name if role else "",
        "can_operate": role is not None and role >= Role.OPERATOR,
        "can_admin": role is not None and role >= Role.ADMIN,
        "current_cluster": cluster_name,
        "nav_groups": [], "crumbs": [], "clusters_switch": [], "page_title": "",
    }
    if role is None or match is None:
        return context
    # Pages outside a cluster (alerts, audit) still offer the cluster pages of the last cluster seen.
    menu_cluster = cluster_name or request.COOKIES.get(LAST_CLUSTER_COOKIE) or ""
    names = _cluster_names()
    if menu_cluster not in names:
        menu_cluster = names[0] if names else ""
    crumbs = breadcrumbs(view_name, url_name, namespace, kwargs)
    context.update(
        nav_groups=nav_groups(view_name, namespace, menu_cluster or None, role),
        crumbs=crumbs, menu_cluster=menu_cluster,
        clusters_switch=[{"name": name, "url": switch_url(view_name, kwargs, namespace, name),
                          "current": name == cluster_name} for name in names],
        page_title=" · ".join(c["label"] for c in reversed(crumbs[1:])) if len(crumbs) > 1 else crumbs[0]["label"],
    )
    return context
