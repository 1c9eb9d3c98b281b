"""`declint check --timings`: where a run's time went, for a user whose hook or CI job is slow.

Printed on stderr, after the report, so that no machine-readable output changes. The phases are
the engine's own (`RunStats`), wall time in the order they began; the check's workers start
before the project rules and run while they do, so "check" is this process's time starting them
and then waiting for them. CPU time is this process's and its finished worker processes'
(`getrusage`, where the platform has it).
"""

from __future__ import annotations

from declint.engine import RunStats

try:  # POSIX only; elsewhere the CPU line is left out
    import resource
except ImportError:  # pragma: no cover - Windows
    resource = None  # type: ignore[assignment]

CpuTimes = tuple[float, float]  # (this process, its waited-for children), user + system seconds


def cpu_times() -> CpuTimes | None:
    if resource is None:
        return None
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, children.ru_utime + children.ru_stime


def render(stats: RunStats, wall: float, start: CpuTimes | None, end: CpuTimes | None) -> str:
    phases = ", ".join(f"{name} {seconds:.3f} s" for name, seconds in stats.seconds.items())
    lines = [f"declint: timings (wall): {phases or 'no phase ran'}; total {wall:.3f} s after start-up"]
    if start is not None and end is not None:
        lines.append(
            f"declint: CPU: start-up and imports {start[0]:.2f} s, this process {end[0] - start[0]:.2f} s, "
            f"workers {end[1] - start[1]:.2f} s"
        )
    lines.append(
        f"declint: files: {stats.files_read} read, {stats.files_indexed} indexed in full, "
        f"{stats.files_checked_fresh} checked, {stats.check_cache_hits} results from the cache, "
        f"{stats.worker_crashes} worker crashes, {stats.worker_timeouts} timeouts"
    )
    if stats.stats_at_start:
        lines.append("declint: the snapshot's files were stat'ed while declint started (a child process)")
    if stats.directories_rewalked:
        lines.append(
            f"declint: a file added or removed since the last run: {stats.directories_rewalked} "
            f"director{'y' if stats.directories_rewalked == 1 else 'ies'} walked again, the rest of its walk kept"
        )
    if stats.workers_warmed:
        lines.append(
            f"declint: check workers forked ahead to import libcst: {stats.workers_warmed}, "
            f"used by the check: {stats.workers_adopted}"
        )
    return "\n".join(lines) + "\n"
