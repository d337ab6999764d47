"""`dotfight serve`: runs the server with uvicorn, with the transport limits of docs/SERVER.md
(request heads bounded and timed, keep-alive and connections capped, WebSocket frames capped) and proxy
headers believed only from the proxies configured; in one process or, on PostgreSQL, in several worker
processes sharing the port (`--workers N`, uvicorn's own)."""

from __future__ import annotations

import argparse
import copy
import os
import sys
from typing import Any

import uvicorn
from uvicorn.config import LOGGING_CONFIG

# What each worker process imports (workers cannot be handed objects): the app factory, and the HTTP
# protocol with the transport guards (this module's `__getattr__`), both built from the environment.
APP_FACTORY = "dotfight.server.app:create_app"
WORKER_HTTP = "dotfight.server.cli:WorkerHttpProtocol"
# uvicorn's WebSocket protocol, leaner per open socket (dotfight.server.transport); by name, for workers too.
LEAN_WS = "dotfight.server.transport:LeanWebSocketProtocol"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Adds the options of `dotfight serve`."""
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8000, help="port to listen on (default 8000)")
    parser.add_argument(
        "--database-url",
        default=None,
        help="SQLAlchemy URL of the database (default: $DOTFIGHT_DATABASE_URL or ./dotfight.sqlite3)",
    )
    parser.add_argument(
        "--workers",
        type=int,
        default=1,
        help="worker processes sharing the port (default 1); more than one needs PostgreSQL",
    )
    parser.add_argument(
        "--forwarded-allow-ips",
        default=None,
        help="proxies whose X-Forwarded-For/-Proto are believed, comma-separated ('*': any); default"
        " $DOTFIGHT_FORWARDED_ALLOW_IPS or $FORWARDED_ALLOW_IPS, else nobody",
    )
    parser.add_argument(
        "--http",
        choices=["auto", "httptools", "h11"],
        default=None,
        help="HTTP implementation (default: $DOTFIGHT_HTTP_IMPLEMENTATION or auto, i.e. httptools)",
    )
    parser.add_argument(
        "--log-level", default="info", choices=["critical", "error", "warning", "info", "debug"]
    )
    parser.add_argument("--no-access-log", action="store_true", help="do not log each request")


def workers_refusal(workers: int, database_url: str) -> str | None:
    """Says why `--workers` cannot be used with this database, or None.

    >>> workers_refusal(2, "postgresql+psycopg://dotfight@db/dotfight") is None
    True
    >>> print(workers_refusal(2, "sqlite:///./dotfight.sqlite3"))
    --workers 2 needs PostgreSQL: ...
    """
    if workers < 1:
        return f"--workers {workers}: at least one worker is needed"
    if workers > 1 and database_url.startswith("sqlite"):
        return (
            f"--workers {workers} needs PostgreSQL: on SQLite a move reaches only the sockets of the process "
            "that applied it, so live play needs one process. Set DOTFIGHT_DATABASE_URL (or --database-url) "
            "to a postgresql+psycopg:// URL, or serve with one worker."
        )
    return None


def log_config(level: str) -> dict[str, Any]:
    """uvicorn's logging plus the server's own loggers (`dotfight.*`) at `level` on stderr (uvicorn applies
    it in every worker process too)."""
    config = copy.deepcopy(LOGGING_CONFIG)
    config["loggers"]["dotfight"] = {"handlers": ["default"], "level": level.upper(), "propagate": False}
    return config


def __getattr__(name: str) -> Any:
    """`WorkerHttpProtocol`: the guarded HTTP protocol of a worker process, from its own settings."""
    if name == "WorkerHttpProtocol":
        from dotfight.server.settings import Settings
        from dotfight.server.transport import guarded_protocol

        return guarded_protocol(Settings())
    raise AttributeError(name)


def run(args: argparse.Namespace) -> int:
    """Serves the app until interrupted; returns the exit status (2 for options that cannot be served)."""
    # Imported here so that `dotfight --help` stays quick.
    from dotfight.server.app import create_app
    from dotfight.server.settings import Settings
    from dotfight.server.transport import guarded_protocol

    overrides: dict[str, object] = {}
    if args.database_url:
        overrides["database_url"] = args.database_url
    if args.forwarded_allow_ips is not None:
        overrides["forwarded_allow_ips"] = args.forwarded_allow_ips
    elif "DOTFIGHT_FORWARDED_ALLOW_IPS" not in os.environ and "FORWARDED_ALLOW_IPS" in os.environ:
        overrides["forwarded_allow_ips"] = os.environ["FORWARDED_ALLOW_IPS"]  # uvicorn's own variable
    if args.http:
        overrides["http_implementation"] = args.http
    settings = Settings(**overrides)  # type: ignore[arg-type]
    refusal = workers_refusal(args.workers, settings.database_url)
    if refusal is not None:
        print(f"dotfight serve: {refusal}", file=sys.stderr)
        return 2
    trusted = settings.forwarded_allow_ips.strip()
    # Seat tokens never travel in paths or query strings (headers, URL fragments and WebSocket
    # messages only), so the access log cannot hold one.
    options: dict[str, Any] = {
        "host": args.host,
        "port": args.port,
        "ws": LEAN_WS,
        "ws_max_size": settings.ws_max_message_bytes,
        # Messages are small JSON; compressing each one costs more CPU than the bytes it saves.
        "ws_per_message_deflate": False,
        # Nobody is trusted unless configured: a forged X-Forwarded-For must not buy a fresh rate limit.
        "proxy_headers": bool(trusted),
        "forwarded_allow_ips": trusted or "",
        "h11_max_incomplete_event_size": settings.http_max_head_bytes,
        "timeout_keep_alive": settings.http_keep_alive_timeout,
        "limit_concurrency": settings.max_connections,
        "access_log": not args.no_access_log,
        "log_level": args.log_level,
        "log_config": log_config(args.log_level),
    }
    if args.workers == 1:
        uvicorn.run(create_app(settings), http=guarded_protocol(settings), **options)
        return 0
    # Each worker builds its app and protocol from the environment: what was chosen here goes there.
    for name, value in overrides.items():
        os.environ[f"DOTFIGHT_{name.upper()}"] = str(value)
    uvicorn.run(APP_FACTORY, factory=True, workers=args.workers, http=WORKER_HTTP, **options)
    return 0
