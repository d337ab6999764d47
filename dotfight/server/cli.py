"""`dotfight serve`: runs the server with uvicorn, with the transport limits of docs/SERVER.md
(request heads bounded and timed, keep-alive and connections capped, WebSocket frames capped) and proxy
headers believed only from the proxies configured."""

from __future__ import annotations

import argparse
import os

import uvicorn


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


def run(args: argparse.Namespace) -> int:
    """Serves the app until interrupted; returns the exit status."""
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
    trusted = settings.forwarded_allow_ips.strip()
    # Seat tokens never travel in paths or query strings (headers, URL fragments and WebSocket
    # messages only), so the access log cannot hold one.
    uvicorn.run(
        create_app(settings),
        host=args.host,
        port=args.port,
        ws_max_size=settings.ws_max_message_bytes,
        # Messages are small JSON; compressing each one costs more CPU than the bytes it saves.
        ws_per_message_deflate=False,
        # Nobody is trusted unless configured: a forged X-Forwarded-For must not buy a fresh rate limit.
        proxy_headers=bool(trusted),
        forwarded_allow_ips=trusted or "",
        http=guarded_protocol(settings),
        h11_max_incomplete_event_size=settings.http_max_head_bytes,
        timeout_keep_alive=settings.http_keep_alive_timeout,
        limit_concurrency=settings.max_connections,
        access_log=not args.no_access_log,
        log_level=args.log_level,
    )
    return 0
