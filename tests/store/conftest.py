"""Fixtures of the storage tests: a throwaway PostgreSQL cluster started for the session.

The cluster lives in a fresh directory under /tmp, listens only on a Unix socket in that directory (no
TCP port, so it cannot clash with another server or be reached from outside), runs without fsync (its
data is thrown away), keeps time in a zone far from UTC, and is stopped and removed at the end of the
session, even when tests fail.
Each test gets an empty database of its own in it, so that no test sees another's pages.
"""

from __future__ import annotations

import itertools
import os
import pwd
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

# The operating-system account PostgreSQL runs as when the tests run as root (initdb refuses root).
POSTGRES_ACCOUNT = "postgres"
SUPERUSER = "postgres"
# Only names the port inside the socket file's name (.s.PGSQL.<port>): there is no TCP listener.
SOCKET_PORT = 5432
START_TIMEOUT_S = 30
# The cluster's time zone (no daylight saving, half-hour offset: mistakes cannot cancel out).
SESSION_TIME_ZONE = "Asia/Kolkata"


def find_postgres_bindir() -> Path | None:
    """Returns the directory of PostgreSQL's server programs (initdb, pg_ctl), or None when there is none.

    `pg_config --bindir` is asked first; it may belong to the client library only (no initdb there), so
    Debian's versioned directories are searched too, newest version first.
    """
    candidates: list[Path] = []
    pg_config = shutil.which("pg_config")
    if pg_config is not None:
        try:
            answer = subprocess.run([pg_config, "--bindir"], capture_output=True, text=True, timeout=10)
            if answer.returncode == 0 and answer.stdout.strip():
                candidates.append(Path(answer.stdout.strip()))
        except (OSError, subprocess.TimeoutExpired):
            pass

    def version_of(path: Path) -> tuple[int, ...]:
        return tuple(int(part) for part in re.findall(r"\d+", path.parent.name))

    candidates += sorted(Path("/usr/lib/postgresql").glob("*/bin"), key=version_of, reverse=True)
    for bindir in candidates:
        if (bindir / "initdb").is_file() and (bindir / "pg_ctl").is_file():
            return bindir
    return None


