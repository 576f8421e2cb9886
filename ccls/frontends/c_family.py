"""C and C++ (and CUDA host code): clang → LLVM IR with line tables, before optimisation (every
function kept) → clang's own optimisation pipeline at the build's level (-O2 by default) →
opt's loop and ScalarEvolution analyses → FunctionIR. The buffer is compiled from a private temp dir; the
user's files are only read (as includes), never written. With `options.preamble_dir` (the
language server) the buffer's include block is precompiled there once (`ccls.preamble`)."""
from __future__ import annotations

import dataclasses
import importlib
import logging
import os
import re
import sys
import tempfile
import threading
from concurrent.futures import Future
from typing import Any, Iterator, NamedTuple, Sequence

from ccls import compile_db, preamble, toolchain
from ccls.demangle import demangled_names, without_parameters  # noqa: F401 - without_parameters: callers
from ccls.frontends import FrontendResult, as_built, SourceFile, language_named, suffix_language
from ccls.frontends.compiler_errors import first_error
from ccls.model import AnalysisError, FunctionIR
from ccls.options import OPTIMIZATION_LEVELS, AnalysisOptions
from ccls.readers.call_sites import ModuleCalls, read_call_sites
from ccls.readers.global_constants import passed_globals, read_only_constants, with_contents
from ccls.targets import CPU_TARGETS

log = logging.getLogger(__name__)
# Two opt runs: the first names values and prints the loops (cheap), the second prints
# ScalarEvolution and branch probabilities for the named IR (on a large module, many times the
# compile). The machine code is lowered and simulated (llvm-mca) while the second one runs.
NAMING_PASSES = "instnamer,print<loops>"
SCEV_PASSES = "print<scalar-evolution>,print<branch-prob>"
ANALYSIS_PASSES = f"{NAMING_PASSES},{SCEV_PASSES}"  # the same analyses in one run
STDIN_NAME = "<stdin>"  # clang's name for the main file it reads from stdin (diagnostics, debug info)
# What reading the compiled IR needs (llvmlite and the IR readers: ~0.1 s of a cold run's imports),
# loaded on a thread while clang compiles (`_load_meanwhile`): waiting for clang releases the GIL.
_READERS = ("ccls.readers.llvm_ir", "ccls.readers.scev", "ccls.machine_code", "ccls.frontends.machine_cycles")


class CompileFailed(Exception):
    def __init__(self, error: AnalysisError):
        super().__init__(error.message)
        self.error = error


def analyze_c(source: SourceFile, options: AnalysisOptions) -> FrontendResult:
    return analyze_with_clang(source, options, "c", [])


def analyze_cpp(source: SourceFile, options: AnalysisOptions) -> FrontendResult:
    return analyze_with_clang(source, options, "cpp", [])


def header_language(path: str) -> str | None:
    """"cpp" for a `.h` the build or its neighbours say is C++, "c" for one they say is C, None
    when nothing says (then clang's choice, C, stands). In order: the compile database (the
    file's entry or the one clangd would borrow flags from) or `compile_flags.txt`; a source
    of the same stem beside it; the sources of its directory, if they are all of one kind."""
    declared = compile_db.build_language(path)
    if declared is None:
        directory, name = os.path.split(os.path.abspath(path))
        stem = os.path.splitext(name)[0]
        try:
            names = os.listdir(directory)
        except OSError:
            names = []
        kinds = {(os.path.splitext(n)[0] == stem, language.name) for n in names
                 if (language := suffix_language(n)) is not None and language.clang_x
                 and not n.endswith(language.includes)}
        same_stem = {kind for same, kind in kinds if same}
        nearby = same_stem or {kind for _, kind in kinds}
        declared = "c" if nearby == {"c"} else "cpp" if nearby and "c" not in nearby else None
    return {"cuda": "cpp"}.get(declared, declared) if declared in ("c", "cpp", "cuda") else None


