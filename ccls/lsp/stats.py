"""The server's counters and the `ccls/stats` request's answer: what the service compiled and
cached, what the session analysed, published and dropped, and the process's memory."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class Stats:
    """What the session counted: passes, publications, stale and superseded results, and the
    last pass's figures per document."""

    analyses: int = 0
    published: int = 0
    stale_dropped: int = 0
    superseded: int = 0
    last: dict[str, dict] = field(default_factory=dict)


def pass_figures(version: int, outcome: Any) -> dict:
    """What one pass over a document did (`Stats.last`): compiles, functions compiled and
    cached, whether the unit was reduced (or why not), its time, the functions left."""
    return {
        "version": version, "compiles": outcome.compiles,
        "compiledFunctions": outcome.compiled_functions, "cachedFunctions": outcome.cached_functions,
        "reduced": outcome.reduced, "fallback": outcome.fallback,
        "durationMs": round(outcome.duration_s * 1000, 1), "pendingFunctions": len(outcome.pending),
    }


def stats_json(stats: Stats, service: Any, debounce_s: float, encoding: str, settings: Any, workspace: Any,
               background: Any) -> dict:
    """The `ccls/stats` answer (`service`, `workspace`: None before they start)."""
    analyzer = service.analyzer if service is not None else None
    cache = service.cache if service is not None else None
    memo = service.memo if service is not None else None
    return {
        "compiles": analyzer.compiles if analyzer else 0,
        "functionsCompiled": analyzer.functions_compiled if analyzer else 0,
        "cacheHits": cache.hits if cache else 0,
        "cacheMisses": cache.misses if cache else 0,
        "cacheWrites": cache.writes if cache else 0,
        "cachePath": cache.path if cache else None,
        "analyses": stats.analyses,
        "published": stats.published,
        "staleDropped": stats.stale_dropped,
        "superseded": stats.superseded,
        "reports": memo.reports if memo else 0,
        "cohortSize": memo.cohort_size if memo else 0,
        "debounceMs": round(debounce_s * 1000, 1),
        "positionEncoding": encoding,
        "settings": {"profile": settings.profile, "region": settings.region, "scoring": settings.scoring},
        "documents": stats.last,
        "workspace": workspace.stats() if workspace is not None else None,
        "background": background.stats(),
        "rssMB": rss_mb(),
    }


def rss_mb() -> float | None:
    """This process's resident memory in MiB (Linux; None elsewhere)."""
    try:
        with open("/proc/self/status") as handle:
            for line in handle:
                if line.startswith("VmRSS:"):
                    return round(int(line.split()[1]) / 1024, 1)
    except OSError:
        pass
    return None
