"""deploy/compose.yaml (issue 11, item 7) read without Docker: PostgreSQL, two `dotfight` instances on
it, and nginx in front whose upstreams are exactly those instances, with the WebSocket upgrade, and
(issue 22, item 1) page affinity: every path naming a page goes to the upstream hashed by its id, every
other path to the balanced one. The behaviour of that topology (two processes on one PostgreSQL
database) is tested for real in tests/store/test_many_processes.py, and behind a real nginx configured
from this recipe in tests/server/test_proxy_affinity.py."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

from dotfight.store.database import make_engine
from tests.support.nginx_proxy import block_body, local_config, page_paths, statements

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"


def compose() -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load((DEPLOY / "compose.yaml").read_text())
    return loaded


def nginx_conf() -> str:
    return (DEPLOY / "nginx.conf").read_text()


def instances() -> dict[str, dict[str, Any]]:
    services = compose()["services"]
    return {
        name: service for name, service in services.items() if service.get("command", [None])[0] == "dotfight"
    }


def option(command: list[str], name: str) -> str:
    return command[command.index(name) + 1]


def test_the_stack_is_postgresql_two_dotfight_instances_and_a_proxy() -> None:
    services = compose()["services"]
    assert set(services) == {"postgres", "proxy", "dotfight-1", "dotfight-2"}
    assert services["postgres"]["image"].startswith("postgres:")
    assert services["proxy"]["image"].startswith("nginx:")
    assert set(instances()) == {"dotfight-1", "dotfight-2"}


def test_every_instance_serves_from_the_one_postgresql_database_once_it_is_healthy() -> None:
    database = compose()["services"]["postgres"]["environment"]
    urls = set()
    for name, service in instances().items():
        assert service["command"][:2] == ["dotfight", "serve"], name
        url = service["environment"]["DOTFIGHT_DATABASE_URL"]
        urls.add(url)
        # The URL is one the server's own engine factory takes, naming the compose service and database.
        engine = make_engine(url.replace("${POSTGRES_PASSWORD:-dotfight}", "secret"))
        try:
            assert engine.dialect.name == "postgresql"
            assert (engine.url.host, engine.url.port, engine.url.database) == (
                "postgres",
                5432,
                database["POSTGRES_DB"],
            )
            assert engine.url.username == database["POSTGRES_USER"]
        finally:
            engine.dispose()
        assert service["depends_on"]["postgres"]["condition"] == "service_healthy", name
        assert service["environment"]["DOTFIGHT_PUBLIC_URL"].startswith("https://"), name
    assert len(urls) == 1


def upstreams() -> dict[str, list[str]]:
    """The recipe's upstream blocks: name -> their statements."""
    return {
        statement.split()[1]: statements(block_body(statement))
        for statement in statements(nginx_conf())
        if statement.startswith("upstream ")
    }


def tls_server() -> list[str]:
    """The statements of the recipe's TLS server (the one serving the app)."""
    for statement in statements(nginx_conf()):
        inner = statements(block_body(statement)) if statement.startswith("server ") else []
        if "listen 443 ssl;" in inner:
            return inner
    raise AssertionError("no TLS server in deploy/nginx.conf")


def locations() -> dict[str, str]:
    """The TLS server's locations: their match ("= /api/pages", "~ ^/…$", "/") -> the upstream they
    pass to."""
    found = {}
    for statement in tls_server():
        if statement.startswith("location "):
            match = statement.removeprefix("location ").split(" {")[0]
            target = re.search(r"proxy_pass http://(\w+);", statement)
            assert target is not None, statement
            found[match] = target.group(1)
    return found


def test_the_proxy_upstreams_are_exactly_the_instances_and_they_trust_only_it() -> None:
    listening = []
    for name, service in instances().items():
        # On the proxy's own loopback: the same nginx.conf serves with or without containers.
        assert service["network_mode"] == "service:proxy", name
        command = service["command"]
        listening.append((option(command, "--host"), option(command, "--port")))
        assert option(command, "--forwarded-allow-ips") == option(command, "--host") == "127.0.0.1"
    assert len(set(listening)) == 2
    blocks = upstreams()
    assert set(blocks) == {"dotfight", "dotfight_page"}
    for name, block in blocks.items():
        servers = [line for line in block if line.startswith("server ")]
        addresses = [tuple(line.split()[1].split(":")) for line in servers]
        assert sorted(addresses) == sorted(listening), name
        # Passive health on every line: one refused connection leaves an instance alone for a while.
        assert all("max_fails=1 fail_timeout=10s;" in line for line in servers), name