def analyze_with_clang(source: SourceFile, options: AnalysisOptions, language: str,
                       extra_flags: list[str]) -> FrontendResult:
    """Compile one buffer with clang and read every function it defines (not those of headers)."""
    flags = compile_db.flags_for(source.path, language=language, override=options.flags_override,
                                 extra=options.extra_flags, query_driver=options.query_driver)
    options = _built_level(flags.flags, options)
    loading = _load_meanwhile(_READERS)
    try:
        with tempfile.TemporaryDirectory(prefix="ccls-") as work:
            opt = None
            try:
                opt = start_opt(options)  # names values and prints the loops; starts while clang runs
                ir_text, assumptions, code_flags = _compile(source, options, language, extra_flags, work, flags)
                calls = CallSiteReader(ir_text, source.path, options)  # runs beside the optimiser
                # Every function is emitted before optimisation (-femit-all-decls), and each is kept
                # whole beside the copies the build inlines (`as_built`): what a person edits
                # is reported even where the build has no function of its own.
                optimised = _optimise(as_built.with_twins(ir_text), code_flags, source, options)
            except BaseException:
                if opt is not None:
                    opt.cancel()
                raise
            finally:
                if loading is not None:  # before this thread imports anything itself
                    loading.join()
            outline = _outline(source, language)
            functions = read_ir_text(optimised, source.path, language, options, main_file=STDIN_NAME, opt=opt,
                                     loop_bounds=outline.loop_bounds if outline is not None else ())
    except CompileFailed as failed:
        return FrontendResult(errors=[failed.error])
    except (toolchain.ToolMissing, toolchain.ToolLimit) as problem:
        return FrontendResult(errors=[AnalysisError(source.path, None, str(problem))])
    except _ir_not_readable() as problem:  # the file alone is lost, never the run
        return FrontendResult(errors=[AnalysisError(source.path, None, f"ccls cannot read the compiled IR: {problem}")])
    _demangle(functions, options)
    if outline is not None:
        _source_ranges(functions, outline.functions)
    for fn in functions:
        fn.assumptions[:0] = assumptions
        fn.compile_flags = code_flags
    return FrontendResult(functions=functions, calls=calls.result())


def _load_meanwhile(modules: Sequence[str]) -> threading.Thread | None:
    """Import `modules` on a thread (None when they are loaded already): the caller joins it
    before importing anything itself, so the two never wait on each other's import locks. A
    module that fails to import fails again, with its error, where it is used."""
    missing = [name for name in modules if name not in sys.modules]
    if not missing:
        return None

    def load() -> None:
        for name in missing:
            try:
                importlib.import_module(name)
            except Exception:  # noqa: BLE001 - raised again at the import where it is used
                return
    thread = threading.Thread(target=load, name="ccls-load-readers", daemon=True)
    thread.start()
    return thread


def _ir_not_readable() -> type[Exception]:
    """`IRNotReadable`, imported where an exception is being matched (not with this module)."""
    from ccls.readers.llvm_ir import IRNotReadable

    return IRNotReadable


class CallSiteReader:
    """What the module's call sites pass (`ccls.readers.call_sites`), read from the IR before
    optimisation once SROA and constant folding have run, on a thread beside the main
    analysis, with what pointers into read-only globals hold (`&PARAMS`). A failure only loses
    the sizes: the result is then None."""

    # function-attrs marks the parameters a function only reads: a global passed to one and
    # never written elsewhere holds its initializer (`ccls.readers.global_constants`).
    PASSES = "function(sroa,early-cse,instsimplify),cgscc(function-attrs)"

    def __init__(self, ir_text: str, path: str, options: AnalysisOptions):
        self._result: ModuleCalls | None = None
        self._thread = threading.Thread(target=self._read, args=(ir_text, path, options), daemon=True)
        self._thread.start()

    def _read(self, ir_text: str, path: str, options: AnalysisOptions) -> None:
        try:
            done = toolchain.start_warm([toolchain.require_tool("opt"), f"-passes={self.PASSES}", "-S", "-o", "-", "-"],
                                        memory_mb=options.compile_memory_mb,
                                        warm=options.warm_tools).finish(ir_text, options.compile_timeout_s)
        except (toolchain.ToolMissing, toolchain.ToolLimit):
            return
        if done.returncode == 0:
            try:
                calls = read_call_sites(done.stdout, path)
                self._result = with_contents(calls, read_only_constants(done.stdout, passed_globals(calls)))
            except Exception as exc:  # a reader bug loses the sizes, never the file (nor prints a traceback)
                log.warning("call sites of %s not read: %s", path, exc)

    def result(self) -> ModuleCalls | None:
        self._thread.join()
        return self._result


