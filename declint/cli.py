"""The command line: a thin click layer over plain functions that return exit codes.

Exit status: 0 clean, 1 findings (DL000 included), 2 usage, configuration or internal error.
"""

from __future__ import annotations

import functools
import gc
import os
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from enum import IntEnum
from pathlib import Path
from typing import ParamSpec

import click

from declint import __version__, show, timings
from declint.config import Config, find_config_file, load_config, parse_code_list, project_root, suggest
from declint.discovery import display_path
from declint.engine import Engine, Selection
from declint.errors import DeclintError, OutputError, UsageError, warn
from declint.reporting import FORMATS, RENDERERS
from declint.reporting import outputs as report_outputs
from declint.reporting.pipeline import CheckOutcome, CheckRequest
from declint.reporting.pipeline import run as run_pipeline
from declint.rules import ALL_RULES, RULES_BY_CODE
from declint.types import Finding, RunResult, escape_controls

_PROGRESS_MIN_FILES = 200
P = ParamSpec("P")


class Exit(IntEnum):
    CLEAN = 0
    FINDINGS = 1
    ERROR = 2


def resolve_config(paths: Sequence[Path], config_file: Path | None) -> Config:
    known = frozenset(RULES_BY_CODE)
    if config_file is not None:
        if not config_file.is_file():
            raise UsageError(f"config file not found: {config_file}")
        return load_config(config_file, default_root=Path.cwd(), known_codes=known)
    _refuse_two_projects(paths)
    start = Path(os.path.commonpath([os.path.abspath(p) for p in paths])) if paths else Path.cwd()
    found = _config_file(start)
    if found is not None:
        return load_config(found, default_root=found.parent, known_codes=known)
    root = project_root(start)
    if root == _directory(start):  # nothing above the path as given: perhaps above where it leads
        root = project_root(Path(os.path.realpath(start)))
    return load_config(None, default_root=root, known_codes=known)


def _config_file(start: Path) -> Path | None:
    """The nearest configuration above the path as given, else above the path it leads to: a
    file reached through a symlinked directory (`/tmp/link -> project/pkg`) is the project's,
    as the walk checks it (red-team 54: it was checked with the defaults)."""
    found = find_config_file(start)
    real = Path(os.path.realpath(start))
    return found if found is not None or real == start else find_config_file(real)


def check_docs_url(docs_url: str | None) -> None:
    """`--docs-url` becomes SARIF's helpUri and informationUri, which must be absolute URIs."""
    if docs_url is None:
        return
    import urllib.parse

    parts = urllib.parse.urlsplit(docs_url)
    # "C:/docs/rules.md" parses with the scheme "c": a scheme is only trusted with an authority
    # ("https://host/..."), or as file: ("file:///path").
    if not parts.scheme or not (parts.netloc or (parts.scheme == "file" and parts.path.startswith("/"))):
        raise UsageError(
            f'--docs-url must be an absolute URL with a scheme, such as https://host/docs/rules.md, got "{docs_url}"'
        )


def _refuse_two_projects(paths: Sequence[Path]) -> None:
    """Paths whose nearest configurations differ belong to two projects: their common parent
    would be checked with neither configuration (defaults), indexing everything below it."""
    directories = {_directory(path) for path in paths}
    configs = {found for directory in directories if (found := _config_file(directory)) is not None}
    if len(configs) > 1:
        first, second = sorted(configs)[:2]
        raise UsageError(
            f"the paths belong to different projects, configured by {first} and {second}; "
            "run declint once per project (or pass --config)"
        )


def _directory(path: Path) -> Path:
    """The directory whose configuration applies to `path` (asked once per directory, not per file)."""
    absolute = Path(os.path.abspath(path))
    return absolute if absolute.is_dir() else absolute.parent