def test_pages_are_hashed_by_id_and_the_rest_balanced() -> None:
    blocks = upstreams()
    assert blocks["dotfight"][0] == "least_conn;"
    assert blocks["dotfight_page"][0] == "hash $dotfight_page consistent;"
    # nginx wants the balancing method before keepalive.
    assert all(block[-1].startswith("keepalive ") for block in blocks.values())
    assert locations() == {
        "= /api/pages": "dotfight",  # creation and the exercise book's summaries: no page named
        "~ ^/api/pages/[A-Za-z0-9_-]+/ws$": "dotfight_page",
        "/api/pages/": "dotfight_page",
        "/p/": "dotfight_page",
        "/": "dotfight",
    }


def page_key_patterns() -> list[re.Pattern[str]]:
    """The map's regexes that give $dotfight_page, in Python's spelling of a named group."""
    (page_map,) = [s for s in statements(nginx_conf()) if s.startswith("map $uri $dotfight_page ")]
    entries = statements(block_body(page_map))
    assert entries[0] == 'default "";'
    patterns = []
    for entry in entries[1:]:
        quoted, value = re.fullmatch(r'"~(.*)" (\S+);', entry).groups()  # type: ignore[union-attr]
        assert value == "$page", entry
        patterns.append(re.compile(quoted.replace("(?<", "(?P<")))
    return patterns


def page_key(path: str) -> str:
    """What the recipe's map makes of a path ($uri): the page id, or "" (first matching regex wins)."""
    for pattern in page_key_patterns():
        match = pattern.search(path)
        if match:
            return match.group("page")
    return ""


def test_every_route_naming_a_page_is_keyed_by_its_id_and_no_other_path_is() -> None:
    page_id = "Ab-3_xYz9"
    paths = {path for _, path in page_paths(page_id)}
    assert len(paths) >= 9  # the snapshot, log, actions, socket, push, two pictures, the card, the link
    for path in paths:
        assert page_key(path) == page_id, path
        # And the location serving it passes it to the hashed upstream.
        assert path.startswith(("/api/pages/", "/p/")), path
    for path in ("/", "/index.html", "/js/app.js", "/api/pages", "/api/health", "/api/push/key"):
        assert page_key(path) == "", path


def test_a_connection_that_failed_is_tried_elsewhere_but_no_answered_request_is_resent() -> None:
    server = tls_server()
    assert "proxy_next_upstream error timeout;" in server  # not non_idempotent, not http_5xx
    assert "proxy_next_upstream_tries 2;" in server
    assert "proxy_connect_timeout 5s;" in server


def test_the_local_config_keeps_every_statement_of_the_recipe_but_the_hosts(tmp_path: Path) -> None:
    """tests/server/test_proxy_affinity.py and benchmarks/server.py --proxy run the recipe's own
    routing and limits: only the listener, the host's name, TLS and the upstream addresses differ."""
    rendered = local_config(["127.0.0.1:9000", "127.0.0.1:9001"], 9100, tmp_path)
    (http,) = [s for s in statements(rendered) if s.startswith("http ")]
    inner = statements(block_body(http))
    (server,) = [s for s in inner if s.startswith("server ")]
    kept = statements(block_body(server))
    assert kept[0] == "listen 127.0.0.1:9100;"
    host_only = ("listen", "server_name", "http2", "ssl_")
    assert kept[1:] == [line for line in tls_server() if not line.startswith(host_only)]
    recipe_http = [s for s in statements(nginx_conf()) if not s.startswith(("server ", "upstream "))]
    assert all(statement in inner for statement in recipe_http)
    for block in (s for s in inner if s.startswith("upstream ")):
        servers = [line for line in statements(block_body(block)) if line.startswith("server ")]
        assert servers == [
            "server 127.0.0.1:9000 max_fails=1 fail_timeout=10s;",
            "server 127.0.0.1:9001 max_fails=1 fail_timeout=10s;",
        ]


def test_the_proxy_mounts_nginx_conf_publishes_http_and_https_and_upgrades_websockets() -> None:
    proxy = compose()["services"]["proxy"]
    assert "./nginx.conf:/etc/nginx/conf.d/default.conf:ro" in proxy["volumes"]
    assert {"80:80", "443:443"} <= set(proxy["ports"])
    conf = nginx_conf()
    socket = re.search(r"location ~ \^/api/pages/.*?/ws\$ \{(.*?)\}", conf, re.DOTALL)
    assert socket is not None and "proxy_pass http://dotfight_page;" in socket.group(1)
    assert "proxy_set_header Upgrade $http_upgrade;" in conf
    assert "proxy_set_header Connection $connection_upgrade;" in conf
    assert "proxy_http_version 1.1;" in conf