def _optimise(ir_text: str, code_flags: Sequence[str], source: SourceFile, options: AnalysisOptions) -> str:
    """The IR after clang's own optimisation pipeline at the build's level and flags, as the
    program's binary gets it (`opt -passes=default<O2>` differs: on a float reduction it
    unrolls by 8 where clang unrolls by 5). Only flags that shape optimisation reach it
    (clang refuses -std and the like for IR)."""
    clang = toolchain.require_tool("clang")
    shaping = [f for f in code_flags if f.startswith(("--target=", "-O", "-f", "-m")) and not f.startswith("-fsyntax")]
    optimiser = toolchain.start_warm([clang, *shaping, "-fno-discard-value-names", "-Qunused-arguments",
                                      "-Wno-unknown-warning-option", "-x", "ir", "-S", "-emit-llvm", "-o", "-", "-"],
                                     memory_mb=options.compile_memory_mb, warm=options.warm_tools)
    result = optimiser.finish(ir_text, options.compile_timeout_s)
    if result.returncode != 0:
        raise CompileFailed(_compile_error(result.stderr, source))
    return result.stdout


def _built_level(flags: Sequence[str], options: AnalysisOptions) -> AnalysisOptions:
    """The options at the optimisation level the program is built with: the last `-O` of its
    compile database (or flags setting), where that is one ccls can analyse; else as given."""
    levels = [_LEVEL_ALIASES.get(flag, flag) for flag in flags if flag.startswith("-O")]
    if levels and levels[-1] in OPTIMIZATION_LEVELS and levels[-1] != options.optimization:
        return dataclasses.replace(options, optimization=levels[-1])
    return options


_LEVEL_ALIASES = {"-O": "-O1", "-Ofast": "-O3", "-O4": "-O3"}  # as clang reads them (-Ofast's -ffast-math stays a flag)


def _buffer_name(source: SourceFile) -> str:
    return os.path.basename(source.path) or "buffer.c"


def _compile(source: SourceFile, options: AnalysisOptions, language: str, extra_flags: list[str],
             work: str, flags: compile_db.CompileFlags) -> tuple[str, list[str], tuple[str, ...]]:
    """(LLVM IR before optimisation, assumptions, the flags that shape the code: target,
    the compile database's or settings' flags, optimisation level)."""
    clang = toolchain.require_tool("clang")
    toolchain.start_versions(("clang",))  # named in the assumptions: its --version runs beside the compile

    def assumptions() -> list[str]:
        said = [f"compiled by {toolchain.tool_version('clang') or clang} {options.optimization}; "
                f"flags from {flags.origin}"]
        if flags.dropped:
            said.append("unsafe flags ignored: " + " ".join(flags.dropped))
        return said
    source_dir = os.path.dirname(os.path.abspath(source.path))
    target = CPU_TARGETS.get(options.arch)
    head = [clang, f"--target={target[0]}"] if target else [clang]
    common = [*flags.flags, *extra_flags, options.optimization,
              "-gline-tables-only", "-fno-discard-value-names", "-femit-all-decls", "-fno-crash-diagnostics",
              "-Qunused-arguments", "-Wno-unknown-warning-option", "-Xclang", "-disable-llvm-passes",
              f"-iquote{source_dir}", f"-I{source_dir}"]
    code_flags = (*head[1:], *flags.flags, *extra_flags, options.optimization)
    cwd = flags.directory if os.path.isdir(flags.directory) else work
    record = language_named(language)
    split = preamble.split(source.text) if options.preamble_dir and record.preamble_x else None
    if split is not None:
        store = preamble.PreambleStore(options.preamble_dir)
        key = store.key(toolchain.tool_version("clang"), head + common, cwd, split.header)
        pch = store.lookup(key)
        if pch is not None:
            argv = [*head, "-x", record.clang_x, *common, "-include-pch", pch]
            ir_text = _run_clang(argv, split.body, source, options, cwd)
            if ir_text is not None:
                return ir_text, assumptions(), code_flags
            store.drop(key)  # on any doubt, compile the whole text without it
    ir_text = _run_clang([*head, "-x", record.clang_x, *common], source.text, source, options, cwd,
                         raise_on_error=True)
    if split is not None and pch is None:
        # Built only after the buffer compiled: a preamble that fails is never retried.
        _build_preamble(store, key, split.header, [*head, "-x", record.preamble_x, *common], options, cwd)
    return ir_text, assumptions(), code_flags