class PostgresCluster:
    """A PostgreSQL cluster of one's own in a temporary directory, reached through its Unix socket."""

    def __init__(self, bindir: Path) -> None:
        self.bindir = bindir
        self._as_root = os.geteuid() == 0
        self._database_numbers = itertools.count(1)
        self.root = Path(tempfile.mkdtemp(prefix="dotfight-pg-"))  # short: socket paths are limited
        self.data = self.root / "data"
        self.log = self.root / "postgres.log"
        if self._as_root:
            account = pwd.getpwnam(POSTGRES_ACCOUNT)
            os.chown(self.root, account.pw_uid, account.pw_gid)

    def _run(self, program: str, *args: str) -> None:
        # As root, the server programs run as the postgres account; the directory is its own.
        command: list[str] = [str(self.bindir / program), *args]
        if self._as_root:
            command = ["runuser", "-u", POSTGRES_ACCOUNT, "--", *command]
        answer = subprocess.run(
            command, cwd=self.root, capture_output=True, text=True, timeout=START_TIMEOUT_S + 30
        )
        if answer.returncode != 0:
            raise RuntimeError(
                f"{program} failed ({answer.returncode}): {answer.stderr.strip()}\n{self.log_tail()}"
            )

    def log_tail(self, characters: int = 3000) -> str:
        """Returns the end of the server's log (for error messages)."""
        try:
            return self.log.read_text(errors="replace")[-characters:]
        except OSError:
            return ""

    def create(self) -> None:
        """Creates the cluster's files (initdb)."""
        self._run(
            "initdb", "-D", str(self.data), "-U", SUPERUSER, "--auth=trust", "-E", "UTF8",
            "--no-locale", "--no-sync",
        )  # fmt: skip

    def start_server(self) -> None:
        """Starts the cluster's server, waiting until it accepts connections."""
        options = " ".join(
            [
                "-c listen_addresses=''",
                f"-k {self.root}",
                f"-p {SOCKET_PORT}",
                # Throwaway data: durability is not what these tests check, speed is welcome.
                "-c fsync=off",
                "-c synchronous_commit=off",
                "-c full_page_writes=off",
                "-c shared_buffers=32MB",
                # A zone far from UTC: the server must hand out UTC times whatever the database's zone.
                f"-c timezone={SESSION_TIME_ZONE}",
            ]
        )
        self._run(
            "pg_ctl", "start", "-D", str(self.data), "-l", str(self.log), "-w",
            "-t", str(START_TIMEOUT_S), "-o", options,
        )  # fmt: skip

    @property
    def running(self) -> bool:
        """Tells whether the cluster's server runs (its pid file exists)."""
        return (self.data / "postmaster.pid").exists()

    def stop_server(self) -> None:
        """Stops the server if it runs (fast shutdown: open sessions are ended; else immediate)."""
        if not self.running:
            return
        try:
            self._run("pg_ctl", "stop", "-D", str(self.data), "-m", "fast", "-w", "-t", "20")
        except (RuntimeError, subprocess.TimeoutExpired):
            self._run("pg_ctl", "stop", "-D", str(self.data), "-m", "immediate", "-w", "-t", "20")

    def remove(self) -> None:
        """Stops the server and removes every file of the cluster."""
        try:
            self.stop_server()
        finally:
            shutil.rmtree(self.root, ignore_errors=True)

    def url(self, database: str) -> str:
        """Returns the SQLAlchemy (psycopg 3) URL of a database of this cluster."""
        return f"postgresql+psycopg://{SUPERUSER}@/{database}?host={self.root}&port={SOCKET_PORT}"

    def execute(self, statements: Sequence[str], database: str = "postgres") -> None:
        """Runs statements outside any transaction (CREATE DATABASE cannot run inside one)."""
        import psycopg

        with psycopg.connect(
            host=str(self.root), port=SOCKET_PORT, user=SUPERUSER, dbname=database, autocommit=True
        ) as connection:
            for statement in statements:
                connection.execute(statement.encode())

    def new_database(self) -> str:
        """Creates an empty database and returns its URL."""
        name = f"dotfight_{next(self._database_numbers)}"
        self.execute([f'CREATE DATABASE "{name}"'])
        return self.url(name)


@pytest.fixture(scope="session")
def postgres_cluster() -> Iterator[PostgresCluster]:
    """A running throwaway PostgreSQL cluster (skips the tests when PostgreSQL is not installed)."""
    bindir = find_postgres_bindir()
    if bindir is None:
        pytest.skip(
            "PostgreSQL's server programs (initdb, pg_ctl) are not installed: "
            "`apt-get install postgresql` (scripts/test.sh does it) to run the PostgreSQL storage tests"
        )
    if os.geteuid() == 0:
        try:
            pwd.getpwnam(POSTGRES_ACCOUNT)
        except KeyError:
            pytest.skip(f"running as root, and there is no '{POSTGRES_ACCOUNT}' account to run PostgreSQL as")
        if shutil.which("runuser") is None:
            pytest.skip("running as root without `runuser`, so PostgreSQL cannot be started as postgres")
    try:
        import psycopg  # noqa: F401
    except ImportError:
        pytest.skip("the PostgreSQL driver psycopg 3 is not installed: pip install 'psycopg[binary]'")
    cluster = PostgresCluster(bindir)
    try:
        cluster.create()
        cluster.start_server()
        yield cluster
    finally:
        cluster.remove()


@pytest.fixture
def postgres_url(postgres_cluster: PostgresCluster) -> str:
    """The SQLAlchemy URL of a fresh, empty PostgreSQL database."""
    return postgres_cluster.new_database()
