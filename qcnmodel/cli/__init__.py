"""The ``qcnmodel`` command line.

Each sub-command lives in its own module ``qcnmodel.cli.<name>`` exposing
``register(subparsers)`` (which adds its parser(s) and sets ``func``) and ``run(args) -> int``.
Heavy imports happen inside ``run`` so that ``qcnmodel --help`` stays fast.

Every sub-command speaks one vocabulary (:mod:`qcnmodel.cli.common`): ``--preset`` /
``--params FILE``, ``--set KEY=VALUE``, ``--model`` (the models the sub-command accepts)
and ``--variant`` where a model is chosen, ``--rtt`` and ``--flows`` (a value or
``lo..hi``), ``--quiet`` (alias ``--no-progress``), ``--jobs N`` (``-1``: the free cores)
and ``--out`` (format by suffix, checked before any work, written atomically). Times and
rates need a unit.

Exit status: 0 success; 1 a negative verdict (e.g. ``check`` finds the loop unstable);
2 bad input (the message names the field and the allowed range); 130 interrupted (Ctrl-C),
143 terminated (SIGTERM: a CI job cancelled, ``timeout``, ``docker stop``), each with one line
on stderr and no traceback. A termination stops the command as Ctrl-C does, so that the same
clean-ups run (no temporary file or folder is left beside an output); a second SIGTERM ends
the process at once.
"""

from __future__ import annotations

import argparse
import importlib
import re
import sys

from qcnmodel import __version__
from qcnmodel._dask_probes import defer_dask_array_check
from qcnmodel._numba_probes import defer_blas_probe

#: Sub-command modules, in the order they appear in ``--help``.
SUBCOMMAND_MODULES = (
    "report",
    "margins",
    "check",
    "sweep",
    "simulate",
    "compare",
    "validate",
    "figures",
)


class _Parser(argparse.ArgumentParser):
    """An argument parser whose usage errors are one line naming the flag, then exit 2."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")


class _StoreOnce(argparse._StoreAction):
    """A single-value option that refuses a second, different value (``--rtt 1ms --rtt 2ms``):
    argparse would keep the last one silently."""

    def __call__(self, parser, namespace, values, option_string=None):
        seen = namespace.__dict__.setdefault("_given", {})
        if self.dest in seen and seen[self.dest] != values:
            flags = "/".join(self.option_strings) or self.metavar or self.dest
            parser.error(f"argument {flags}: given twice ({seen[self.dest]!r} and {values!r}); "
                         "give it once")  # fmt: skip
        seen[self.dest] = values
        super().__call__(parser, namespace, values, option_string)


def _store_once(parser: argparse.ArgumentParser) -> None:
    """Make every single-value option of ``parser`` and its sub-commands a :class:`_StoreOnce`."""
    for action in parser._actions:
        if type(action) is argparse._StoreAction:
            action.__class__ = _StoreOnce
        if isinstance(action, argparse._SubParsersAction):
            for sub in set(action.choices.values()):
                _store_once(sub)


def build_parser() -> argparse.ArgumentParser:
    """Build the top-level parser with every available sub-command (each inherits its
    one-line usage errors)."""
    parser = _Parser(
        prog="qcnmodel",
        description="Control theory and packet-level simulation of IEEE 802.1Qau QCN.",
    )
    parser.add_argument("--version", action="version", version=f"qcnmodel {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in SUBCOMMAND_MODULES:
        modname = f"qcnmodel.cli.{name}"
        try:
            module = importlib.import_module(modname)
        except ModuleNotFoundError as exc:  # a sub-command not written yet
            if exc.name == modname:
                continue
            raise
        module.register(sub)
    _store_once(parser)
    return parser


_NEGATIVE = re.compile(r"^-(\d|\.\d|(nan|inf|infinity)$)", re.IGNORECASE)


def _join_negative_values(argv: list[str]) -> list[str]:
    """``["--rtt", "-5us"]`` -> ``["--rtt=-5us"]``: argparse takes ``-5us`` for an option and
    answers "expected one argument"; joined, the value reaches its check, which names the
    field and the allowed range. A token starting with ``-`` and a digit, or ``-nan`` /
    ``-inf``, is never an option."""
    out: list[str] = []
    for tok in argv:
        if out and _NEGATIVE.match(tok) and out[-1].startswith("--") and "=" not in out[-1]:
            out[-1] = f"{out[-1]}={tok}"
        else:
            out.append(tok)
    return out


class Terminated(KeyboardInterrupt):
    """The process received SIGTERM: raised in the main thread, as Ctrl-C raises
    KeyboardInterrupt, so that every clean-up written for an interrupt runs."""


def terminate_as_interrupt() -> None:
    """Make SIGTERM raise :class:`Terminated` in this process's main thread.

    The handler acts once: it then restores the default action, so that a second SIGTERM
    ends the process at once. A process forked from this one inherits the handler; there it
    restores the default action and ends the child as SIGTERM would have (a pool stops its
    workers with SIGTERM).
    """
    import os
    import signal

    owner = os.getpid()

    def handler(signum, frame):
        signal.signal(signum, signal.SIG_DFL)
        if os.getpid() != owner:  # a forked worker: end as the signal's default does
            os.kill(os.getpid(), signum)
            return
        raise Terminated()

    signal.signal(signal.SIGTERM, handler)


def _check_shared(args) -> None:
    """Check the shared flags every sub-command takes, even where they change nothing, so
    that no value is accepted silently."""
    from qcnmodel.cli.common import check_no_empty_paths, jobs_value

    check_no_empty_paths(args)
    if getattr(args, "jobs", None) is not None:
        jobs_value(args.jobs)


def _os_message(exc: OSError) -> str:
    what = exc.strerror or str(exc)
    return f"{exc.filename}: {what}" if exc.filename else what


def _silence_stdout() -> None:
    """Point stdout at /dev/null so that the interpreter's final flush does not fail."""
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # no real file descriptor (captured output)
        pass