def _run_clang(argv: list[str], text: str, source: SourceFile, options: AnalysisOptions, cwd: str,
               raise_on_error: bool = False) -> str | None:
    """LLVM IR of `text`, or None when clang fails and `raise_on_error` is not set."""
    # The buffer may differ from disk, so it goes in on stdin; the original directory stays on
    # the include path for "local.h" includes, and -main-file-name keeps the module's name.
    clang = toolchain.start_warm([*argv, "-S", "-emit-llvm", "-o", "-", "-Xclang", "-main-file-name",
                                  "-Xclang", _buffer_name(source), "-"],
                                 memory_mb=options.compile_memory_mb, cwd=cwd, warm=options.warm_tools)
    # Undecodable bytes of the file arrive as surrogate escapes: give clang the bytes back.
    result = clang.finish(text.encode("utf-8", "surrogateescape"), options.compile_timeout_s)
    if result.returncode != 0:
        if raise_on_error:
            raise CompileFailed(_compile_error(result.stderr, source))
        return None
    return result.stdout


def _build_preamble(store: preamble.PreambleStore, key: str, header_text: str, argv: list[str],
                    options: AnalysisOptions, cwd: str) -> None:
    """Precompile the preamble for the next compile of this buffer; failures only cost speed."""
    if store.failed(key):
        return
    prepared = store.prepare(key, header_text)
    if prepared is None:
        return
    header, building = prepared
    try:
        result = toolchain.run_tool([*argv, "-o", building, header], timeout_s=options.compile_timeout_s,
                                    memory_mb=options.compile_memory_mb, cwd=cwd)
    except toolchain.ToolLimit:
        result = None
    if result is not None and result.returncode == 0:
        store.commit(key, building)
    else:
        store.discard(building)
        store.mark_failed(key)


def _compile_error(stderr: str, source: SourceFile) -> AnalysisError:
    first = first_error(stderr.replace(STDIN_NAME, _buffer_name(source)), _buffer_name(source), "compile")
    return AnalysisError(source.path, first.line, first.message)


def start_opt(options: AnalysisOptions) -> toolchain.RunningTool:
    """opt, started ahead of its input: name values, print LLVM's loops (to stderr) and the
    named IR (to stdout) for the IR fed to it on stdin."""
    return toolchain.start_warm([toolchain.require_tool("opt"), f"-passes={NAMING_PASSES}", "-S", "-o", "-", "-"],
                                memory_mb=options.compile_memory_mb, warm=options.warm_tools)


def _start_scev(options: AnalysisOptions) -> toolchain.RunningTool:
    """opt, started ahead of its input: print ScalarEvolution and branch probabilities (to
    stderr) for the named IR `start_opt` prints. Debug info is stripped first: neither analysis
    reads it, and the printer's slot tracker walks all of the module's metadata for every
    instruction it prints (most of this opt's time on a large function)."""
    return toolchain.start_warm([toolchain.require_tool("opt"), "-strip-debug", f"-passes={SCEV_PASSES}",
                                 "-disable-output", "-"],
                                memory_mb=options.compile_memory_mb, warm=options.warm_tools)


