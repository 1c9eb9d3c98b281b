"""pytest plugin (entry point `declint_shim`): `pytest --declint-shim=enforce` runs a GPU test
suite with the runtime shim installed, without changing the tests.

Loaded in every pytest run once declint is installed, so it stays cheap: it imports the shim
only when the option is given.
"""

from __future__ import annotations

from typing import Any

from declint.runtime_shim.report import LAYER_CHECKS, MODES


def pytest_addoption(parser: Any) -> None:
    group = parser.getgroup("declint-shim", "declint runtime shim")
    group.addoption(
        "--declint-shim",
        choices=MODES,
        default=None,
        help="install declint's runtime shim for the session: enforce (raise), warn (log) or record (JSON lines)",
    )
    group.addoption("--declint-shim-report", default=None, help="record mode: append JSON lines here")
    group.addoption("--declint-shim-strict", action="store_true", help="a missing or incompatible target is an error")
    group.addoption(
        "--declint-shim-probe-sdpa", action="store_true", help="probe one forward of each configurable encoder"
    )
    group.addoption(
        "--declint-shim-layer-check",
        choices=LAYER_CHECKS,
        default=LAYER_CHECKS[0],
        help="when a built model's attention layers are checked: at its first use (default) or at construction",
    )


def pytest_configure(config: Any) -> None:
    mode = config.getoption("--declint-shim", None)
    if mode is None:
        return
    from declint.runtime_shim import install

    install(
        mode,
        config.getoption("--declint-shim-report"),
        strict=config.getoption("--declint-shim-strict"),
        probe_sdpa=config.getoption("--declint-shim-probe-sdpa"),
        activated_by="pytest",
        layer_check=config.getoption("--declint-shim-layer-check"),
    )
    config._declint_shim = True


def pytest_report_header(config: Any) -> str | None:
    if not getattr(config, "_declint_shim", False):
        return None
    from declint.runtime_shim import status

    return str(status()).splitlines()[0]


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: Any) -> None:
    if not getattr(config, "_declint_shim", False):
        return
    from declint.runtime_shim import violations

    found = violations()
    terminalreporter.section("declint runtime shim")
    terminalreporter.write_line(f"{len(found)} violation(s)")
    for violation in found[:50]:
        terminalreporter.write_line(violation.render())


def pytest_unconfigure(config: Any) -> None:
    if getattr(config, "_declint_shim", False):
        from declint.runtime_shim import uninstall

        uninstall()
