"""Server settings, read from the environment with the prefix DOTFIGHT_ (e.g. DOTFIGHT_DATABASE_URL)."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from dotfight.store.database import DEFAULT_BUSY_TIMEOUT_S
from dotfight.store.leases import DEFAULT_LEASE_S
from dotfight.store.migrations import DEFAULT_SCRIPT_LOCATION

# The repository root: web/ and alembic/ live next to the package in a source checkout (and an editable
# install); a built wheel carries the web app inside the package as dotfight/_web (see setup.py).
REPO_ROOT = Path(__file__).resolve().parents[2]
PACKAGED_WEB = Path(__file__).resolve().parents[1] / "_web"
DEFAULT_WEB_DIR = PACKAGED_WEB if (PACKAGED_WEB / "index.html").is_file() else REPO_ROOT / "web"


class Settings(BaseSettings):
    """Everything the server can be told; defaults suit one machine serving an SQLite file."""

    model_config = SettingsConfigDict(env_prefix="DOTFIGHT_", extra="ignore")

    database_url: str = "sqlite:///./dotfight.sqlite3"
    web_dir: Path = DEFAULT_WEB_DIR
    alembic_dir: Path = DEFAULT_SCRIPT_LOCATION
    # Links are built on this base (e.g. "https://dotfight.example"); by default on the request's own.
    public_url: str | None = None
    # Browser origins allowed besides the server's own host (WebSocket handshakes and CORS).
    allowed_origins: list[str] = Field(default_factory=list)

    max_body_bytes: int = Field(default=8192, gt=0)
    ws_max_message_bytes: int = Field(default=8192, gt=0)
    # Seconds a new WebSocket has to say a valid hello before it is closed (1008).
    ws_hello_timeout: float = Field(default=10.0, gt=0)
    # Per WebSocket connection: a token bucket of this rate and burst; exceeding it closes with 1008.
    ws_messages_per_second: float = Field(default=20.0, gt=0)
    ws_message_burst: int = Field(default=40, gt=0)
    # Frames a slow client may leave unread before it is dropped (it can resume from its version).
    ws_send_queue: int = Field(default=256, gt=0)
    # Per client address, on the HTTP requests that change something (POST).
    http_requests_per_second: float = Field(default=30.0, gt=0)
    http_request_burst: int = Field(default=120, gt=0)
    max_summary_ids: int = Field(default=50, gt=0)
    # Pages whose latest engine state is kept in memory.
    state_cache_pages: int = Field(default=4096, gt=0)

    # --- Transport, browser headers, sockets and page lifetime (hardening, docs/SERVER.md "Limits").
    # Every cap below holds per server process.
    # Proxies whose X-Forwarded-For / X-Forwarded-Proto are believed (comma-separated addresses or
    # networks, "*" for any); empty trusts nobody, so a client cannot forge its address.
    forwarded_allow_ips: str = ""
    # HTTP implementation under uvicorn: "httptools" (fast, the default when installed) or "h11".
    http_implementation: str = Field(default="auto", pattern="^(auto|httptools|h11)$")
    # A request head (request line and headers) larger than this is refused with 431.
    http_max_head_bytes: int = Field(default=16384, ge=1024)
    # Seconds a connection has to send a whole request head (from connecting, or from the head's first
    # byte on a kept-alive connection); then 408 (or a silent close if nothing came).
    http_head_timeout: float = Field(default=10.0, gt=0)
    # Seconds a request has to send its whole body once its head is in (nginx's client_body_timeout,
    # Apache's RequestReadTimeout body=); then 408, or a plain close once an answer has begun.
    http_body_timeout: float = Field(default=10.0, gt=0)
    # Open HTTP connections from one TCP peer (its address); a connection beyond it is answered 429
    # `too_many_sockets` and closed at once. Peers in forwarded_allow_ips are not capped (behind a proxy
    # every peer is the proxy, which limits its clients itself). A WebSocket leaves this count when it is
    # upgraded: the sockets per address are ws_max_sockets_per_address's to cap.
    http_max_connections_per_peer: int = Field(default=500, gt=0)
    # Seconds an idle kept-alive connection stays open between requests.
    http_keep_alive_timeout: int = Field(default=5, gt=0)
    # Open connections (HTTP and WebSocket) plus running requests; beyond it requests get 503.
    max_connections: int = Field(default=4096, gt=0)
    # WebSockets on one page, and from one client address; beyond them a socket is closed with 4429.
    ws_max_sockets_per_page: int = Field(default=500, gt=0)
    ws_max_sockets_per_address: int = Field(default=500, gt=0)
    # Seconds presence changes are gathered before they are sent (one message for a burst of joins).
    ws_presence_delay: float = Field(default=0.05, ge=0)
    # Pages one client address may create: a sustained rate per minute and a burst.
    page_creations_per_minute: float = Field(default=1.0, gt=0)
    page_creation_burst: int = Field(default=20, gt=0)
    # Rematches one client address may make or offer (outside the creation limit, issue 19): a rematch of
    # a rematch is a page too, so a chain of them is held to its own, more generous, rate.
    rematches_per_minute: float = Field(default=4.0, gt=0)
    rematch_burst: int = Field(default=20, gt=0)
    # A page never played past setup (bases, positioning) expires this many days after its last action;
    # its link then answers 410 page_expired. Pages in play or over are kept.
    page_setup_ttl_days: float = Field(default=30.0, gt=0)
    # Seconds between sweeps for expired pages.
    page_expiry_sweep_seconds: float = Field(default=3600.0, gt=0)
    # --- Clocks (issue 19). Seconds between a process's heartbeats: a stretch of 2.5 beats with no
    # process beating is downtime, credited to every running clock (heartbeat.py).
    heartbeat_s: float = Field(default=1.0, gt=0, le=60)
    # Seconds between reads of the earliest deadlines (timeouts.py: ends the pages whose watching
    # process died, within this plus the lag cap of the deadline).
    time_out_poll_s: float = Field(default=2.0, gt=0, le=60)
    # --- Work, budgets and the database (issue 9, harden-a). Every cap is per server process: with
    # several processes (or uvicorn workers) each has its own, so the whole server allows N times it.
    # Threads reading the database (snapshots, logs, seats); SQLite in WAL lets readers run side by side.
    # Every write goes through the one writer thread of store/writer.py.
    db_threads: int = Field(default=4, gt=0)
    # Threads checking and applying actions with the engine (off the writer and the event loop, so one
    # page's expensive move holds up only its own page).
    engine_threads: int = Field(default=4, gt=0)
    # Pages whose rules are outside the limits of new pages (stored before a limit existed; their moves
    # may be expensive) are played in this many engine worker processes, started when first needed; a
    # move not back within the timeout is answered `unavailable` (the worker is replaced).
    engine_processes: int = Field(default=1, gt=0)
    engine_timeout_s: float = Field(default=120.0, gt=0)
    # Seconds a write waits for the database's write lock (SQLite's busy timeout; PostgreSQL's
    # lock_timeout) before the action is answered `unavailable`.
    db_busy_timeout_s: float = Field(default=DEFAULT_BUSY_TIMEOUT_S, gt=0)
    # SQLite: writes are refused (`unavailable`, and health says so) while the database's disk has less
    # free space than this, so a full disk is reported before SQLite fails half-way.
    db_min_free_bytes: int = Field(default=64 * 1024**2, ge=0)
    # Dawood-bot thinks in this many worker processes (never in the server's own); 0: no bot here,
    # bot pages are refused with mode_unavailable.
    bot_processes: int = Field(default=1, ge=0)
    # Seconds of thinking per decision; then the bot plays the best move it has found.
    bot_budget_s: float = Field(default=2.0, gt=0)
    # A decision not back this long after it was asked for is given up (the worker is replaced).
    bot_timeout_s: float = Field(default=60.0, gt=0)
    # Longest wait between the bot's retries while the database is unavailable.
    bot_retry_max_s: float = Field(default=10.0, gt=0)
    # Seconds a process's lease on a bot page lasts unless renewed (every third of it): with several
    # processes on one database, a dead process's bot pages are taken over by another after about this.
    bot_lease_s: float = Field(default=DEFAULT_LEASE_S, gt=0)
    # Actions (WebSocket and HTTP together, refused ones too) per seat of a page and per client address:
    # a token bucket of this rate and burst each; over it, `rate_limited`. Benchmarks raise the address cap.
    actions_per_page_per_second: float = Field(default=10.0, gt=0)
    actions_per_page_burst: int = Field(default=60, gt=0)
    actions_per_address_per_second: float = Field(default=50.0, gt=0)
    actions_per_address_burst: int = Field(default=500, gt=0)
    # GET /api/pages/{id}/log answers this many entries when no `limit` is given, and never more than
    # the maximum (a larger `limit` is cut to it; `next` says where to go on).
    log_page_default: int = Field(default=500, gt=0)
    log_page_max: int = Field(default=2000, gt=0)
    # --- The page's pictures (issue 18). Drawn in this many worker processes (started at the first
    # picture, at a lower priority than the server), each in at most `picture_timeout_s` (then the
    # worker is replaced and the answer is 503 `unavailable`). An SVG over `picture_max_bytes` is not
    # made (503). Both refusals are remembered for that page and version.
    picture_processes: int = Field(default=1, gt=0)
    picture_timeout_s: float = Field(default=20.0, gt=0)
    picture_max_bytes: int = Field(default=4 * 1024**2, gt=0)
    # Bytes of pictures kept in memory (gzipped SVGs and PNGs), least recently used forgotten first.
    picture_cache_bytes: int = Field(default=32 * 1024**2, ge=0)
    # Picture GETs (SVG and PNG, 304s too) per client address: a token bucket of this rate and burst;
    # over it, 429 `rate_limited`. Tests whose clients share one address lift it.
    pictures_per_address_per_second: float = Field(default=2.0, gt=0)
    picture_burst: int = Field(default=20, gt=0)
    # --- Pages between two people (issue 19). Seconds the side to act of a live page must have been
    # without a socket on it (counted from the later of the turn passing to it and its last socket
    # closing) before the other side may claim the win (`claim`, which writes `abandon`).
    live_absence_grace_s: float = Field(default=60.0, ge=1.0, le=3600.0)


class PushSettings(BaseSettings):
    """Web Push settings (docs/SERVER.md "Web Push"), from the environment with the prefix DOTFIGHT_PUSH_."""

    model_config = SettingsConfigDict(env_prefix="DOTFIGHT_PUSH_", extra="ignore")

    # The VAPID contact (`mailto:` or `https:`); default: the public URL when it is https.
    subject: str | None = None
    # Seconds a push service keeps an undelivered push (a phone that is off for a while still hears).
    ttl: int = Field(default=86_400, ge=0)
    # Subscriptions kept per seat (a player's phone and laptop); the oldest goes first.
    per_seat: int = Field(default=5, gt=0)
    # Seconds to resolve a push service's host, and seconds to connect to it (TLS included).
    connect_timeout: float = Field(default=3.0, gt=0)
    # Seconds one push may take in all, from resolving the host to the push service's status.
    timeout: float = Field(default=5.0, gt=0)
    # Pushes posted at once by this process, and to one seat's endpoints at once: a seat whose push
    # services are slow or silent holds at most its share, never everybody's.
    concurrency: int = Field(default=64, gt=0)
    seat_concurrency: int = Field(default=2, gt=0)
    # An endpoint that leaves this many pushes in a row unanswered (unresolvable, unreachable, past a
    # deadline) is forgotten, as one its push service says is gone (404, 410).
    drop_after: int = Field(default=3, gt=0)
    # Push-service hosts the server posts to (JSON list; "*.example.com" allows its subdomains); empty:
    # any public host. E.g. ["fcm.googleapis.com", "*.push.services.mozilla.com", "*.notify.windows.com",
    # "web.push.apple.com"].
    allowed_hosts: list[str] = Field(default_factory=list)
    # Lets endpoints be plain http, on any port, at loopback addresses (tests stand in for the push
    # service there); never in production. Redirects are never followed, with it or without.
    insecure_endpoints: bool = False