class _Printout:
    """opt's ScalarEvolution printout as it is made: one section per function (its SCEV, then its
    branch probabilities), each handed over once the next one starts (or opt ends), so a
    function is read while opt still prints those after it."""

    _STARTS = "Printing analysis 'Scalar Evolution Analysis' for function '"

    def __init__(self, tool: toolchain.RunningTool, text: str, timeout_s: float):
        self._sections: list[tuple[str, str] | None] = []  # (function as its header names it, its text)
        self._name: str | None = None
        self._lines: list[str] = []
        self._done = threading.Condition()
        self._ended = False
        self._future: Future = Future()
        threading.Thread(target=self._run, args=(tool, text, timeout_s), name="ccls-opt-scev", daemon=True).start()

    def _run(self, tool: toolchain.RunningTool, text: str, timeout_s: float) -> None:
        try:
            self._future.set_result(tool.finish_lines(text, timeout_s, self._line))
        except BaseException as exc:  # noqa: BLE001 - handed to the reader through the future
            self._future.set_exception(exc)
        finally:
            with self._done:
                self._close_section()
                self._ended = True
                self._done.notify_all()

    def _line(self, line: str) -> None:
        if line.startswith(self._STARTS) and line.endswith("':"):
            with self._done:
                self._close_section()
                self._name = line[len(self._STARTS):-2]
                self._done.notify_all()
        self._lines.append(line)

    def _close_section(self) -> None:  # under the condition's lock
        if self._lines:
            self._sections.append((self._name or "", "".join(line + "\n" for line in self._lines)))
            self._lines = []

    def sections(self) -> Iterator[tuple[str, str]]:
        """Each completed section (name, text) in the order opt printed them, waiting for the next."""
        given = 0
        while True:
            with self._done:
                while given == len(self._sections) and not self._ended:
                    self._done.wait()
                ready = self._sections[given:]
                self._sections[given:] = [None] * len(ready)  # handed over: not kept twice
            if not ready:  # opt has ended and everything it printed was handed over
                return
            given += len(ready)
            yield from ready

    def result(self) -> toolchain.ToolResult:
        return self._future.result()


def read_ir_text(ir_text: str, path: str, language: str, options: AnalysisOptions,
                 main_file: str | None = None, opt: toolchain.RunningTool | None = None,
                 loop_bounds: Sequence[Any] = ()) -> list[FunctionIR]:
    """Run `opt` (default: analyses only) on the IR, lower it to assembly, read it; llvm-mca
    estimates the blocks' cycles meanwhile. `loop_bounds`: source_map.LoopBound of the source."""
    from ccls.frontends.machine_cycles import CYCLES
    from ccls.machine_code import lowering_skipped, verbose_assembly
    from ccls.readers.llvm_ir import ModuleText, parse_module, parsed_ir, readable_ir
    from ccls.readers.scev import parse_opt_output

    opt = opt or start_opt(options)
    try:
        scev = _start_scev(options)
    except BaseException:
        opt.cancel()
        raise
    try:
        result = opt.finish(ir_text, options.compile_timeout_s)
    except BaseException:
        scev.cancel()
        raise
    if result.returncode != 0:
        scev.cancel()
        raise CompileFailed(_opt_error(result.stderr, path))
    printed = _Printout(scev, result.stdout, options.compile_timeout_s)
    lowering = None
    try:
        too_large = lowering_skipped(len(result.stdout)) if options.machine_code else None
        if options.machine_code and too_large is None:
            lowering = _start_lowering(result.stdout, options)  # llc runs while the IR is parsed and read
        named = readable_ir(result.stdout)  # as llvmlite's LLVM reads it (x86_mmx upgraded)
        # Parsed once, printed for the reader before the code generator changes it.
        parsed, printed_ir = parsed_ir(named)
        assembly = None
        if lowering is not None:
            assembly = lowering.assembly()
        elif options.machine_code and too_large is None:
            try:
                assembly = verbose_assembly(named, parsed=parsed)
            except RuntimeError:
                assembly = None  # e.g. a triple llvmlite can't lower; counts still work
        del parsed
        # The machine blocks' contexts need only the loops: llvm-mca starts before ScalarEvolution is in.
        module = parse_module(ModuleText(named, parse_opt_output(result.stderr), assembly), main_file,
                              printed=printed_ir)
        blocks = module.machine_blocks()
        pending = CYCLES.start(blocks, options) if blocks else None
        functions = _read_as_printed(module, printed, _by_function(result.stderr), path, language, options,
                                     loop_bounds)
    except BaseException:
        scev.kill()  # its thread reaps it
        if lowering is not None:
            lowering.cancel()
        raise
    if pending is not None:
        _attach_block_cycles(functions, pending.result())
    for fn in functions if too_large else ():
        fn.assumptions.append(too_large)
    return functions


