"""Issue 18, item 2: a Web Push endpoint cannot aim the server at its own network. Every spelling of a
loopback or other non-public address is refused when subscribing (400 `bad_request`, nothing stored) and
again at delivery (a subscription stored before the check is never posted to, and is forgotten); and a
push service answering a redirect is never followed, even with DOTFIGHT_PUSH_INSECURE_ENDPOINTS."""

from __future__ import annotations

import time

import httpx

from tests.hostile.conftest import StartServer
from tests.support.page_client import create_page
from tests.support.push_service import (
    Browser,
    make_it_reds_move,
    push_service_on_loopback,
    silent_service_on_loopback,
    store_subscriptions,
    stored_endpoints,
    subscribe_seat,
)

# Hosts that are this machine (or unspecified, which connects here) in spellings the socket layer
# reads: short, hexadecimal, octal and decimal IPv4, trailing dots, IPv6 and IPv4-mapped IPv6.
LOOPBACK_HOSTS = (
    "127.1",
    "0x7f.0.0.1",
    "0177.0.0.1",
    "127.0.1",
    "0.0",
    "0",
    "2130706433",
    "0x7f000001",
    "127.0.0.1.",
    "127.1.",
    "localhost",
    "localhost.",
    "LocalHost",
    "app.localhost",
    "[::1]",
    "[::ffff:127.0.0.1]",
    "[::ffff:7f00:1]",
    "[0:0:0:0:0:ffff:127.0.0.1]",
    "[::127.0.0.1]",
    "[64:ff9b::7f00:1]",
    "[2002:7f00:1::]",
    "[::]",
)
# Refused for their shape, before any lookup (never stored, so never posted to on any server).
BAD_SHAPES = (
    "https://[zz]/x",  # was a 500 (urlsplit raised)
    "https://[::1/x",
    "https://push.example.com:99999/x",
    "https://push.example.com:443x/x",
    "https://user:secret@127.0.0.1/x",
    "https://fcm.googleapis.com@127.0.0.1/x",
    "https://169.254.169.254/latest/meta-data/iam",
    "https://[fe80::1%25eth0]/x",
    "https://10.0.0.1/x",
    "https://metadata/x",
    "https://metadata.google.internal/x",
    "https://printer.local/x",
    "https://push.example/x",
    "https://fcm.googleapis.com:8443/fcm/send/x",  # port 443 only
    "ftp://fcm.googleapis.com/x",
    "https:///x",
    "https://fcm.googleapis.com\t/x",
    "https://%31%32%37.0.0.1/x",  # escapes another URL parser might undo
    "https://%6c%6f%63%61%6c%68%6f%73%74.com/x",
)


def refused_everywhere(answer: httpx.Response) -> None:
    """Checks a refusal of an endpoint: 400 in the JSON error shape, saying what was wrong."""
    assert answer.status_code == 400, answer.text
    error = answer.json()["error"]
    assert error["code"] == "bad_request" and "push endpoint" in error["message"], error


def test_every_spelling_of_the_servers_own_network_is_refused_and_never_posted_to(
    start_server: StartServer,
) -> None:
    with silent_service_on_loopback() as listener:
        port = int(listener.base.rsplit(":", 1)[1])
        server = start_server(extra_env={"DOTFIGHT_HTTP_REQUEST_BURST": "1000"})
        page = create_page(server, preset="quick", mode="link")
        endpoints = [
            f"{scheme}://{host}:{port}/push" for host in LOOPBACK_HOSTS for scheme in ("https", "http")
        ]
        endpoints += [f"https://{host}/push" for host in LOOPBACK_HOSTS]
        for endpoint in [*endpoints, *BAD_SHAPES]:
            refused_everywhere(subscribe_seat(server, page, "red", Browser.at(endpoint).subscription()))
        assert stored_endpoints(server, page["id"]) == []

        # The same endpoints in an older database (stored before the check): at delivery each is
        # checked again, refused, never connected to, and forgotten.
        stored = [f"https://{host}:{port}/push" for host in LOOPBACK_HOSTS]
        stored += [f"http://{host}:{port}/push" for host in LOOPBACK_HOSTS]
        store_subscriptions(server, page["id"], "red", [Browser.at(url).subscription() for url in stored])
        make_it_reds_move(server, page)
        deadline = time.monotonic() + 10
        while stored_endpoints(server, page["id"]) and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.3)  # a connection under way would have been taken by now
        assert listener.connections == [], f"{len(listener.connections)} connections to the server's own host"
        assert stored_endpoints(server, page["id"]) == []
        assert server.http.get("/api/health").status_code == 200


def test_a_redirect_from_a_push_service_is_never_followed(start_server: StartServer) -> None:
    with push_service_on_loopback() as attacker, push_service_on_loopback() as inside:
        attacker.redirect_to = f"{inside.base}/latest/meta-data/iam"
        # The one switch that lets the tests reach a listener on loopback; it lifts no redirect rule.
        server = start_server(extra_env={"DOTFIGHT_PUSH_INSECURE_ENDPOINTS": "1"})
        page = create_page(server, preset="quick", mode="link")
        red = Browser.at(f"{attacker.base}/redirect/red")
        assert subscribe_seat(server, page, "red", red.subscription()).status_code == 201
        make_it_reds_move(server, page)
        [push] = attacker.wait_for(1)
        assert push.path == "/redirect/red"
        time.sleep(0.5)  # a followed redirect would have arrived by now
        assert inside.received == [], "the server followed the push service's redirect"
