"""`python -m declint` and the `declint` command.

Before anything else is imported, a child process starts stat'ing the last snapshot's files
(`early_stats`): a warm run is mostly imports, and the stats need none of them.
"""

from declint import early_stats


def main() -> None:
    early_stats.start()
    from declint.cli import main as cli_main

    cli_main()


if __name__ == "__main__":
    main()
