"""Where a push may go (`push_endpoint.py`) and how it is posted (`push_sender.py`), with DNS stood in for:
the connection goes to the address that was checked with no second lookup (the TLS name and `Host`
stay the endpoint's), a name that resolves elsewhere by delivery time is refused before any connection,
the allow-list of push services holds, and the deadlines bound a lookup or a push service that hangs."""

from __future__ import annotations

import socket
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import pytest
from fastapi.testclient import TestClient

from dotfight.server import push_endpoint
from dotfight.server.app import create_app
from dotfight.server.push_endpoint import EndpointPolicy, EndpointRefused, parse_endpoint, resolver
from dotfight.server.push_message import PushMessage
from dotfight.server.push_sender import Outcome, PushSender
from dotfight.server.settings import Settings
from tests.support.push_service import (
    Browser,
    PushService,
    push_service_on_loopback,
    silent_service_on_loopback,
)

NAME = "push.dotfight-pinned.net"  # a name no DNS knows: only the stand-in lookup answers it
MESSAGE = PushMessage(b"ciphertext", {"TTL": "60"})


@pytest.fixture
def push_service() -> Iterator[PushService]:
    with push_service_on_loopback() as service:
        yield service


class Lookups:
    """Stands in for DNS: answers each lookup of a host with the next of its answers, and records them;
    meanwhile the socket layer refuses to look up any name (a second lookup anywhere fails)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, answers: dict[str, list[Sequence[str]]]) -> None:
        self.answers = answers
        self.asked: list[str] = []
        monkeypatch.setattr(push_endpoint, "system_lookup", self)
        real = socket.getaddrinfo

        def numeric_only(host: Any, *args: Any, **kwargs: Any) -> Any:
            kwargs["flags"] = kwargs.get("flags", 0) | socket.AI_NUMERICHOST
            return real(host, *args, **kwargs)

        monkeypatch.setattr(socket, "getaddrinfo", numeric_only)

    def __call__(self, host: str, port: int) -> Sequence[str]:
        self.asked.append(host)
        answers = self.answers[host]
        if not answers:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return answers.pop(0) if len(answers) > 1 else answers[0]


def sender(policy: EndpointPolicy, *, connect_timeout: float = 2.0, timeout: float = 5.0) -> PushSender:
    return PushSender(
        policy, resolver(policy, None, connect_timeout), connect_timeout=connect_timeout, timeout=timeout
    )


INSECURE = EndpointPolicy(insecure=True)


async def test_a_push_goes_to_the_address_checked_with_no_second_lookup(
    monkeypatch: pytest.MonkeyPatch, push_service: PushService
) -> None:
    port = push_service.server.server_address[1]
    lookups = Lookups(monkeypatch, {NAME: [["127.0.0.1"]]})
    posting = sender(INSECURE)
    sent = await posting.post(posting.check(f"http://{NAME}:{port}/push/red"), MESSAGE)
    assert sent.outcome is Outcome.DELIVERED and sent.status == 201
    [push] = push_service.wait_for(1)
    assert push.path == "/push/red" and push.body == b"ciphertext"
    assert push.headers["host"] == f"{NAME}:{port}"  # the name, though the connection went to the address
    assert lookups.asked == [NAME]


async def test_a_name_that_resolves_elsewhere_by_delivery_time_is_refused_before_connecting(
    monkeypatch: pytest.MonkeyPatch, push_service: PushService
) -> None:
    port = push_service.server.server_address[1]
    rebinding = [["127.0.0.1"], ["10.0.0.7"], ["127.0.0.1", "169.254.169.254"]]
    lookups = Lookups(monkeypatch, {NAME: rebinding})
    posting = sender(INSECURE)
    target = posting.check(f"http://{NAME}:{port}/push/red")
    assert (await posting.post(target, MESSAGE)).outcome is Outcome.DELIVERED
    for _ in range(2):  # now private, then one private address among the loopback one
        sent = await posting.post(target, MESSAGE)
        assert sent.outcome is Outcome.REFUSED and "not public" in sent.detail
    assert len(push_service.received) == 1
    assert lookups.asked == [NAME] * 3


@pytest.mark.parametrize(
    ("answer", "allowed"),
    [
        (["142.250.74.106"], True),
        (["2a00:1450:4007:80e::200a", "142.250.74.106"], True),
        (["127.0.0.1"], False),
        (["142.250.74.106", "10.0.0.1"], False),
        (["::ffff:127.0.0.1"], False),
        (["64:ff9b::a9fe:a9fe"], False),  # NAT64 of 169.254.169.254
        (["fd00::1"], False),
        (["100.64.0.1"], False),
        (["224.0.0.251"], False),
        (["0.0.0.0"], False),
    ],
)
async def test_a_name_must_resolve_to_public_addresses_only(
    monkeypatch: pytest.MonkeyPatch, answer: list[str], allowed: bool
) -> None:
    Lookups(monkeypatch, {"fcm.googleapis.com": [answer]})
    resolve = resolver(EndpointPolicy(), None, 2.0)
    target = parse_endpoint("https://fcm.googleapis.com/fcm/send/abc", EndpointPolicy())
    if allowed:
        assert await resolve(target) == tuple(answer)
    else:
        with pytest.raises(EndpointRefused):
            await resolve(target)


def test_the_allow_list_names_the_push_services_the_server_posts_to() -> None:
    policy = EndpointPolicy(allowed_hosts=("fcm.googleapis.com", "*.notify.windows.com"))
    for allowed in (
        "https://fcm.googleapis.com/fcm/send/abc",
        "https://FCM.googleapis.com./fcm/send/abc",
        "https://wns2-par02p.notify.windows.com/w/?token=abc",
    ):
        parse_endpoint(allowed, policy)
    for refused in (
        "https://updates.push.services.mozilla.com/wpush/v2/abc",
        "https://notify.windows.com/w/",
        "https://evilnotify.windows.com.example.net/w/",
        "https://fcm.googleapis.com.evil.net/fcm/send/abc",
    ):
        with pytest.raises(EndpointRefused):
            parse_endpoint(refused, policy)


async def test_a_silent_push_service_and_a_hanging_lookup_are_given_up_at_their_deadlines(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with silent_service_on_loopback() as silent:
        posting = sender(INSECURE, connect_timeout=0.2, timeout=0.3)
        started = time.monotonic()
        sent = await posting.post(posting.check(f"{silent.base}/push"), MESSAGE)
        assert sent.outcome is Outcome.UNANSWERED and time.monotonic() - started < 2
        assert len(silent.connections) == 1

    def hanging(host: str, port: int) -> list[str]:
        time.sleep(1.0)
        return ["127.0.0.1"]

    monkeypatch.setattr(push_endpoint, "system_lookup", hanging)
    started = time.monotonic()
    sent = await posting.post(posting.check(f"http://{NAME}:9/push"), MESSAGE)
    assert sent.outcome is Outcome.UNANSWERED and "took too long" in sent.detail
    assert time.monotonic() - started < 0.8


@pytest.fixture
def production_client(
    make_settings: Callable[..., Settings], monkeypatch: pytest.MonkeyPatch
) -> Iterator[TestClient]:
    monkeypatch.setenv("DOTFIGHT_PUSH_ALLOWED_HOSTS", '["fcm.googleapis.com", "*.push.services.mozilla.com"]')
    Lookups(
        monkeypatch,
        {
            "fcm.googleapis.com": [["142.250.74.106"]],
            "updates.push.services.mozilla.com": [[]],  # the name does not exist
        },
    )
    with TestClient(create_app(make_settings())) as client:
        yield client


def test_subscribing_checks_the_endpoint_against_the_allow_list_and_dns(
    production_client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    client = production_client
    page = client.post("/api/pages", json={"preset": "quick", "mode": "link"}).json()
    headers = {"Authorization": f"Bearer {page['seats']['red']}"}

    def subscribe(endpoint: str) -> Any:
        return client.post(
            f"/api/pages/{page['id']}/push", json=Browser.at(endpoint).subscription(), headers=headers
        )

    assert subscribe("https://fcm.googleapis.com/fcm/send/abc").status_code == 201
    for refused in ("https://push.example.net/abc", "https://updates.push.services.mozilla.com/wpush/v2/abc"):
        answer = subscribe(refused)
        assert answer.status_code == 400 and answer.json()["error"]["reason"] == "push_endpoint", answer.text

    def failing(host: str, port: int) -> list[str]:
        raise socket.gaierror(socket.EAI_AGAIN, "Temporary failure in name resolution")

    monkeypatch.setattr(push_endpoint, "system_lookup", failing)
    answer = subscribe("https://fcm.googleapis.com/fcm/send/def")
    assert answer.status_code == 503 and answer.json()["error"]["code"] == "unavailable"