def _skip_final_collection() -> None:
    """At exit, after the other exit handlers, freeze the garbage collector's objects: the
    interpreter's final collections then skip the compiled simulator's large object graph
    (about 0.5 s of CPU time), which the end of the process frees anyway."""
    import atexit
    import gc

    atexit.register(gc.freeze)  # registered first, so it runs last


def exit_now(status: int) -> None:
    """End the process with ``status`` without tearing the interpreter's modules down.

    The interpreter's own exit steps run first, in its order: the threads' shutdown (the
    executors' hooks, then a join of every non-daemon thread), then the exit handlers
    (``atexit``: logging, multiprocessing's children, temporary directories), then stdout
    and stderr are flushed and :func:`os._exit` ends the process. What is skipped is the
    teardown of every module, which frees numba's and llvmlite's large object graphs one
    object at a time: 0.3-0.5 s at the end of every command that loaded a compiled kernel,
    for memory the end of the process frees anyway.
    Every file a command writes is closed (and renamed into place) before it returns.
    """
    import atexit
    import os
    import threading

    try:
        getattr(threading, "_shutdown", lambda: None)()
        atexit._run_exitfuncs()
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):  # the reader left, or the stream is closed
                pass
        os._exit(status)


def run() -> None:
    """The ``qcnmodel`` console script and ``python -m qcnmodel``: :func:`main` on the
    process's own command line, then :func:`exit_now` with its status."""
    exit_now(main())


def main(argv: list[str] | None = None) -> int:
    """The command line ``argv`` (default the process's own; exit status: module docstring).
    The console script is :func:`run`."""
    if argv is None:  # the process's own command line (tests pass argv and stay in-process)
        _skip_final_collection()
        defer_dask_array_check()  # xarray then loads dask.array only if something uses it
        defer_blas_probe()  # numba's array library then loads without scipy.linalg
        terminate_as_interrupt()  # SIGTERM cleans up as Ctrl-C does
    argv = _join_negative_values(list(sys.argv[1:] if argv is None else argv))
    try:
        parser = build_parser()
        args = parser.parse_args(argv)
        vars(args).pop("_given", None)  # the bookkeeping of _StoreOnce
        if not getattr(args, "func", None):
            parser.print_help()
            return 2
        name = args.command
        try:
            _check_shared(args)
            return int(args.func(args) or 0)
        except (ValueError, OverflowError) as exc:
            print(f"qcnmodel {name}: error: {exc}", file=sys.stderr)
            return 2
        except BrokenPipeError:  # the reader left (``| head``): stop quietly, as Unix tools do
            _silence_stdout()
            return 0
        except OSError as exc:
            print(f"qcnmodel {name}: error: {_os_message(exc)}", file=sys.stderr)
            return 2
    except KeyboardInterrupt as exc:
        terminated = isinstance(exc, Terminated)
        sys.stderr.write(f"\nqcnmodel: {'terminated' if terminated else 'interrupted'}\n")
        sys.stderr.flush()
        return 143 if terminated else 130


if __name__ == "__main__":  # pragma: no cover
    run()
