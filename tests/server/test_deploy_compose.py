"""deploy/compose.yaml (issue 11, item 7) read without Docker: PostgreSQL, two `dotfight` instances on
it, and nginx in front whose upstreams are exactly those instances, with the WebSocket upgrade. The
behaviour of that topology (two processes on one PostgreSQL database) is tested for real in
tests/store/test_many_processes.py."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

from dotfight.store.database import make_engine

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


def test_the_proxy_upstreams_are_exactly_the_instances_and_they_trust_only_it() -> None:
    conf = nginx_conf()
    upstream = re.search(r"upstream dotfight \{(.*?)\}", conf, re.DOTALL)
    assert upstream is not None
    servers = re.findall(r"^\s*server\s+([\d.]+):(\d+)", upstream.group(1), re.MULTILINE)
    listening = []
    for name, service in instances().items():
        # On the proxy's own loopback: the same nginx.conf serves with or without containers.
        assert service["network_mode"] == "service:proxy", name
        command = service["command"]
        listening.append((option(command, "--host"), option(command, "--port")))
        assert option(command, "--forwarded-allow-ips") == option(command, "--host") == "127.0.0.1"
    assert sorted(servers) == sorted(listening)
    assert len(set(listening)) == 2


def test_the_proxy_mounts_nginx_conf_publishes_http_and_https_and_upgrades_websockets() -> None:
    proxy = compose()["services"]["proxy"]
    assert "./nginx.conf:/etc/nginx/conf.d/default.conf:ro" in proxy["volumes"]
    assert {"80:80", "443:443"} <= set(proxy["ports"])
    conf = nginx_conf()
    socket = re.search(r"location ~ \^/api/pages/.*?/ws\$ \{(.*?)\}", conf, re.DOTALL)
    assert socket is not None and "proxy_pass http://dotfight;" in socket.group(1)
    assert "proxy_set_header Upgrade $http_upgrade;" in conf
    assert "proxy_set_header Connection $connection_upgrade;" in conf
    assert "proxy_http_version 1.1;" in conf
