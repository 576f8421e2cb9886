"""PTX reader: PTX assembly text → one `FunctionIR` per `.entry`/`.func`. Pure: text in, data out.

The work is split by job: `syntax` (tokens, module structure), `instructions` (parse and
classify one instruction), `cfg` (blocks, dominators, loops), `values` (symbolic register
values), `trips` and `recurrence` (trip counts), `memory` (access patterns) and `launch`
(launch sizes, the per-thread unit). `reading` ties them together per function.
Counts are per thread. Anything not recognised degrades to "unknown" with an assumption string,
never an exception.
"""
from __future__ import annotations

from ccls.readers.ptx.launch import Launch
from ccls.readers.ptx.reading import arch_for_target, demangle_simple, read_ptx

__all__ = ["Launch", "arch_for_target", "demangle_simple", "read_ptx"]
