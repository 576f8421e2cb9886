"""Lower LLVM IR to target assembly with LLVM's code generator (llvmlite's target machine), so
executed machine instructions can be estimated per IR block. In-process; no files."""
from __future__ import annotations

import threading

import llvmlite.binding as llvm

_init_lock = threading.Lock()
_initialised = False
# LLVM's code generator is not safe to drive from several threads at once.
_codegen_lock = threading.Lock()


def _initialise() -> None:
    global _initialised
    with _init_lock:
        if not _initialised:
            llvm.initialize_all_targets()
            llvm.initialize_all_asmprinters()
            _initialised = True


def verbose_assembly(ir_text: str, triple: str | None = None, cpu: str = "") -> str:
    """Assembly with IR block names as comments (``# %for.body``). Raises RuntimeError from
    llvmlite when the IR can't be parsed or the target is unknown."""
    _initialise()
    with _codegen_lock:
        module = llvm.parse_assembly(ir_text)
        target = llvm.Target.from_triple(triple or module.triple or llvm.get_default_triple())
        # Match clang's defaults for the same triple: PIC, small code model, generic CPU.
        machine = target.create_target_machine(cpu=cpu, opt=2, reloc="pic", codemodel="small")
        machine.set_asm_verbosity(True)
        return machine.emit_assembly(module)
