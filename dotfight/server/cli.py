"""`dotfight serve`: runs the server with uvicorn (WebSocket frames capped, proxy headers trusted)."""

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
        help="proxies trusted for X-Forwarded-* headers (default: $FORWARDED_ALLOW_IPS or 127.0.0.1)",
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

    overrides = {"database_url": args.database_url} if args.database_url else {}
    settings = Settings(**overrides)
    # Seat tokens never travel in paths or query strings (headers, URL fragments and WebSocket
    # messages only), so the access log cannot hold one.
    uvicorn.run(
        create_app(settings),
        host=args.host,
        port=args.port,
        ws_max_size=settings.ws_max_message_bytes,
        # Messages are small JSON; compressing each one costs more CPU than the bytes it saves.
        ws_per_message_deflate=False,
        proxy_headers=True,
        forwarded_allow_ips=args.forwarded_allow_ips or os.environ.get("FORWARDED_ALLOW_IPS", "127.0.0.1"),
        access_log=not args.no_access_log,
        log_level=args.log_level,
    )
    return 0
