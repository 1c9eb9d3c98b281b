"""`python -m declint` and the `declint` command.

Before anything else is imported, a child process starts stat'ing the last snapshot's files
(`early_stats`): a warm run is mostly imports, and the stats need none of them.

The command ends with `os._exit` once its output is flushed: the interpreter's own shutdown
tears down every module and object one by one (~8 ms of a ~65 ms warm run), and a run's state,
a few objects per file of the tree, would be freed the same way first (~0.5 us a file; see
`engine.RETAINED`). Nothing is lost: the reports and the cache are written and closed before
`cli.main` returns, and no atexit handler is registered. Only this entry point exits so; tests
and library callers get `SystemExit` from `declint.cli.main` as before.
"""

import os
import sys

from declint import early_stats


def main() -> None:
    early_stats.start()
    from declint import engine
    from declint.cli import main as cli_main

    engine.RETAINED = []
    try:
        cli_main()
    except SystemExit as done:
        _leave(done)
    _leave(SystemExit(0))


def _leave(done: SystemExit) -> None:
    """Exit as `done` would, without the interpreter's shutdown (see the module doc)."""
    code = done.code
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except BaseException:  # a closed pipe, say: Python's own exit reports it as it always did
        raise done from None
    if code is None or isinstance(code, int):
        os._exit(code or 0)
    raise done  # a message as the exit "code": Python prints it


if __name__ == "__main__":
    main()