def build_selection(config: Config, select: str | None, ignore: str | None) -> Selection:
    """The enabled rules (see `selected_codes`)."""
    chosen, ignored = selected_codes(config, select, ignore)
    for code in [*chosen, *ignored]:
        if not any(known.startswith(code) for known in RULES_BY_CODE):
            raise UsageError(f'unknown rule code "{code}"{suggest(code, frozenset(RULES_BY_CODE))}')
    selection = Selection(tuple(chosen), tuple(ignored))
    if not any(selection.enabled(code) for code in RULES_BY_CODE):
        # A run that checks nothing must not say "All clear".
        raise UsageError(f"no rule is enabled (select: {_codes(chosen)}; ignore: {_codes(ignored)})")
    return selection


def selected_codes(config: Config, select: str | None, ignore: str | None) -> tuple[list[str], list[str]]:
    """(select, ignore) in effect. As ruff's: `--select` starts a new selection (the
    configuration's `select` and `ignore` no longer apply); `--ignore` adds to the selection's."""
    cli_ignored = parse_code_list(ignore) or []
    cli_selected = parse_code_list(select)
    if cli_selected is not None:
        return cli_selected, cli_ignored
    return list(config.str_list("select")), [*config.str_list("ignore"), *cli_ignored]


def _codes(codes: Sequence[str]) -> str:
    return ", ".join(codes) if codes else "none"


def worker_count(config: Config, jobs: int | None) -> int:
    """--jobs, else the `jobs` option; 0 means one worker per CPU core this process may use."""
    wanted = jobs if jobs is not None else int(config.get("jobs"))
    if wanted > 0:
        return wanted
    affinity = getattr(os, "sched_getaffinity", None)
    return max(1, len(affinity(0)) if affinity is not None else (os.cpu_count() or 1))


def _progress(done: int, total: int) -> None:
    if total >= _PROGRESS_MIN_FILES and (done % 50 == 0 or done == total):
        click.echo(f"\rdeclint: checked {done}/{total} files", err=True, nl=done == total)


def run_check(
    paths: Sequence[Path],
    *,
    config_file: Path | None,
    select: str | None,
    ignore: str | None,
    output_format: str | None = None,
    output: Path | None = None,
    output_formats: Sequence[str] = (),
    show_statistics: bool = False,
    exit_zero: bool = False,
    baseline: Path | None = None,
    diff_base: str | None = None,
    include_suppressed: bool = False,
    docs_url: str | None = None,
    fix: bool = False,
    unsafe_fixes: bool = False,
    show_diff: bool = False,
    jobs: int | None = None,
    no_cache: bool = False,
    show_timings: bool = False,
    stdin_filename: Path | None = None,
) -> Exit:
    started, cpu_at_start = time.perf_counter(), timings.cpu_times() if show_timings else None
    check_docs_url(docs_url)
    if unsafe_fixes and not (fix or show_diff):
        warn("--unsafe-fixes does nothing without --fix or --diff; nothing is fixed")
    # stdout holds the diff (--diff), or the fixed text (--fix on stdin's text, as editors want it)
    fixed_text_out = fix and not show_diff and stdin_filename is not None
    taken = "the diff" if show_diff else "the fixed text" if fixed_text_out else None
    targets = report_outputs.targets(output_format, output, output_formats, stdout_taken=taken)
    if stdin_filename is not None:
        paths = _stdin_request(paths, stdin_filename, compares=bool(baseline or diff_base))
    config = resolve_config(paths, config_file)
    interactive = sys.stderr.isatty()
    engine = Engine(
        config,
        ALL_RULES,
        build_selection(config, select, ignore),
        progress=_progress if interactive else None,
        jobs=worker_count(config, jobs),
        cache=not no_cache,
        overrides=_stdin_text(stdin_filename, config.root) if stdin_filename is not None else {},
    )
    request = CheckRequest(
        tuple(paths),
        baseline=baseline,
        diff_base=diff_base,
        include_suppressed=include_suppressed,
        docs_url=docs_url,
        fix=fix,
        unsafe_fixes=unsafe_fixes,
        diff_only=show_diff,
    )
    outcome = run_pipeline(engine, request, ALL_RULES)
    if outcome.report.files_checked == 0 and not outcome.report.items:
        click.echo("declint: warning: no Python files found under the given paths; nothing was checked", err=True)
    _tell_fixes(outcome, request)
    if fixed_text_out:
        _print_fixed_text(outcome)
    report_outputs.emit(
        targets,
        outcome.report,
        show_statistics=show_statistics,
        echo=lambda text: echo_out(text, nl=False),
        echo_err=lambda text: click.echo(text, nl=False, err=True),
    )
    if show_timings and outcome.stats is not None:
        wall = time.perf_counter() - started
        click.echo(timings.render(outcome.stats, wall, cpu_at_start, timings.cpu_times()), nl=False, err=True)
        if outcome.fixes is not None:
            found, computed = outcome.fixes.memo
            click.echo(
                f"declint: fix session: {found} answers from the last session's, {computed} computed "
                "(re-lints, fixes applied, verdicts)",
                err=True,
            )
    if show_diff:
        changed = outcome.fixes is not None and bool(outcome.fixes.changes)
        return Exit.CLEAN if exit_zero or not changed else Exit.FINDINGS
    return Exit.CLEAN if exit_zero or not outcome.report.items else Exit.FINDINGS


