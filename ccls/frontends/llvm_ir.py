"""LLVM IR files (.ll text, .bc bitcode): analysed as given — no re-optimisation, since the
IR is the program the user wants costed."""
from __future__ import annotations

import llvmlite.binding as llvm

from ccls import toolchain
from ccls.frontends import FrontendResult, SourceFile
from ccls.frontends.c_family import CompileFailed, read_ir_text
from ccls.model import AnalysisError
from ccls.options import AnalysisOptions
from ccls.readers.llvm_ir import IRNotReadable


def analyze_llvm_ir(source: SourceFile, options: AnalysisOptions) -> FrontendResult:
    text = source.text
    if source.path.endswith(".bc"):
        try:
            with open(source.path, "rb") as handle:
                text = str(llvm.parse_bitcode(handle.read()))
        except (OSError, RuntimeError) as problem:
            return FrontendResult(errors=[AnalysisError(source.path, None, f"not readable LLVM bitcode: {problem}")])
    try:
        functions = read_ir_text(text, source.path, "llvm-ir", options)
    except CompileFailed as failed:
        return FrontendResult(errors=[failed.error])
    except (toolchain.ToolMissing, toolchain.ToolLimit, IRNotReadable) as problem:
        return FrontendResult(errors=[AnalysisError(source.path, None, str(problem))])
    return FrontendResult(functions=functions)
