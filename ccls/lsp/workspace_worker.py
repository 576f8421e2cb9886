"""What a worker process runs for the workspace pass (`ccls.lsp.workspace`): one file counted
whole. Apart from workspace.py so that the workers load neither the protocol types, pygls nor
the file watcher (~18 MB a process)."""
from __future__ import annotations

import dataclasses
import os

from ccls.lsp.documents import DocumentModel
from ccls.model import CountedFunction
from ccls.options import AnalysisOptions
from ccls.service.background import worker_analyzer
from ccls.service.counts import all_counted, language_for, size_values
from ccls.service.program_sizes import DocumentSizes
from ccls.service.reports import CohortMember

MAX_FILE_BYTES = 2 * 1024 * 1024


def count_file(path: str, options: AnalysisOptions, sizes: DocumentSizes,
               cache_directory: str | None) -> tuple[list[CohortMember], list[CountedFunction], tuple] | None:
    """One workspace file counted whole, on a worker process: (its functions as cohort members,
    its counted functions without their IR — the server keeps their call sites —, the size
    values used); None for a file that is gone, too large or of no kind ccls reads."""
    language = language_for(path)
    try:
        if language is None or os.path.getsize(path) > MAX_FILE_BYTES:
            return None
        with open(path, "rb") as handle:
            raw = handle.read()
    except OSError:
        return None  # deleted or unreadable meanwhile
    # surrogateescape: undecodable bytes reach the compiler unchanged.
    model = DocumentModel("file://" + path, path, language, raw.decode("utf-8", "surrogateescape"), 0)
    outcome = worker_analyzer(cache_directory).analyse(model.snapshot(), options, remember=False, sizes=sizes)
    counted = [dataclasses.replace(cf, ir_text="") for cf in all_counted(outcome)]
    members = [CohortMember.of(cf, options) for cf in counted]
    return members, counted, size_values(sizes)