# The code generator's level clang runs at each optimisation level (-Os and -Oz generate code as -O2 does).
_CODEGEN_LEVEL = {"-O1": "-O1", "-O2": "-O2", "-O3": "-O3", "-Os": "-O2", "-Oz": "-O2"}


class _Lowering:
    """`llc` lowering the optimised IR to assembly with the build's own LLVM (the clang that
    compiled it), as the program's object code is made: the build's code-generation level, PIC,
    small code model, the functions' own target CPU and features, verbose (IR block names as
    comments); on a thread, so that it runs while this one parses and reads the IR."""

    def __init__(self, llc: str, ir_text: str, options: AnalysisOptions):
        level = _CODEGEN_LEVEL.get(options.optimization, "-O2")
        self._tool = toolchain.start_warm([llc, level, "-relocation-model=pic", "-code-model=small", "-asm-verbose",
                                           "-o", "-", "-"], memory_mb=options.compile_memory_mb, warm=options.warm_tools)
        self._assembly: str | None = None
        self._thread = threading.Thread(target=self._run, args=(ir_text, options.compile_timeout_s),
                                        name="ccls-llc", daemon=True)
        self._thread.start()

    def _run(self, ir_text: str, timeout_s: float) -> None:
        try:
            result = self._tool.finish(ir_text, timeout_s)
        except (toolchain.ToolLimit, OSError):
            return
        if result.returncode == 0:
            self._assembly = result.stdout

    def assembly(self) -> str | None:
        """What llc printed, or None where it failed (counts then come from the IR instructions)."""
        self._thread.join()
        return self._assembly

    def cancel(self) -> None:
        self._tool.cancel()


def _start_lowering(ir_text: str, options: AnalysisOptions) -> _Lowering | None:
    """llc started on `ir_text`, or None without llc (then llvmlite lowers it, in this process)."""
    llc = toolchain.find_tool("llc")
    return _Lowering(llc, ir_text, options) if llc is not None else None


def _by_function(loops: str) -> dict[str, str]:
    """`print<loops>`' printout cut per function (by the name its header line gives)."""
    out: dict[str, str] = {}
    name = ""
    for line in loops.splitlines(keepends=True):
        if line.startswith("Loop info for function '") and line.rstrip("\n").endswith("':"):
            name = line.rstrip("\n")[len("Loop info for function '"):-2]
        out[name] = out.get(name, "") + (line if line.endswith("\n") else line + "\n")
    return out


