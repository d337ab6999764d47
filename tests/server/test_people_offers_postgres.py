"""Rematch and phrases across two `dotfight serve` processes on one PostgreSQL database (issue 19): an
offer, an accept and a phrase made on one process are heard on the sockets of the other (the
`dotfight_notices` NOTIFY), and accepts or offers racing on both processes make one page."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.pool import NullPool
from test_people_offers import answered, bearer, finished_page, new_page, next_of, rematch, seat_socket

from tests.store.conftest import postgres_cluster  # noqa: F401 — the throwaway cluster, for these tests too
from tests.store.test_many_processes import migrated, server, serving_two
from tests.support.server_process import ServerProcess

if TYPE_CHECKING:
    from tests.store.conftest import PostgresCluster

# Races run on both processes at once, each on a page of its own (bounded).
RACES = 6


@pytest.fixture(scope="module")
def two_processes(
    postgres_cluster: PostgresCluster,  # noqa: F811
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[ServerProcess, ServerProcess]]:
    """Two server processes on one migrated PostgreSQL database, the rematch limit raised."""
    url = migrated(postgres_cluster.new_database())
    workdir = tmp_path_factory.mktemp("offers")
    servers = [server(url, workdir / f"{name}.log", DOTFIGHT_REMATCH_BURST="100000") for name in ("a", "b")]
    with serving_two(servers) as both:
        yield both


def rematches_of(database_url: str, page_id: str) -> list[str | None]:
    """The new page ids the database links to a page (the `rematches` table, looked at directly)."""
    engine = create_engine(database_url, poolclass=NullPool)
    try:
        with engine.connect() as connection:
            rows = connection.execute(
                text("SELECT new_page_id FROM rematches WHERE page_id = :page"), {"page": page_id}
            )
            return [row[0] for row in rows]
    finally:
        engine.dispose()


async def test_an_offer_an_accept_and_a_phrase_on_one_process_are_heard_on_the_others_sockets(
    two_processes: tuple[ServerProcess, ServerProcess],
) -> None:
    first, second = two_processes
    page = new_page(first.http)
    page_id, seats = page["id"], page["seats"]
    async with seat_socket(first, page_id, seats["blue"]) as blue:
        second.http.post(f"/api/pages/{page_id}/actions", json={"action": {"type": "resign"}, "version": 0},
                         headers=bearer(seats["blue"])).raise_for_status()  # fmt: skip
        answered(rematch(second.http, page, "POST", "red"))
        assert await next_of(blue, "rematch") == {"type": "rematch", "offered_by": "red", "page": None}
        said = second.http.post(f"/api/pages/{page_id}/say", json={"phrase": "good_game"},
                                headers=bearer(seats["red"]))  # fmt: skip
        kept = answered(said)
        assert await next_of(blue, "said") == {
            "type": "said", "side": "red", "phrase": "good_game", "at": kept["at"],
        }  # fmt: skip
        async with seat_socket(second, page_id, seats["red"]) as red:
            # Blue accepts on the first process; red's socket on the second hears the new page.
            made = answered(rematch(first.http, page, "POST", "blue"))["page"]
            assert await next_of(red, "rematch") == {"type": "rematch", "offered_by": "red", "page": made}
            assert await next_of(blue, "rematch") == {"type": "rematch", "offered_by": "red", "page": made}
    # Either process gives red its own new seat.
    seen = [answered(rematch(each.http, page, "GET", "red")) for each in (first, second)]
    assert [(one["side"], one["seat"]) for one in seen] == [("blue", seen[0]["seat"])] * 2


def test_accepts_and_offers_racing_on_both_processes_make_one_page(
    two_processes: tuple[ServerProcess, ServerProcess],
) -> None:
    first, second = two_processes
    url = first.database_url
    with ThreadPoolExecutor(4) as pool:
        for _ in range(RACES):
            # Red's accept sent to both processes at once.
            page = finished_page(first.http)
            answered(rematch(first.http, page, "POST", "blue"))
            racing = [pool.submit(rematch, each.http, page, "POST", "red") for each in (first, second)]
            answers = [answered(future.result()) for future in racing]
            assert answers[0] == answers[1] and answers[0]["page"] is not None
            assert rematches_of(url, page["id"]) == [answers[0]["page"]]
            # Both seats tapping Rematch at once, each on its own process.
            page = finished_page(first.http)
            racing = [pool.submit(rematch, each.http, page, "POST", side)
                      for each, side in ((first, "blue"), (second, "red"))]  # fmt: skip
            for future in racing:
                answered(future.result())
            [made] = rematches_of(url, page["id"])
            assert made is not None
            assert answered(rematch(second.http, page, "GET")) == answered(rematch(first.http, page, "GET"))
