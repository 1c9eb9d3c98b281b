"""Warm and one-file-touched runs of two (or more) installed versions of declint, alternating.

    python benchmarks/touch_ab.py --rounds 5 /tmp/ab-base /tmp/ab-head

Each directory is a `pip install --no-deps --target` of declint, as for `ab.py`. Every round,
for each version: the cache of the transformers sources is removed, declint runs twice (cold,
then warm), a third time (the warm run timed), then once more after a comment is appended to
`transformers/integrations/sdpa_attention.py` (a file with a DL101 call site, as `run.py`'s
"one file touched" case), which is restored and dated an hour back afterwards. With
`--same-bytes` the file is only touched (a new mtime, as `touch` gives it; run.py's "one file
touched, same bytes"). Prints each version's medians, their ratio, and every (warm, touched) pair.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import time

from installed import WORK, timed_check

CORPUS = WORK / "transformers"
TOUCHED = CORPUS / "transformers" / "integrations" / "sdpa_attention.py"


def timed_run(installed: str) -> float:
    return timed_check(installed, CORPUS, "transformers")


def one_round(installed: str, original: bytes, same_bytes: bool) -> tuple[float, float]:
    shutil.rmtree(CORPUS / ".declint_cache", ignore_errors=True)
    timed_run(installed)
    timed_run(installed)
    warm = timed_run(installed)
    if same_bytes:
        os.utime(TOUCHED)
    else:
        TOUCHED.write_bytes(original + b"\n# touched\n")
    try:
        touched = timed_run(installed)
    finally:
        TOUCHED.write_bytes(original)
        past = time.time() - 3600  # as the checkout's other files: not within the racy window
        os.utime(TOUCHED, (past, past))
    return warm, touched


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("installed", nargs="+", help="directories made by pip install --no-deps --target")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--same-bytes", action="store_true", help="touch the file instead of appending a comment")
    args = parser.parse_args()
    original = TOUCHED.read_bytes()
    pairs: dict[str, list[tuple[float, float]]] = {name: [] for name in args.installed}
    for _ in range(args.rounds):
        for installed in args.installed:
            pairs[installed].append(one_round(installed, original, args.same_bytes))
    for installed, found in pairs.items():
        warm = statistics.median(pair[0] for pair in found)
        touched = statistics.median(pair[1] for pair in found)
        samples = ", ".join(f"{a:.2f}/{b:.2f}" for a, b in found)
        print(f"{installed}: warm {warm:.3f} s, touched {touched:.3f} s, ratio {touched / warm:.2f} ({samples})")


if __name__ == "__main__":
    main()
