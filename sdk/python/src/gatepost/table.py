"""The one table of the API operations this SDK calls: every request the client makes names an
entry here (client.py's ``_call``). ``python3 -m gatepost.operations`` prints it as JSON, and a
test checks it against the served OpenAPI document."""

from __future__ import annotations

from typing import NamedTuple


class Operation(NamedTuple):
    method: str
    #: An OpenAPI path template: ``{name}`` stands for a path parameter.
    path: str


OPERATIONS: dict[str, Operation] = {
    "send_email": Operation("POST", "/v1/emails"),
    "send_batch": Operation("POST", "/v1/emails/batch"),
    "get_message": Operation("GET", "/v1/messages/{id}"),
    "get_receipt": Operation("GET", "/v1/messages/{id}/receipt"),
    "get_jwks": Operation("GET", "/.well-known/jwks.json"),
    "validate": Operation("POST", "/v1/validate"),
    "validate_batch": Operation("POST", "/v1/validate/batch"),
    "create_template": Operation("POST", "/v1/templates"),
    "list_templates": Operation("GET", "/v1/templates"),
    "get_template": Operation("GET", "/v1/templates/{slug}"),
    "update_template": Operation("PATCH", "/v1/templates/{slug}"),
    "delete_template": Operation("DELETE", "/v1/templates/{slug}"),
    "add_suppression": Operation("POST", "/v1/suppressions"),
    "list_suppressions": Operation("GET", "/v1/suppressions"),
    "get_suppression": Operation("GET", "/v1/suppressions/{address}"),
    "delete_suppression": Operation("DELETE", "/v1/suppressions/{address}"),
    "create_domain": Operation("POST", "/v1/domains"),
    "list_domains": Operation("GET", "/v1/domains"),
    "get_domain": Operation("GET", "/v1/domains/{id}"),
    "verify_domain": Operation("POST", "/v1/domains/{id}/verify"),
    "update_domain": Operation("PATCH", "/v1/domains/{id}"),
    "delete_domain": Operation("DELETE", "/v1/domains/{id}"),
    "create_webhook": Operation("POST", "/v1/webhooks"),
    "list_webhooks": Operation("GET", "/v1/webhooks"),
    "get_webhook": Operation("GET", "/v1/webhooks/{id}"),
    "update_webhook": Operation("PATCH", "/v1/webhooks/{id}"),
    "delete_webhook": Operation("DELETE", "/v1/webhooks/{id}"),
    "rotate_webhook_secret": Operation("POST", "/v1/webhooks/{id}/rotate"),
    "test_webhook": Operation("POST", "/v1/webhooks/{id}/test"),
    "list_webhook_deliveries": Operation("GET", "/v1/webhooks/{id}/deliveries"),
    "retry_webhook_delivery": Operation("POST", "/v1/webhooks/{id}/deliveries/{evt}/retry"),
    "list_sandbox_messages": Operation("GET", "/v1/sandbox/messages"),
    "get_sandbox_message": Operation("GET", "/v1/sandbox/messages/{id}"),
    "list_events": Operation("GET", "/v1/events"),
    "list_reports": Operation("GET", "/v1/reports"),
    "get_reputation": Operation("GET", "/v1/reputation"),
    "get_queue": Operation("GET", "/v1/queue"),
    "create_inbound_route": Operation("POST", "/v1/inbound/routes"),
    "list_inbound_routes": Operation("GET", "/v1/inbound/routes"),
    "get_inbound_route": Operation("GET", "/v1/inbound/routes/{id}"),
    "update_inbound_route": Operation("PATCH", "/v1/inbound/routes/{id}"),
    "delete_inbound_route": Operation("DELETE", "/v1/inbound/routes/{id}"),
    "list_inbound_messages": Operation("GET", "/v1/inbound/messages"),
    "get_inbound_message": Operation("GET", "/v1/inbound/messages/{id}"),
    # Downloads: the answer is bytes, not JSON.
    "get_inbound_raw": Operation("GET", "/v1/inbound/messages/{id}/raw"),
    "get_inbound_attachment": Operation("GET", "/v1/inbound/messages/{id}/attachments/{n}"),
    "create_audience": Operation("POST", "/v1/audiences"),
    "list_audiences": Operation("GET", "/v1/audiences"),
    "get_audience": Operation("GET", "/v1/audiences/{id}"),
    "delete_audience": Operation("DELETE", "/v1/audiences/{id}"),
    "add_contact": Operation("POST", "/v1/audiences/{id}/contacts"),
    "list_contacts": Operation("GET", "/v1/audiences/{id}/contacts"),
    "get_contact": Operation("GET", "/v1/audiences/{id}/contacts/{contact}"),
    "update_contact": Operation("PATCH", "/v1/audiences/{id}/contacts/{contact}"),
    "remove_contact": Operation("DELETE", "/v1/audiences/{id}/contacts/{contact}"),
    "import_contacts": Operation("POST", "/v1/audiences/{id}/contacts/import"),
    "create_broadcast": Operation("POST", "/v1/broadcasts"),
    "list_broadcasts": Operation("GET", "/v1/broadcasts"),
    "get_broadcast": Operation("GET", "/v1/broadcasts/{id}"),
    "delete_broadcast": Operation("DELETE", "/v1/broadcasts/{id}"),
    "send_broadcast": Operation("POST", "/v1/broadcasts/{id}/send"),
    "cancel_broadcast": Operation("POST", "/v1/broadcasts/{id}/cancel"),
    "create_automation": Operation("POST", "/v1/automations"),
    "list_automations": Operation("GET", "/v1/automations"),
    "get_automation": Operation("GET", "/v1/automations/{id}"),
    "update_automation": Operation("PATCH", "/v1/automations/{id}"),
    "delete_automation": Operation("DELETE", "/v1/automations/{id}"),
    "list_automation_runs": Operation("GET", "/v1/automations/{id}/runs"),
    "get_automation_run": Operation("GET", "/v1/automations/{id}/runs/{run}"),
    "send_event": Operation("POST", "/v1/events"),
}


