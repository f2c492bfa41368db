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
from console.connect.types import SINK
from console.errors import ConsoleError
from console.http import HtmxHttpRequest, redirect_after_change

# Settings every connector has, asked before the plugin's own (Connect's framework settings).
FRAMEWORK_FIELDS = ("tasks.max",)
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


def _plugin_form_context(cluster: str, connect: str, plugin: str, values: dict, errors: dict) -> dict:
    client = connect_client(connect_cluster_get(cluster, connect))
    plugins = client.plugins()
    context = {"cluster": cluster, "connect": connect, "plugins": plugins, "plugin": plugin, "values": values,
               "errors": errors, "fields": [], "extra": ""}
    if plugin:
        chosen = next((p for p in plugins if p.class_name == plugin), None)
        if chosen is None:
            raise ConsoleError(f"Connect cluster {connect} has no plugin {plugin}.")
        definitions = client.plugin_config(plugin)
        own = {d.name for d in definitions}
        asked = ["name", *FRAMEWORK_FIELDS, *(["topics"] if chosen.type == SINK else [])]
        context.update(type=chosen.type, fields=[(key, None) for key in asked] + [(d.name, d) for d in definitions],
                       extra=config_text({k: v for k, v in values.items()
                                          if k not in own and k not in asked and k != "connector.class"}))
        context["known_errors"] = {k for k in errors if k in own or k in asked}
    return context


@require_http_methods(["GET", "POST"])
@role_required(Role.OPERATOR)
def connector_create(request: HtmxHttpRequest, cluster: str, connect: str):
    """GET: the plugins, then the chosen plugin's form. POST: Connect validates the settings; problems come back
    beside each field (status 400) and nothing is created; a valid configuration creates the connector."""
    plugin = (request.POST.get("plugin") if request.method == "POST" else request.GET.get("plugin", "")) or ""
    if request.method == "GET":
        return render(request, "connect/create.html", _plugin_form_context(cluster, connect, plugin, {}, {}))
    if not plugin:
        raise ConsoleError(MSG_NO_PLUGIN)
    config = {**config_from_post(request.POST), "connector.class": plugin}
    name = config.pop("name", "")
    try:
        services.connector_create(actor=Actor.from_request(request), cluster=cluster, connect=connect, name=name,
                                  config=config, reason=request.POST.get("reason", ""))
    except services.ConfigInvalid as exc:
        errors = {key: list(messages_) for key, messages_ in exc.errors.items()}
        context = _plugin_form_context(cluster, connect, plugin, {**config, "name": name}, errors)
        context["error"] = exc.message
        return render(request, "connect/create.html", context, status=400)
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
