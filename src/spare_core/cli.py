"""The ``spare`` command: one sub-command per module in :mod:`spare_core.commands`.

Each command module defines ``HELP`` (one line), ``add_arguments(parser)`` and
``run(args) -> int``; this file wires them to argparse and owns what every command shares:

- bad arguments and bad input (:class:`spare_core.commands.UsageError`) print one line on
  stderr, ``spare <command>: error: ...``, and exit with status 2, no traceback;
- Ctrl-C prints one line and exits with status 130 (a command that runs a grid writes the
  runs finished so far first);
- an output flag given ``-`` writes to standard output, and the report goes to stderr;
- a closed pipe (``spare ... | head``) ends the command quietly, status 0;
- any other error prints one line and exits with status 1 (``SPARE_DEBUG=1`` shows the
  traceback);
- ``spare --version``.
"""
from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import sys
import warnings
from typing import Iterator, NoReturn, Sequence

from . import __version__, _limits
from ._files import command_files
from ._writer import STDOUT, stdout_to
from .events.trace_model import TraceWarning
from .commands import EXIT_INTERRUPTED, UsageError

# each name is a module under spare_core.commands (sub-command "x-y" -> module x_y)
COMMANDS = ("compare", "run", "advise", "report", "map", "pacing", "demo", "sweep", "whatif", "fit")


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors (``prog: error: message``) and exit status 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")


def build_parser() -> argparse.ArgumentParser:
    """The ``spare`` parser with every available sub-command."""
    parser = _Parser(
        prog="spare",
        description="Fault-tolerance planning for LLM pretraining at 10^4-10^6 GPUs (spare_core). "
                    "Main command: 'spare compare'; your own cluster: 'spare run FILE.toml' and "
                    "'spare advise FILE.toml'.",
    )
    parser.add_argument("--version", action="version", version=f"spare {__version__} (spare_core)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        try:
            mod = importlib.import_module(f"spare_core.commands.{name.replace('-', '_')}")
        except ModuleNotFoundError as exc:
            if exc.name == f"spare_core.commands.{name.replace('-', '_')}":
                continue  # a command not in this version
            raise
        p = sub.add_parser(name, help=mod.HELP, description=mod.HELP)
        mod.add_arguments(p)
        p.set_defaults(_run=mod.run)
    return parser


#: the output flags whose value "-" means standard output
STDOUT_FLAGS = ("json", "csv", "parquet", "plot")


@contextlib.contextmanager
def _report_stream(args: argparse.Namespace) -> Iterator[None]:
    """With an output flag at "-" (standard output: the document), the report goes to stderr
    so that stdout holds the document alone; at most one output can take stdout."""
    dash = [f"--{k}" for k in STDOUT_FLAGS if getattr(args, k, None) == STDOUT]
    if len(dash) > 1:
        raise UsageError(f"{' and '.join(dash)} are both '-': only one output can go to stdout")
    if not dash:
        yield
        return
    real = sys.stdout
    with stdout_to(real), contextlib.redirect_stdout(sys.stderr):
        yield


def _silence_stdout() -> None:
    """Point the stdout file descriptor at /dev/null, so that the interpreter's last flush of
    what is still buffered does not fail again at exit (Python's documented recipe)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # not a real file (a test's capture)
        pass


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``spare`` with ``argv`` (default: the process's arguments); return the exit status."""
    try:
        parser = build_parser()  # imports every command: a Ctrl-C there is a Ctrl-C too
    except KeyboardInterrupt:
        print("spare: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    args = parser.parse_args(argv)
    args.argv = list(argv) if argv is not None else sys.argv[1:]  # the command line, for provenance
    if not hasattr(args, "_run"):
        parser.print_help(sys.stderr)
        return 2
    prog = f"spare {args.command}"
    try:
        with _report_stream(args), warnings.catch_warnings(), command_files(), \
                _limits.forcing(bool(getattr(args, "force", False))):
            # a replay's crowded groups are said on the job's "failures:" line, not again as a
            # Python warning with its source line
            warnings.simplefilter("ignore", TraceWarning)
            code = int(args._run(args) or 0)
            sys.stdout.flush()  # a closed pipe shows here, not as a message at the interpreter's exit
        return code
    except UsageError as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"{prog}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # `spare ... | head`: the reader has what it wanted
        _silence_stdout()
        return 0
    except Exception as exc:  # a bug or an environment problem: one line, traceback on request
        if os.environ.get("SPARE_DEBUG"):
            raise
        msg = str(exc).splitlines()[0] if str(exc) else ""
        print(f"{prog}: error: {type(exc).__name__}: {msg} (SPARE_DEBUG=1 shows the traceback)", file=sys.stderr)
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