def _show(paths: Sequence[Path], options: Mapping[str, object], *, settings: bool, files: bool) -> None:
    """--show-settings / --show-files: of the check these arguments ask for (`--stdin-filename`'s
    file counts even when it does not exist yet, as in the check). The settings are those the
    check would use: `--select`, `--ignore` and `--jobs` as given on the command line."""
    stdin_filename, config_file = options.get("stdin_filename"), options.get("config_file")
    stdin_filename = stdin_filename if isinstance(stdin_filename, Path) else None
    targets = [stdin_filename] if stdin_filename is not None else list(paths)
    config = resolve_config(targets, config_file if isinstance(config_file, Path) else None)
    if settings:
        echo_out(show.settings_text(config, _command_line_settings(config, options)), nl=False)
    if files:
        virtual = (os.path.abspath(stdin_filename),) if stdin_filename is not None else ()
        checked, skipped = show.files_text(targets, config, virtual)
        echo_out(checked, nl=False)
        click.echo(skipped, nl=False, err=True)


def _command_line_settings(config: Config, options: Mapping[str, object]) -> dict[str, object]:
    """The options the command line sets, with the values the check would use (refused as the
    check refuses them: an unknown code, nothing enabled)."""
    select, ignore = (value if isinstance(value, str) else None for value in map(options.get, ("select", "ignore")))
    given: dict[str, object] = {}
    if select is not None or ignore is not None:
        build_selection(config, select, ignore)
        chosen, given["ignore"] = selected_codes(config, select, ignore)
        if select is not None:
            given["select"] = chosen
    jobs = options.get("jobs")
    if isinstance(jobs, int):
        given["jobs"] = jobs
    return given


def _stdin_request(paths: Sequence[Path], stdin_filename: Path, *, compares: bool) -> list[Path]:
    """The paths a `--stdin-filename` run checks: that file alone."""
    if any(str(path) != "-" for path in paths):
        raise UsageError("--stdin-filename checks the text on stdin: pass no PATHS, or '-'")
    if compares:
        raise UsageError(
            "--baseline and --diff-base compare files on disk; they cannot be combined with --stdin-filename"
        )
    return [stdin_filename]


def _print_fixed_text(outcome: CheckOutcome) -> None:
    """--fix on stdin's text: that text with the fixes applied (unchanged when none applied)."""
    ((_, fixed),) = outcome.texts.items()
    echo_out(fixed, nl=False)


def _stdin_text(stdin_filename: Path, root: Path) -> dict[str, bytes]:
    """The text on stdin, standing in for the file at `stdin_filename` (which need not exist)."""
    return {display_path(stdin_filename, root): sys.stdin.buffer.read()}


