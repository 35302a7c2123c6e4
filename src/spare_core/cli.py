"""The ``spare`` command: one sub-command per module in :mod:`spare_core.commands`.

Each command module defines ``HELP`` (one line), ``add_arguments(parser)`` and
``run(args) -> int``; this file only wires them to argparse.
"""
from __future__ import annotations

import argparse
import importlib
import sys

# each name is a module under spare_core.commands
COMMANDS = ("compare", "pacing", "demo")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="spare",
        description="Fault-tolerance planning for LLM pretraining at 10^4-10^6 GPUs (spare_core).",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        mod = importlib.import_module(f"spare_core.commands.{name}")
        p = sub.add_parser(name, help=mod.HELP, description=mod.HELP)
        mod.add_arguments(p)
        p.set_defaults(_run=mod.run)
    return parser


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not hasattr(args, "_run"):
        parser.print_help()
        return 2
    return int(args._run(args) or 0)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
