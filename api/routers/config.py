"""Config as code through the API (`manage.py config export|plan|apply`), so a CI job plans a pull request's file
and applies it on merge. Admin: the file holds masking rules and SCRAM users (a read-only admin token may plan)."""

from __future__ import annotations

from django.http import HttpResponse
from ninja import Router, Schema
from pydantic import Field

from api.access import allow
from api.schemas import PROBLEMS, REASON
from config_as_code.document import dump_document
from config_as_code.selectors import cluster_config, plan_for
from config_as_code.serializers import applied_json
from config_as_code.services import config_apply
from console.accounts.roles import Role
from console.audit.actor import Actor

router = Router(tags=["config as code"])


@router.get("/clusters/{cluster}/config", response=PROBLEMS, summary="Export the configuration",
            openapi_extra={"responses": {"200": {"description": "The configuration file (YAML)", "content": {
                "application/yaml": {"schema": {"type": "string"}}}}}})
def config_export(request, cluster: str):
    """`manage.py config export`: the cluster's configuration as YAML, secrets left out."""
    allow(request, role=Role.ADMIN, cluster=cluster)
    return HttpResponse(dump_document(cluster_config(cluster)), content_type="application/yaml; charset=utf-8")


class PlanRequest(Schema):
    file: str = Field(min_length=1, description="the configuration file's YAML text")
    delete: bool = Field(False, description="also delete what the cluster has and the file does not")


class ApplyRequest(PlanRequest):
    fingerprint: str = Field(min_length=1, description="the plan's fingerprint: refused if the plan is another now")
    reason: str = REASON


@router.post("/clusters/{cluster}/config/plan", response={200: dict, **PROBLEMS}, summary="Plan a configuration file")
def config_plan(request, cluster: str, body: PlanRequest):
    """`manage.py config plan FILE --format json`: each change to create, change or delete, problems, and the
    fingerprint apply needs. Changes nothing."""
    allow(request, role=Role.ADMIN, cluster=cluster)
    return plan_for(cluster, body.file, allow_deletes=body.delete).as_json()


@router.post("/clusters/{cluster}/config/apply", response={200: dict, **PROBLEMS}, summary="Apply a configuration file")
def config_apply_view(request, cluster: str, body: ApplyRequest):
    """`manage.py config apply FILE --if-unchanged FINGERPRINT --format json`: refused (409, audited, nothing
    changed) if the plan is not the one planned; else each change through the console's services, as one change
    set in the audit log."""
    allow(request, role=Role.ADMIN, cluster=cluster, write=True)
    plan, applied = config_apply(actor=Actor.from_request(request), cluster=cluster, text=body.file,
                                 expected_fingerprint=body.fingerprint, allow_deletes=body.delete, reason=body.reason)
    return applied_json(plan, applied)