def _tell_fixes(outcome: CheckOutcome, request: CheckRequest) -> None:
    """--diff: the diff on stdout; --fix: what was fixed and what was not, on stderr."""
    fixes = outcome.fixes
    if fixes is None:
        return
    files = len(fixes.changes)
    if request.diff_only:
        echo_out(b"".join(change.diff() for change in fixes.changes), nl=False)
        verb = "would fix"
    else:
        verb = "fixed"
    findings = f"{fixes.fixed} finding{'s' if fixes.fixed != 1 else ''}"
    click.echo(f"declint: {verb} {findings} in {files} file{'s' if files != 1 else ''}", err=True)
    if fixes.stopped_after is not None:
        rounds = f"{fixes.stopped_after} round{'s' if fixes.stopped_after != 1 else ''}"
        click.echo(f"declint: stopped after {rounds} of fixes (the limit); fixable findings remain", err=True)
    for left in fixes.not_fixed:
        where = f"{escape_controls(left.finding.path)}:{left.finding.line}:{left.finding.column + 1}"
        click.echo(f"declint: not fixed: {where}: {left.finding.code}: {left.reason}", err=True)


def echo_out(text: str | bytes, *, nl: bool = True) -> None:
    """`click.echo` to stdout, where a failed write is an error (exit 2), not a traceback or a
    report lost in silence: a full disk (`> /dev/full`), a closed stdout (`>&-`). Bytes (a fixed
    text, a diff) go to the binary stream as they are."""
    if sys.stdout is None:  # Python's stdout when the process started with descriptor 1 closed
        raise OutputError("cannot write to stdout: it is closed")
    try:
        click.echo(text, nl=nl, color=True)  # not stripped when piped: a file name or reason may hold ESC
    except OSError as error:
        _discard_stdout()
        raise OutputError(f"cannot write to stdout: {error.strerror or error}") from None


def _discard_stdout() -> None:
    """Point descriptor 1 at /dev/null: what stdout still buffers would otherwise fail again when
    Python flushes it at exit, with an "Exception ignored" message after ours."""
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):
        return  # not a file descriptor (a test's captured stream): nothing is flushed at exit
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, fd)
    os.close(devnull)


def error_boundary(command: Callable[P, None]) -> Callable[P, None]:
    """The one error boundary: expected errors exit 2 with a message, crashes with a traceback."""

    @functools.wraps(command)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> None:
        try:
            command(*args, **kwargs)
        except click.ClickException:
            raise  # a usage error click words and exits 2 with, as for its own checks
        except DeclintError as error:
            click.echo(f"declint: error: {error}", err=True)
            sys.exit(Exit.ERROR)
        except Exception:
            import traceback  # here: ~3 ms to import, for a crash

            click.echo("declint: internal error (please report):\n" + traceback.format_exc(), err=True)
            sys.exit(Exit.ERROR)

    return wrapper


# Options several commands take, spelled (and documented in --help) once.
_select_option = click.option(
    "--select",
    help="Comma-separated rule codes or prefixes to enable (the config's select and ignore then do not apply).",
)
_ignore_option = click.option(
    "--ignore", help="Comma-separated rule codes or prefixes to disable (added to the selection)."
)
_config_option = click.option(
    "--config",
    "config_file",
    type=click.Path(path_type=Path),
    help="A pyproject.toml ([tool.declint]) or a declint.toml (keys at top level).",
)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="declint")
def cli() -> None:
    """Keep TensorRT-LLM's encoder attention-backend declarations honest."""


