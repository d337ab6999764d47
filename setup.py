"""Build hook: the wheel carries the web app (`web/`) and the migrations (`alembic/`) as package data.

They stay at the top of the repository for development (an editable install finds them there); a
built wheel holds copies at `dotfight/_web` and `dotfight/_alembic`, which the server looks for first
(`dotfight.server.settings`, `dotfight.store.migrations`). Everything else is in pyproject.toml.
"""

from __future__ import annotations

from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ASSETS = {"web": "dotfight/_web", "alembic": "dotfight/_alembic"}


class BuildPyWithAssets(build_py):
    """Copies the asset folders into the built package (not in editable mode: the source is used)."""

    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return
        root = Path(__file__).resolve().parent
        for source, target in ASSETS.items():
            for path in sorted((root / source).rglob("*")):
                if path.is_file() and "__pycache__" not in path.parts:
                    destination = Path(self.build_lib) / target / path.relative_to(root / source)
                    self.mkpath(str(destination.parent))
                    self.copy_file(str(path), str(destination))


setup(cmdclass={"build_py": BuildPyWithAssets})
