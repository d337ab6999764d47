"""A rematch's new seat tokens are drawn at random and kept hashed and sealed (issue 19, item 5): nothing
in the database gives them (the same database and the same requests make other tokens; no stored value
is one, nor is one worked out from the old seats' hashes as before), each player still gets only their
own through their own old token, and an offer kept before the seals (migration 0009) still makes a
rematch whose offering seat has its derived token."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient
from sqlalchemy import inspect, select, text, update

from dotfight.server import tokens
from dotfight.server.app import create_app
from dotfight.server.offers import legacy_rematch_token
from dotfight.server.settings import Settings
from dotfight.store.database import make_engine
from dotfight.store.models import RematchRow
from tests.server.test_people_offers import answered, finished_page, page_of, rematch


def rematch_tokens(settings: Settings, page: dict[str, Any]) -> dict[str, str]:
    """Red offers, blue accepts; answers each old seat's new token, as its own GET gives it."""
    with TestClient(create_app(settings)) as client:
        answered(rematch(client, page, "POST", "red"))
        answered(rematch(client, page, "POST", "blue"))
        mine = {side: answered(rematch(client, page, "GET", side)) for side in ("blue", "red")}
        new_id = mine["red"]["page"]
        for side, answer in mine.items():  # each a seat of the new page, the colours swapped
            assert page_of(client, new_id, answer["seat"])["seat"] == answer["side"] != side
            other = "red" if side == "blue" else "blue"
            assert mine[other]["seat"] not in str(answer)  # only its own
        return {side: str(answer["seat"]) for side, answer in mine.items()}


def database_copy(source: Path, target: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        if Path(f"{source}{suffix}").exists():
            shutil.copyfile(f"{source}{suffix}", f"{target}{suffix}")


def stored_values(url: str) -> list[str]:
    """Every value of every row of every table, as text."""
    engine = make_engine(url)
    try:
        with engine.connect() as connection:
            values = []
            for table in inspect(engine).get_table_names():
                for row in connection.execute(text(f"SELECT * FROM {table}")):
                    values.extend(str(value) for value in row)
            return values
    finally:
        engine.dispose()


def test_the_same_database_and_requests_make_other_tokens_and_none_is_stored(
    make_settings: Callable[..., Settings], tmp_path: Path
) -> None:
    settings = make_settings()
    with TestClient(create_app(settings)) as client:
        page = finished_page(client)
    original = Path(settings.database_url.removeprefix("sqlite:///"))
    copy = tmp_path / "copy.sqlite3"
    database_copy(original, copy)
    first = rematch_tokens(settings, page)
    again = rematch_tokens(make_settings(database_url=f"sqlite:///{copy}"), page)
    # Identical pages, identical requests: the tokens are drawn, not a function of what is stored.
    assert first["red"] != again["red"] and first["blue"] != again["blue"]
    values = stored_values(settings.database_url)
    for token in first.values():
        assert all(token not in value for value in values)
        # The old way (an HMAC of an old seat's stored hash) does not give it either.
        hashes = [value for value in values if len(value) == 64]
        assert token not in {legacy_rematch_token(stored, page["id"]) for stored in hashes}
        # Kept as every seat token is: its sha256 is the new page's seat.
        assert tokens.token_hash(token) in values


def test_an_offer_kept_before_the_seals_still_makes_a_playable_rematch(
    make_settings: Callable[..., Settings],
) -> None:
    settings = make_settings()
    with TestClient(create_app(settings)) as client:
        page = finished_page(client)
        answered(rematch(client, page, "POST", "red"))
        # As an offer stored before migration 0009: no seat drawn with it.
        engine = make_engine(settings.database_url)
        with engine.begin() as connection:
            connection.execute(
                update(RematchRow)
                .where(RematchRow.page_id == page["id"])
                .values(offered_seat=None, offered_seal=None)
            )
        answered(rematch(client, page, "POST", "blue"))
        red, blue = (answered(rematch(client, page, "GET", side)) for side in ("red", "blue"))
        old_red_hash = tokens.token_hash(page["seats"]["red"])
        assert red["seat"] == legacy_rematch_token(old_red_hash, page["id"])  # the derived token, as before
        assert page_of(client, red["page"], red["seat"])["seat"] == "blue"
        assert page_of(client, blue["page"], blue["seat"])["seat"] == "red"
        with engine.connect() as connection:
            sealed = connection.execute(select(RematchRow.accepted_seal)).scalar_one()
        engine.dispose()
        assert sealed is not None and blue["seat"] not in sealed  # the accepter's is drawn and sealed
