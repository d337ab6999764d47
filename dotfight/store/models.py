"""The tables of a page: the page itself, its seats, its append-only action log and the checkpoint of its
private state.

Only portable column types are used (strings, integers, sa.JSON, timezone-aware datetimes), so any
SQLAlchemy URL works, SQLite and PostgreSQL alike.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import JSON, DateTime, ForeignKey, Index, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column


def utc_now() -> datetime:
    """Returns the current time in UTC."""
    return datetime.now(UTC)


class Base(DeclarativeBase):
    """Declarative base of the Dotfight tables."""


class PageRow(Base):
    """One page: its rules, its secret seed and a summary of where it stands (updated by every action, so
    kept small: the private state's checkpoint lives in `PageStateRow`)."""

    __tablename__ = "pages"

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    rules: Mapped[dict[str, Any]] = mapped_column(JSON)
    preset: Mapped[str] = mapped_column(String(16))
    # The seed as 32 lowercase hex characters: secret until the page is over.
    seed: Mapped[str] = mapped_column(String(32))
    seed_sha256: Mapped[str] = mapped_column(String(64))
    mode: Mapped[str] = mapped_column(String(8))
    status: Mapped[str] = mapped_column(String(8))  # "open" | "over"
    phase: Mapped[str] = mapped_column(String(16))
    side_to_act: Mapped[str | None] = mapped_column(String(8), nullable=True)
    winner: Mapped[str | None] = mapped_column(String(8), nullable=True)
    version: Mapped[int] = mapped_column(Integer)
    # {"side", "strength", "seed"} in bot mode, else None.
    bot: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utc_now)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utc_now)
    # When the page last moved while open and still in setup, None once it is past setup or over: the
    # expiry sweeper's index is on it (expiry.py), not on `updated_at`, which every move changes. On
    # PostgreSQL a row whose indexed columns an UPDATE leaves as they were is updated in place (a HOT
    # update: no new entry in any of the table's indexes), so a move in play touches no index at all.
    setup_moved_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    # The clock as created ({"initial_s", "increment_s"} live, {"per_move_s"} link), None: no clock.
    clock: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    # The clock model's own state (opaque to the store), written with the move that changed it.
    clock_state: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    # When the running side's time ends (UTC), None: nobody's time runs. Indexed: the server's one timer
    # asks for the earliest deadlines of the pages in play.
    deadline: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True, index=True)
    # When a link page's side to act is to be reminded that a fifth of its move's time is left (UTC), None:
    # no reminder waits (sent, or the turn passed). Indexed: every process reads the earliest.
    reminder_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True, index=True)
    # On PostgreSQL, the processes that hear this page's commits (each holds a room of it), as " a b ":
    # an action is NOTIFYed only when someone other than its writer follows (migration 0012). Not
    # indexed, so writing it is a HOT update, and a move leaves it as it was.
    followers: Mapped[str | None] = mapped_column(Text, nullable=True)


class PageStateRow(Base):
    """The engine's private state of a page (`State.to_json()` as JSON text) at `version`: written when the
    page is made, then every few versions and when it ends, so a page loads by replaying a few entries
    at most. A page without one is rebuilt from its whole log."""

    __tablename__ = "page_states"

    page_id: Mapped[str] = mapped_column(ForeignKey("pages.id"), primary_key=True)
    version: Mapped[int] = mapped_column(Integer)
    # Text, not JSON: written and read with orjson by the store (8–20 KB; stdlib json costs 10× more).
    state: Mapped[str] = mapped_column(Text)


class SeatRow(Base):
    """A seat token of a page, stored only as its sha256. `side` is None for the local token (both seats)."""

    __tablename__ = "seats"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    page_id: Mapped[str] = mapped_column(ForeignKey("pages.id"), index=True)
    side: Mapped[str | None] = mapped_column(String(8), nullable=True)
    kind: Mapped[str] = mapped_column(String(8))  # "seat" | "local"
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)


class ActionRow(Base):
    """One applied action and its events. `version` is the page's version after it (1 for the first)."""

    __tablename__ = "actions"
    __table_args__ = (
        UniqueConstraint("page_id", "version", name="uq_actions_page_version"),
        UniqueConstraint("page_id", "move_id", name="uq_actions_page_move_id"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    page_id: Mapped[str] = mapped_column(ForeignKey("pages.id"))
    version: Mapped[int] = mapped_column(Integer)
    side: Mapped[str] = mapped_column(String(8))
    action: Mapped[dict[str, Any]] = mapped_column(JSON)
    events: Mapped[list[dict[str, Any]]] = mapped_column(JSON)
    move_id: Mapped[str | None] = mapped_column(String(64), nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utc_now)


class PushSubscriptionRow(Base):
    """A browser's Web Push subscription for one seat of a page: told when it becomes that seat's move."""

    __tablename__ = "push_subscriptions"
    __table_args__ = (UniqueConstraint("page_id", "side", "endpoint", name="uq_push_page_side_endpoint"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    page_id: Mapped[str] = mapped_column(ForeignKey("pages.id"), index=True)
    side: Mapped[str] = mapped_column(String(8))  # "blue" | "red"
    endpoint: Mapped[str] = mapped_column(String(1024))
    p256dh: Mapped[str] = mapped_column(String(128))
    auth: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utc_now)


class VapidKeyRow(Base):
    """The server's VAPID key pair, made once (row id 1) and kept with the pages it pushes for."""

    __tablename__ = "vapid_keys"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    private_pem: Mapped[str] = mapped_column(String(1024))
    public_key: Mapped[str] = mapped_column(String(128))  # the applicationServerKey, base64url
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utc_now)


class RematchRow(Base):
    """A page's one rematch: offered by a side until `expires_at`; once accepted, the new page's id."""

    __tablename__ = "rematches"

    page_id: Mapped[str] = mapped_column(ForeignKey("pages.id"), primary_key=True)
    offered_by: Mapped[str] = mapped_column(String(8))  # "blue" | "red"
    offered_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    # Indexed: every process reads the earliest standing offers' ends (to tell the sockets).
    expires_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), index=True)
    new_page_id: Mapped[str | None] = mapped_column(ForeignKey("pages.id"), nullable=True, unique=True)
    accepted_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    # The offering seat's new token, drawn with its offer: its sha256 (the new page's seat), and the
    # token sealed under a key of its old token (handed out again only to that token's holder). The
    # accepting seat's new token, sealed the same way. None on rows made before they were drawn.
    offered_seat: Mapped[str | None] = mapped_column(String(64), nullable=True)
    offered_seal: Mapped[str | None] = mapped_column(String(128), nullable=True)
    accepted_seal: Mapped[str | None] = mapped_column(String(128), nullable=True)


class PhraseRow(Base):
    """A phrase said on a page: by which side, when, and at which version of the page."""

    __tablename__ = "phrases"
    __table_args__ = (Index("ix_phrases_page_side", "page_id", "side"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    page_id: Mapped[str] = mapped_column(ForeignKey("pages.id"))
    side: Mapped[str] = mapped_column(String(8))
    phrase: Mapped[str] = mapped_column(String(32))
    at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    version: Mapped[int] = mapped_column(Integer)


class ServerBeatRow(Base):
    """A server process's heartbeat: the last moment it was up, so a later start knows how long the
    server was down (and the clocks are not charged for it)."""

    __tablename__ = "server_beats"

    process_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    started_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    beat_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), index=True)


# Imported with the models so that the tombstone table of expired pages is part of `Base.metadata`
# wherever the models are (the schema comparison of the migrations sees every table). At the end: it
# subclasses `Base`.
from dotfight.store import expiry as expiry  # noqa: E402