@cli.command()
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@_select_option
@_ignore_option
@click.option(
    "--format", "output_format", type=click.Choice(sorted(RENDERERS)), help="Report format on stdout [default: text]."
)
@click.option("--output", type=click.Path(path_type=Path, dir_okay=False), help="Write the --format report here.")
@click.option(
    "--output-format",
    "output_formats",
    multiple=True,
    metavar="FMT[:FILE]",
    help=f"A report, to FILE or stdout; repeatable. FMT: {', '.join(sorted(RENDERERS))}.",
)
@click.option("--statistics", "show_statistics", is_flag=True, help="Append counts per rule.")
@_config_option
@click.option("--exit-zero", is_flag=True, help="Exit 0 even with findings (errors still exit 2).")
@click.option(
    "--baseline",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Report only findings not in this baseline (and its stale entries, DL904).",
)
@click.option("--diff-base", metavar="REV", help="Annotate only lines changed since REV (git); summarise the rest.")
@click.option("--include-suppressed", is_flag=True, help="Also report suppressed findings (sarif, json), with reasons.")
@click.option("--docs-url", metavar="URL", help="URL of docs/rules.md, for links in sarif, rdjson, github, gitlab.")
@click.option("--fix", is_flag=True, help="Apply safe fixes, then report what is left.")
@click.option("--unsafe-fixes", is_flag=True, help="With --fix or --diff: also apply fixes that need review.")
@click.option("--diff", "show_diff", is_flag=True, help="Print the fixes as a diff instead of writing them.")
@click.option(
    "--jobs",
    "-j",
    type=click.IntRange(min=0),
    help="Worker processes for parsing and rules [default: the jobs option; 0: one per CPU core].",
)
@click.option("--no-cache", is_flag=True, help="Neither read nor write the cache (also: DECLINT_NO_CACHE=1).")
@click.option("--timings", "show_timings", is_flag=True, help="Print where the run's time went, on stderr.")
@click.option(
    "--stdin-filename",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Check the text on stdin as this file (editors); PATHS is then empty or '-'.",
)
@click.option(
    "--show-settings",
    is_flag=True,
    help="Print the configuration a check of PATHS would use (--select, --ignore, --jobs included), as TOML, and exit.",
)
@click.option("--show-files", is_flag=True, help="Print the files a check of PATHS would check, and exit.")
@error_boundary
def check(paths: tuple[Path, ...], show_settings: bool, show_files: bool, **options: object) -> None:
    """Check PATHS (files or directories)."""
    if not paths and options.get("stdin_filename") is None:
        raise click.UsageError("Missing argument 'PATHS...'.")
    if show_settings or show_files:
        _show(paths, options, settings=show_settings, files=show_files)
        sys.exit(Exit.CLEAN)
    sys.exit(run_check(paths, **options))  # type: ignore[arg-type]


@cli.group()
def baseline() -> None:
    """Record known findings, so that only new ones fail a run (`check --baseline FILE`)."""


@baseline.command(name="write")
@click.argument("file", type=click.Path(path_type=Path, dir_okay=False))
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@_select_option
@_ignore_option
@_config_option
@click.option("--allow-grow", is_flag=True, help="Accept new findings into an existing baseline.")
@error_boundary
def baseline_write(
    file: Path,
    paths: tuple[Path, ...],
    select: str | None,
    ignore: str | None,
    config_file: Path | None,
    allow_grow: bool,
) -> None:
    """Write FILE from the findings in PATHS (default: the project). Never adds entries without --allow-grow."""
    config = resolve_config(paths, config_file)
    engine = Engine(config, ALL_RULES, build_selection(config, select, ignore))
    from declint.reporting.baseline_command import write_baseline

    sys.exit(write_baseline(engine, file, paths or (config.root,), allow_grow=allow_grow))


@cli.command()
@click.argument("code")
@error_boundary
def rule(code: str) -> None:
    """Explain rule CODE: what it checks, why, its options and examples."""
    rule_class = RULES_BY_CODE.get(code.upper())
    if rule_class is None:
        raise UsageError(f'unknown rule code "{code}"{suggest(code.upper(), frozenset(RULES_BY_CODE))}')
    from declint.docs import explain_rule

    echo_out(explain_rule(rule_class), nl=False)


@cli.command(name="rules")
@click.option("--format", "output_format", type=click.Choice(["text", "markdown", "json"]), default="text")
@error_boundary
def list_rules(output_format: str) -> None:
    """List every rule."""
    from declint.docs import rules_table

    echo_out(rules_table(ALL_RULES, output_format), nl=False)


@cli.group()
def index() -> None:
    """Inspect the project index."""


@index.command(name="show")
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@_config_option
@error_boundary
def index_show(paths: tuple[Path, ...], config_file: Path | None) -> None:
    """Print the project index (models, declarations, the Literal) as JSON."""
    config = resolve_config(paths, config_file)
    engine = Engine(config, ALL_RULES, Selection(("DL",), ()))
    import json

    echo_out(json.dumps(engine.build_index(paths).to_json(), indent=2))


