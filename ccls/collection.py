"""How often this process collects garbage while it analyses.

Reading a file makes hundreds of thousands of small objects that live as long as its analysis:
CPython's default collects the youngest generation every 700 allocations, and with them rescans
the heap as it grows. Every 50,000 takes 5-11 % off a file's CPU (zlib's deflate.c, lz4's
lz4hc.c) for up to ~10 % more peak memory on the largest (mypy collects every 200,000).
"""
import gc

THRESHOLDS = (50_000, 10, 10)


def collect_less_often() -> None:
    """This process's collection thresholds as the analysis wants them (`THRESHOLDS`)."""
    gc.set_threshold(*THRESHOLDS)
