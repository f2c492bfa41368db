"""A connector's page (configuration with secrets masked, tasks with their traces, topics, its consumer group, the
state history the console saw) and the changes made from it: create from a plugin's form with Connect's own
validation per field, edit as a diff, pause, resume, stop, restart, delete."""

from __future__ import annotations

from django.contrib import messages
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from connect import selectors, services
from connect.forms import config_from_post, config_lines, config_text
from connect.masking import mask_config
from connect.registration import connect_client, connect_cluster_get
from connect.selectors import declared_secrets
from console.accounts.decorators import role_required
from console.accounts.roles import Role
from console.audit.actor import Actor
from console.errors import ConsoleError, FormRefused
from console.http import HtmxHttpRequest, redirect_after_change

MSG_NO_PLUGIN = "Choose a connector plugin."


@require_GET
@role_required(Role.VIEWER)
def connector_detail(request: HtmxHttpRequest, cluster: str, connect: str, name: str):
    detail = selectors.connector_detail(cluster, connect, name)
    context = {"cluster": cluster, "connect": connect, "name": name, "detail": detail,
               "config": sorted(detail.config.items()), "actions": services.ACTIONS}
    return render(request, "connect/connector.html#connector-live" if request.htmx else "connect/connector.html",
                  context)


@require_POST
@role_required(Role.OPERATOR)
def connector_action(request: HtmxHttpRequest, cluster: str, connect: str, name: str):
    """pause, resume, stop or restart (restart: connector only, all tasks, failed tasks only, or one task)."""
    action = request.POST.get("action", "")
    scope = request.POST.get("tasks", "")
    task = request.POST.get("task", "")
    after = services.connector_action(
        actor=Actor.from_request(request), cluster=cluster, connect=connect, name=name, action=action,
        reason=request.POST.get("reason", ""), include_tasks=scope in ("all", "failed"), only_failed=scope == "failed",
        task=int(task) if task.isdigit() else None)
    messages.success(request, f"{action.capitalize()} of {name} sent; Connect now reports it {after['state']}.")
    back = request.POST.get("next") == "offsets"
    return redirect_after_change(request, reverse("connect:offsets" if back else "connect:connector",
                                                  args=[cluster, connect, name]))


MSG_REFUSED_AT_FIELDS = "Connect refused the configuration ({count} problem(s)); nothing was created: see each setting."


def _plugin_form_context(cluster: str, connect: str, plugin: str, values: dict, errors: dict) -> dict:
    """The plugins to choose from and, for the one chosen, its form from Connect's definition (each setting once,
    in Connect's groups and order), holding `values` with `errors` under their settings; settings no field stands
    for go to the "other settings" lines."""
    client = connect_client(connect_cluster_get(cluster, connect))
    plugins = client.plugins()
    context = {"cluster": cluster, "connect": connect, "plugins": plugins, "plugin": plugin, "values": values,
               "errors": errors, "form": None, "extra": ""}
    if plugin:
        chosen = next((p for p in plugins if p.class_name == plugin), None)
        if chosen is None:
            raise ConsoleError(f"Connect cluster {connect} has no plugin {plugin}.", field="plugin")
        form = selectors.connector_form(client, chosen, open_names=frozenset(values) | frozenset(errors))
        others = {k: v for k, v in values.items() if k not in form.names and k != "connector.class"}
        context.update(type=chosen.type, form=form, extra=config_text(others),
                       other_errors={k: m for k, m in errors.items() if k not in form.names})
    return context


def _at_fields(errors: dict[str, tuple[str, ...]]) -> dict[str, list[str]]:
    """Connect's problems by setting, as the form's inputs are named ("cfg:KEY")."""
    return {f"cfg:{key}": list(messages) for key, messages in errors.items()}


@require_http_methods(["GET", "POST"])
@role_required(Role.OPERATOR)
def connector_create(request: HtmxHttpRequest, cluster: str, connect: str):
    """GET: the plugins, then the chosen plugin's form. POST: the console's rules, then Connect's validation;
    problems come back at each setting and nothing is created (with htmx the form stays as typed; without, the page
    comes back with what was typed, secrets apart); a valid configuration creates the connector."""
    plugin = (request.POST.get("plugin") if request.method == "POST" else request.GET.get("plugin", "")) or ""
    if request.method == "GET":
        return render(request, "connect/create.html", _plugin_form_context(cluster, connect, plugin, {}, {}))
    if not plugin:
        raise ConsoleError(MSG_NO_PLUGIN, field="plugin")
    config = {**config_from_post(request.POST), "connector.class": plugin}
    name = config.pop("name", "")
    try:
        services.connector_create(actor=Actor.from_request(request), cluster=cluster, connect=connect, name=name,
                                  config=config, reason=request.POST.get("reason", ""))
    except services.ConfigInvalid as exc:
        if request.htmx:
            message = MSG_REFUSED_AT_FIELDS.format(count=exc.validation.error_count)
            raise FormRefused(message, errors={**_at_fields(exc.errors), "__all__": [message]}) from None
        context = _plugin_form_context(cluster, connect, plugin, {**config, "name": name}, exc.errors)
        context["error"] = MSG_REFUSED_AT_FIELDS.format(count=exc.validation.error_count)
        return render(request, "connect/create.html", context, status=400)
    except ConsoleError as exc:
        if exc.message == services.MSG_NAME:  # the name check, before anything is sent: at the name's field
            raise ConsoleError(exc.message, field="cfg:name") from None
        raise
    messages.success(request, f"Connector {name} created; Connect starts its tasks now.")
    return redirect_after_change(request, reverse("connect:connector", args=[cluster, connect, name]))


@require_http_methods(["GET", "POST"])
@role_required(Role.OPERATOR)
def connector_edit(request: HtmxHttpRequest, cluster: str, connect: str, name: str):
    """GET: the running configuration (secrets masked) to edit. POST step=diff: what would change, and the
    fingerprint of the configuration it was made against; step=apply: the change, if still against that one."""
    client = connect_client(connect_cluster_get(cluster, connect))
    current = client.connector(name).config
    masked = mask_config(current, declared_secrets(client, current.get("connector.class", "")))
    context = {"cluster": cluster, "connect": connect, "name": name, "text": config_text(masked)}
    if request.method == "GET":
        return render(request, "connect/edit.html", context)
    text = request.POST.get("config", "")
    config = config_lines(text)
    if request.POST.get("step") == "apply":
        services.connector_edit(actor=Actor.from_request(request), cluster=cluster, connect=connect, name=name,
                                config=config, reason=request.POST.get("reason", ""),
                                expected_fingerprint=request.POST.get("fingerprint") or None)
        messages.success(request, f"Configuration of {name} changed.")
        return redirect_after_change(request, reverse("connect:connector", args=[cluster, connect, name]))
    diff = services.connector_edit_preview(cluster=cluster, connect=connect, name=name, config=config)
    return render(request, "connect/edit.html", {**context, "text": text, "diff": diff})


@require_POST
@role_required(Role.ADMIN)
def connector_delete(request: HtmxHttpRequest, cluster: str, connect: str, name: str):
    services.connector_delete(actor=Actor.from_request(request), cluster=cluster, connect=connect, name=name,
                              confirm=request.POST.get("confirm", ""), reason=request.POST.get("reason", ""))
    messages.success(request, f"Connector {name} deleted; its offsets stay in Kafka.")
    return redirect_after_change(request, reverse("connect:list", args=[cluster]))
