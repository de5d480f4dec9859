"""Tell someone what a watch found: an alert per pass (its Markdown and its webhook body), kept in the store until a
webhook took it.

A pass that watched a regression, an improvement or a release that could not be measured makes one alert; with a
webhook configured (`--notify URL`, else `$COLBENCH_WATCH_WEBHOOK`) the alert is stored first, then POSTed, and
marked sent once the receiver answered 2xx. A receiver that is down, slow (bounded) or answers an error leaves the
alert in the store, and the next pass of any of its watches sends it again, oldest first: never lost, never sent
twice once taken. The URL itself is never stored (a Slack webhook's path is its secret): each pass sends to the one
it is given.
"""

from __future__ import annotations

import json
import os
import secrets
import urllib.parse
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime

from colbench.app.errors import UsageError
from colbench.bounded_http import NetError, deadline_from_env, request
from colbench.model.watch import WatchAlert, WatchedRelease
from colbench.redact import clip, redact
from colbench.report.watch_text import TOLD, webhook_payload
from colbench.store.base import Store

WEBHOOK_ENV = "COLBENCH_WATCH_WEBHOOK"


class NotifyError(RuntimeError):
    """A webhook that did not take an alert; one line."""


@dataclass
class Delivery:
    """What became of the alerts a pass had to send: sent (ids), kept for the next pass (id → why)."""

    sent: list[str] = field(default_factory=list)
    kept: dict[str, str] = field(default_factory=dict)
    #: where they went, without its secret part ("": no webhook configured)
    destination: str = ""
    #: this pass had something to tell (a regression, an improvement, a release that could not be measured)
    told: bool = False


def webhook_url(given: str | None) -> str | None:
    """The webhook of this pass (`--notify`, else the environment), checked before anything is measured."""
    url = (given or os.environ.get(WEBHOOK_ENV, "")).strip()
    if not url:
        return None
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise UsageError(f"--notify {shown(url)!r}: give an http:// or https:// URL (a webhook that takes a JSON "
                         "POST)")
    return url


def shown(url: str) -> str:
    """A webhook's URL as it may be printed: scheme and host only (the path of a Slack webhook is its token)."""
    parts = urllib.parse.urlsplit(url)
    host = parts.hostname or ""
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{host}{port}/…" if parts.scheme and host else redact(url)[:40]


#: what a webhook did, without its URL (its path is its secret): colbench.bounded_http's kinds of failure
_WHAT_IT_DID = {"timeout": "gave no whole answer within the deadline", "too-large": "answered with too much",
                "redirect": "redirected to another server (not followed)", "not-http": "did not answer HTTP",
                "reset": "cut the connection off", "bad-url": "is not an http(s) URL"}


def post_json(url: str, body: dict[str, object], deadline_s: float | None = None) -> None:
    """POST `body` as JSON; NotifyError (one line, the URL's path left out) unless the receiver answers 2xx within
    `deadline_s` in all (None: `--net-deadline`'s default; colbench.bounded_http: one total deadline, a bounded
    answer, no redirect elsewhere)."""
    data = json.dumps(body, default=str).encode()
    deadline_s = deadline_s if deadline_s is not None else deadline_from_env()
    try:
        answer = request(url, method="POST", data=data, deadline_s=deadline_s, max_bytes=1 << 20,
                         headers={"Content-Type": "application/json", "User-Agent": "colbench"})
    except NetError as exc:
        if exc.kind == "unreachable":
            raise NotifyError(f"cannot reach {shown(url)}: {clip(exc.detail, 120)}") from None
        raise NotifyError(f"{shown(url)} {_WHAT_IT_DID.get(exc.kind, 'failed')}"
                          + (f" ({deadline_s:g} s)" if exc.kind == "timeout" else "")) from None
    if not answer.ok:
        kind = " (a server error)" if answer.status >= 500 else " (refused)" if answer.status in (401, 403) else ""
        raise NotifyError(f"{shown(url)} answered HTTP {answer.status}{kind}")


def new_alert(releases: Sequence[WatchedRelease], watch_ids: Sequence[str], markdown: str) -> WatchAlert | None:
    """The alert of a pass, when it watched something worth telling (a regression, an improvement, an error)."""
    if not any(r.verdict in TOLD for r in releases):
        return None
    now = datetime.now(UTC)
    return WatchAlert(alert_id=f"{now.strftime('%Y%m%dT%H%M%S')}-{secrets.token_hex(3)}",
                      watch_ids=tuple(dict.fromkeys(watch_ids)), created_at=now.isoformat(), markdown=markdown,
                      payload=webhook_payload(releases, markdown))


def deliver(store: Store, url: str | None, watch_ids: Sequence[str], alert: WatchAlert | None,
            deadline_s: float | None = None) -> Delivery:
    """Keep this pass's alert, then send it and every alert of these watches still waiting, oldest first."""
    if url is None:
        return Delivery(told=alert is not None)
    if alert is not None:
        store.save_alert(alert)
    delivery = Delivery(destination=shown(url), told=alert is not None)
    for waiting in store.watch_alerts(tuple(watch_ids), pending=True):
        try:
            post_json(url, waiting.payload, deadline_s)
        except NotifyError as exc:
            store.save_alert(replace(waiting, attempts=waiting.attempts + 1, last_error=str(exc)))
            delivery.kept[waiting.alert_id] = str(exc)
            continue
        store.save_alert(replace(waiting, attempts=waiting.attempts + 1, sent_at=datetime.now(UTC).isoformat(),
                                 last_error=None))
        delivery.sent.append(waiting.alert_id)
    return delivery
