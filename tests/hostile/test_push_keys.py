"""Issue 18, item 5: a subscription's keys that cannot be encrypted to are refused when subscribing, and
one such subscription in an older database silences none of its seat's other devices."""

from __future__ import annotations

import time

from tests.hostile.conftest import StartServer
from tests.support.page_client import create_page
from tests.support.push_service import (
    Browser,
    b64url,
    make_it_reds_move,
    push_service_on_loopback,
    store_subscriptions,
    stored_endpoints,
    subscribe_seat,
)

# Valid base64url of 65 bytes that start as an uncompressed point does, but (0, 0) is not on P-256.
OFF_THE_CURVE = b64url(b"\x04" + bytes(64))
# Base64url of 65 bytes that are not an uncompressed point at all.
NOT_A_POINT = b64url(b"\x02" + bytes(range(64)))
# An authentication secret must be 16 bytes; these are 20.
LONG_SECRET = b64url(bytes(20))


def test_keys_that_cannot_be_encrypted_to_are_refused_when_subscribing(start_server: StartServer) -> None:
    with push_service_on_loopback() as service:
        server = start_server(extra_env={"DOTFIGHT_PUSH_INSECURE_ENDPOINTS": "1"})
        page = create_page(server, preset="quick", mode="link")
        for keys in ({"p256dh": OFF_THE_CURVE}, {"p256dh": NOT_A_POINT}, {"auth": LONG_SECRET}):
            subscription = Browser.at(f"{service.base}/push/red").subscription()
            subscription["keys"].update(keys)
            answer = subscribe_seat(server, page, "red", subscription)
            assert answer.status_code == 400, (keys, answer.text)
            assert answer.json()["error"]["code"] == "bad_request"
        assert stored_endpoints(server, page["id"]) == []


def test_a_stored_subscription_with_bad_keys_silences_none_of_the_seats_other_devices(
    start_server: StartServer,
) -> None:
    with push_service_on_loopback() as service:
        server = start_server(extra_env={"DOTFIGHT_PUSH_INSECURE_ENDPOINTS": "1"})
        page = create_page(server, preset="quick", mode="link")
        broken = Browser.at(f"{service.base}/push/broken").subscription()
        broken["keys"]["p256dh"] = OFF_THE_CURVE
        # Stored before keys were checked, and the seat's oldest: it was tried first.
        store_subscriptions(server, page["id"], "red", [broken])
        phones = [Browser.at(f"{service.base}/push/phone-{n}") for n in range(2)]
        for phone in phones:
            assert subscribe_seat(server, page, "red", phone.subscription()).status_code == 201
        make_it_reds_move(server, page)
        pushes = service.wait_for(2)
        assert sorted(push.path for push in pushes) == ["/push/phone-0", "/push/phone-1"]
        for phone, push in zip(phones, sorted(pushes, key=lambda push: push.path), strict=True):
            assert phone.read(push)["side"] == "red"
        deadline = time.monotonic() + 10
        while broken["endpoint"] in stored_endpoints(server, page["id"]) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert stored_endpoints(server, page["id"]) == [phone.endpoint for phone in phones]  # it is forgotten
        assert "Traceback" not in server.log_text()
