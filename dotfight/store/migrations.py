"""Applies the Alembic migrations programmatically (the server does it on every start)."""

from __future__ import annotations

from pathlib import Path

from alembic.config import Config
from sqlalchemy import Engine

from alembic import command

# alembic/ at the repository root, next to the package (an editable install keeps it there).
DEFAULT_SCRIPT_LOCATION = Path(__file__).resolve().parents[2] / "alembic"


def upgrade_to_head(engine: Engine, script_location: Path = DEFAULT_SCRIPT_LOCATION) -> None:
    """Brings the database behind `engine` to the newest schema."""
    if not (script_location / "env.py").is_file():
        raise FileNotFoundError(f"no Alembic scripts at {script_location}")
    config = Config()
    config.set_main_option("script_location", str(script_location))
    # The engine is handed over directly rather than as a URL: URLs may hold '%' which Alembic's
    # config parser would try to interpolate.
    with engine.begin() as connection:
        config.attributes["connection"] = connection
        command.upgrade(config, "head")