@cli.command()
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option("--format", "output_format", type=click.Choice(["markdown", "json"]), default="markdown")
@click.option(
    "--check",
    "check_file",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Compare with the table in this Markdown file (DL107) instead of printing.",
)
@_config_option
@error_boundary
def table(paths: tuple[Path, ...], output_format: str, check_file: Path | None, config_file: Path | None) -> None:
    """Render the declared support matrix, or --check a docs page against it."""
    sys.exit(run_table(paths, output_format=output_format, check_file=check_file, config_file=config_file))


def _tell_left_out(models: Sequence[str]) -> None:
    """On stderr: the models without a row (a tree that predates the declarations shows an empty
    table, which said nothing of the models it left out)."""
    if not models:
        return
    shown = ", ".join(models[:10]) + (f" and {len(models) - 10} more" if len(models) > 10 else "")
    count = f"{len(models)} multimodal model{'s' if len(models) != 1 else ''}"
    click.echo(
        f"declint: {count} with no declaration declint can read, not in the table: {shown} (see DL102, DL104)", err=True
    )


def run_table(paths: Sequence[Path], *, output_format: str, check_file: Path | None, config_file: Path | None) -> Exit:
    config = resolve_config(paths, config_file)
    index = Engine(config, ALL_RULES, Selection(("DL",), ())).build_index(paths)
    if check_file is None:
        from declint.table import left_out, support_matrix
        from declint.table import render as render_table

        echo_out(render_table(support_matrix(index, config), output_format), nl=False)
        _tell_left_out(left_out(index))
        return Exit.CLEAN
    from declint.rules.docs_drift import docs_drift

    findings = tuple(sorted(docs_drift(index, config, check_file.resolve()), key=Finding.sort_key))
    echo_out(FORMATS["text"](RunResult(findings, files_checked=1, files_indexed=len(index.modules))), nl=False)
    return Exit.FINDINGS if findings else Exit.CLEAN


@cli.command()
@click.option(
    "--log", "log", type=click.Path(path_type=Path, dir_okay=False, exists=True), help="A server log to read."
)
@click.option("--path", "paths", multiple=True, type=click.Path(path_type=Path), help="Look for distributions here.")
@error_boundary
def doctor(log: Path | None, paths: tuple[Path, ...]) -> None:
    """Installed TensorRT-LLM / FlashInfer / torch against the pins, and a log's kv_layout-type failure."""
    from declint.doctor import run as run_doctor

    diagnosis = run_doctor(paths, log)
    echo_out("\n".join(diagnosis.lines))
    sys.exit(diagnosis.exit_code)


@cli.command(name="shim-targets")
@click.argument("path", type=click.Path(path_type=Path, exists=True, file_okay=False))
@click.option("--format", "output_format", type=click.Choice(["text", "json"]), default="text", show_default=True)
@error_boundary
def shim_targets(path: Path, output_format: str) -> None:
    """Check that every runtime-shim target exists, with a compatible signature, in a TensorRT-LLM tree."""
    from declint.shim_targets import check as check_targets
    from declint.shim_targets import render as render_targets

    results = check_targets(path)
    echo_out(render_targets(results, output_format), nl=False)
    sys.exit(Exit.FINDINGS if any(r.state != "ok" for r in results) else Exit.CLEAN)


def main(argv: Sequence[str] | None = None) -> None:
    # Everything imported so far lives as long as the process: out of the collector's sight, a
    # full collection traverses only what the run allocates (~15 ms of a 0.15 s warm run). Here
    # and not in `cli`, which tests invoke in one long-lived process.
    gc.freeze()
    # A run allocates a few objects per file of the tree, almost none in a reference cycle, and
    # the process ends with the run: the cyclic collector's passes over them were ~8% of a cold
    # run (~140 ms of 1.7 s on 20k files). Reference counting still frees everything acyclic; the
    # worker processes, which parse with libcst, turn the collector back on (`declint.workers`).
    gc.disable()
    cli.main(args=list(argv) if argv is not None else None, prog_name="declint")
