"""The `dotfight` command: `dotfight serve`, `dotfight lab`, `dotfight replay`.

Each subcommand keeps its own arguments next to the code it runs (`add_arguments` / `run`), so this
module only wires them together and imports the heavy parts lazily.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

# subcommand -> (module with add_arguments(parser) and run(args) -> int, one-line help)
_COMMANDS: dict[str, tuple[str, str]] = {
    "serve": ("dotfight.server.cli", "serve the game (web app, HTTP and WebSocket) on an SQLite file"),
    "lab": ("dotfight.lab.cli", "let bots play many pages and report what the rule numbers do"),
    "replay": ("dotfight.replay_cli", "replay a saved page log and print its events or final state"),
}


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """Builds the argument parser; only `command`'s module is imported to add its own arguments, so
    `dotfight serve` does not load the lab and `dotfight lab` does not load the server."""
    parser = argparse.ArgumentParser(prog="dotfight", description="Dotfight, the exercise-book war game.")
    sub = parser.add_subparsers(dest="command", required=True)
    for name, (module_name, help_text) in _COMMANDS.items():
        sub_parser = sub.add_parser(name, help=help_text, description=help_text)
        sub_parser.set_defaults(_module=module_name)
        if name == command:
            importlib.import_module(module_name).add_arguments(sub_parser)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Runs the `dotfight` command line and returns its exit status."""
    words = list(sys.argv[1:] if argv is None else argv)
    command = next((word for word in words if word in _COMMANDS), None)
    args = build_parser(command).parse_args(words)
    result: int = importlib.import_module(args._module).run(args)
    return result


if __name__ == "__main__":
    sys.exit(main())
