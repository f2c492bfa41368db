"""ACLs, SCRAM users and client quotas of a cluster. Anyone may read them; changes are admin only, previewed with
the exact bindings or credential, and audited."""

from __future__ import annotations

from django.contrib import messages
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.debug import sensitive_post_parameters
from django.views.decorators.http import require_GET, require_POST

from access import selectors, services
from access.bindings import binding_from_token, binding_token, bindings_for, query_for
from access.forms import AclCreateForm, AclDeleteForm, AclFilterForm, CredentialDeleteForm, CredentialForm
from changes.actions import access as acl_changes
from changes.proposals import propose_if_protected, proposed_response
from console.accounts.decorators import role_required
from console.accounts.roles import Role
from console.audit.actor import Actor
from console.clusters.selectors import cluster_get
from console.http import HtmxHttpRequest, redirect_after_change, valid_data


@require_GET
@role_required(Role.VIEWER)
def acl_list(request: HtmxHttpRequest, cluster: str):
    cluster_get(cluster)
    search = AclFilterForm(request.GET or None)
    filters = valid_data(search) if request.GET else {}
    query = query_for(**{k: v for k, v in filters.items() if v})
    context = {"cluster": cluster, "search": search or AclFilterForm(), "create": AclCreateForm(), "rows": [],
               "filtered": any(filters.values())}
    try:
        context["rows"] = [{"entry": e, "token": binding_token(e)} for e in selectors.acls_list(cluster, query)]
    except selectors.NoAuthorizer as exc:
        context["no_authorizer"] = exc.message
    return render(request, "access/acls.html", context)


def _requested_bindings(data: dict):
    return bindings_for(principal=data["principal"], resource_type=data["resource_type"],
                        resource_name=data["resource_name"], pattern_type=data["pattern_type"],
                        operations=data["operations"], permission=data["permission"], host=data["host"])


@require_POST
@role_required(Role.ADMIN)
def acl_create_preview(request: HtmxHttpRequest, cluster: str):
    data = valid_data(AclCreateForm(request.POST))
    change = services.acls_create_preview(cluster=cluster, entries=_requested_bindings(data))
    return render(request, "access/_acl_preview.html",
                  {"cluster": cluster, "change": change, "mode": "create", "form": request.POST})


@require_POST
@role_required(Role.ADMIN)
def acl_create(request: HtmxHttpRequest, cluster: str):
    data = valid_data(AclCreateForm(request.POST))
    asked = propose_if_protected(actor=Actor.from_request(request), action=acl_changes.CREATE, cluster=cluster,
                                 kwargs=acl_changes.acl_kwargs(_requested_bindings(data)), reason=data["reason"])
    if asked is not None:
        return proposed_response(request, asked)
    change = services.acls_create(actor=Actor.from_request(request), cluster=cluster,
                                  entries=_requested_bindings(data), reason=data["reason"])
    messages.success(request, f"Created {len(change.changed)} ACL binding{'s' if len(change.changed) != 1 else ''}.")
    return redirect_after_change(request, reverse("access:acls", args=[cluster]))


@require_POST
@role_required(Role.ADMIN)
def acl_delete_preview(request: HtmxHttpRequest, cluster: str):
    data = valid_data(AclDeleteForm(request.POST))
    change = services.acls_delete_preview(cluster=cluster, entries=[binding_from_token(t) for t in data["binding"]])
    return render(request, "access/_acl_preview.html",
                  {"cluster": cluster, "change": change, "mode": "delete",
                   "tokens": [binding_token(e) for e in change.changed]})


@require_POST
@role_required(Role.ADMIN)
def acl_delete(request: HtmxHttpRequest, cluster: str):
    data = valid_data(AclDeleteForm(request.POST))
    entries = [binding_from_token(t) for t in data["binding"]]
    if data["confirm"].strip() == str(len(services.acls_delete_preview(cluster=cluster, entries=entries).changed)):
        asked = propose_if_protected(actor=Actor.from_request(request), action=acl_changes.DELETE, cluster=cluster,
                                     kwargs=acl_changes.acl_kwargs(entries), reason=data["reason"])
        if asked is not None:
            return proposed_response(request, asked)
    deleted = services.acls_delete(actor=Actor.from_request(request), cluster=cluster,
                                   entries=[binding_from_token(t) for t in data["binding"]],
                                   confirm=data["confirm"], reason=data["reason"])
    messages.success(request, f"Deleted {len(deleted)} ACL binding{'s' if len(deleted) != 1 else ''}.")
    return redirect_after_change(request, reverse("access:acls", args=[cluster]))


@require_GET
@role_required(Role.VIEWER)
def user_list(request: HtmxHttpRequest, cluster: str):
    cluster_get(cluster)
    context = {"cluster": cluster, "users": selectors.scram_users_list(cluster),
               "quotas": selectors.client_quotas_list(cluster), "credential": CredentialForm()}
    return render(request, "access/users.html", context)


@sensitive_post_parameters("password")
@require_POST
@role_required(Role.ADMIN)
def credential_set(request: HtmxHttpRequest, cluster: str):
    data = valid_data(CredentialForm(request.POST))
    services.scram_credential_set(actor=Actor.from_request(request), cluster=cluster, user=data["user"],
                                  mechanism=data["mechanism"], iterations=data["iterations"],
                                  password=data["password"], reason=data["reason"])
    messages.success(request, f"{data['mechanism']} credential of {data['user']} set.")
    return redirect_after_change(request, reverse("access:users", args=[cluster]))


@require_POST
@role_required(Role.ADMIN)
def credential_delete(request: HtmxHttpRequest, cluster: str):
    data = valid_data(CredentialDeleteForm(request.POST))
    services.scram_credential_delete(actor=Actor.from_request(request), cluster=cluster, user=data["user"],
                                     mechanism=data["mechanism"], confirm=data["confirm"], reason=data["reason"])
    messages.success(request, f"{data['mechanism']} credential of {data['user']} deleted.")
    return redirect_after_change(request, reverse("access:users", args=[cluster]))