def _read_as_printed(module: Any, printed: _Printout, loops: dict[str, str], path: str, language: str,
                     options: AnalysisOptions, loop_bounds: Sequence[Any]) -> list[FunctionIR]:
    """Each function of `module` read as soon as opt has printed its analyses: each is read
    alone, with its own loops, ScalarEvolution and branch probabilities, as one opt run would
    have printed them (`parse_opt_output` keeps nothing from one function to the next)."""
    from ccls.readers.llvm_ir import ModuleText, read_functions
    from ccls.readers.scev import parse_opt_output

    analyses: dict = {}
    sections = printed.sections()
    done: list[FunctionIR] = []
    unread = list(module.functions)
    while unread:
        wanted = unread[0].fn.name
        if wanted not in analyses:
            section = next(sections, None)
            if section is not None:
                name, text = section
                analyses.update(parse_opt_output(loops.pop(name, "") + text))
                continue
            analysed = printed.result()  # opt has ended: its failure is the file's error
            if analysed.returncode != 0:
                raise CompileFailed(_opt_error(analysed.stderr, path))
            analyses.update(parse_opt_output("".join(loops.values())))  # functions it printed no SCEV for
            loops.clear()
        alone = dataclasses.replace(module, functions=[unread.pop(0)],
                                    module=ModuleText(module.module.ir, analyses, module.module.assembly))
        done += read_functions(alone, path, language, options.arch, options.default_trip_count, loop_bounds,
                               early_exit=options.early_exit)
    analysed = printed.result()
    if analysed.returncode != 0:
        raise CompileFailed(_opt_error(analysed.stderr, path))
    return done


def _attach_block_cycles(functions: list[FunctionIR], timings: dict[tuple[str, ...], Any]) -> None:
    """llvm-mca's cycles per machine block; the assembly text is dropped afterwards, it is only
    needed for this."""
    from ccls.machine_code import divides

    for fn in functions:
        for block in fn.blocks:
            if block.machine_code:
                timing = timings.get(block.machine_code)
                if timing is not None:
                    block.machine_cycles, block.machine_throughput = timing.cycles, timing.throughput
                    block.machine_cycles = _in_context(timing, timings.get(block.machine_context),
                                                       timings.get(block.machine_context + block.machine_code))
                block.machine_divides = divides(block.machine_code)
                block.machine_code = block.machine_context = ()
        fn.trace_cycles = {loop: timing.cycles for loop, code in fn.machine_traces.items()
                           if (timing := timings.get(code)) is not None}
        fn.machine_traces = {}


def _in_context(alone: Any, before: Any, both: Any) -> float:
    """A block's cycles as it runs after the block before it in the same iteration: what the
    two take together less what the one before takes alone, no less than the block's own
    throughput (see readers.llvm.machine._contexts). Its cycles alone where there is no block before it."""
    if before is None or both is None:
        return alone.cycles
    return max(alone.throughput, both.cycles - before.cycles)


def _opt_error(stderr: str, path: str) -> AnalysisError:
    stderr = stderr.replace(STDIN_NAME, os.path.basename(path))
    m = re.search(r":(\d+):(\d+): error: (.*)", stderr)
    return AnalysisError(path, int(m.group(1)) if m else None, stderr.strip()[:2000] or "opt failed")


def _demangle(functions: list[FunctionIR], options: AnalysisOptions) -> None:
    names = demangled_names(fn.name for fn in functions)
    for fn in functions:
        if fn.name in names:
            fn.display_name = names[fn.name]


class _Outline(NamedTuple):
    functions: list  # source_map.SourceFunction
    loop_bounds: list  # source_map.LoopBound


def _outline(source: SourceFile, language: str) -> _Outline | None:
    """The buffer's functions and loops from tree-sitter's parse (None without tree-sitter)."""
    try:
        from ccls import source_map
    except ImportError:
        return None
    text = source.text.encode("utf-8", errors="surrogateescape")
    tree = source_map.parse(text, language)
    return _Outline(source_map.functions_in(tree, text, language), source_map.loop_bounds(tree, language))


def _source_ranges(functions: list[FunctionIR], ranges: list) -> None:
    """End lines (and start lines when debug info lacks them) from the source's functions."""
    for fn in functions:
        short = without_parameters(fn.display_name).split("::")[-1]
        for rng in ranges:
            if rng.name.split("::")[-1] == short and (fn.line is None or rng.start_line <= fn.line <= rng.end_line):
                fn.line = fn.line or rng.start_line
                fn.end_line = rng.end_line
                break
