"""ccls.compile_db: finding compile flags like clangd, and refusing what a hostile database asks for."""
from __future__ import annotations

import json
import os
import shlex
from pathlib import Path

import pytest

from ccls.compile_db import flags_for, sanitise


def _write_db(directory: Path, entries: list[dict]) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "compile_commands.json"
    path.write_text(json.dumps(entries))
    return path


def _source(path: Path, text: str = "int f(void) { return 0; }\n") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_arguments_form_matches_by_absolute_file(tmp_path):
    src = _source(tmp_path / "src" / "a.c")
    _write_db(tmp_path, [
        {"directory": str(tmp_path), "file": "src/other.c", "arguments": ["cc", "-DOTHER", "-c", "src/other.c"]},
        {"directory": str(tmp_path), "file": "src/a.c",
         "arguments": ["cc", "-Iinclude", "-DFOO=1", "-std=c11", "-O3", "-c", "-o", "a.o", "src/a.c"]},
    ])
    result = flags_for(str(src), language="c")
    assert result.flags == (f"-I{tmp_path}/include", "-DFOO=1", "-std=c11", "-O3")
    assert result.origin == f"compile_commands.json at {tmp_path}"
    assert result.directory == str(tmp_path)
    assert result.dropped == ()
    assert "-o a.o" in result.ignored and "-c" in result.ignored and "src/a.c" in result.ignored


def test_command_form_is_shell_split(tmp_path):
    src = _source(tmp_path / "a.cpp")
    build = tmp_path / "out"
    command = f"/usr/bin/c++ -I ../inc '-DMSG=\"hello world\"' -std=c++20 -c {src}"
    _write_db(tmp_path, [{"directory": str(build), "file": str(src), "command": command}])
    result = flags_for(str(src), language="cpp")
    assert result.flags == (f"-I{tmp_path}/inc", '-DMSG="hello world"', "-std=c++20")
    assert result.directory == str(build)


def test_build_subfolder_is_discovered_from_a_parent(tmp_path):
    src = _source(tmp_path / "lib" / "deep" / "x.c")
    _write_db(tmp_path / "build", [{"directory": str(tmp_path / "build"), "file": str(src),
                                    "arguments": ["clang", "-DFROM_BUILD", str(src)]}])
    result = flags_for(str(src), language="c")
    assert result.flags == ("-DFROM_BUILD",)
    assert result.origin == f"compile_commands.json at {tmp_path / 'build'}"


def test_nearest_database_wins_and_stop_at_limits_the_search(tmp_path):
    src = _source(tmp_path / "ws" / "a.c")
    _write_db(tmp_path, [{"directory": str(tmp_path), "file": str(src), "arguments": ["cc", "-DOUTER", str(src)]}])
    assert flags_for(str(src), language="c").flags == ("-DOUTER",)
    stopped = flags_for(str(src), language="c", stop_at=str(tmp_path / "ws"))
    assert stopped.flags == () and stopped.origin == "default"


def test_compile_flags_txt(tmp_path):
    (tmp_path / "compile_flags.txt").write_text("-Iinclude\n-DX=2\n\n-xc++\n-fplugin=/tmp/evil.so\n")
    src = _source(tmp_path / "sub" / "a.h")
    result = flags_for(str(src), language="cpp")
    assert result.flags == (f"-I{tmp_path}/include", "-DX=2", "-x", "c++")
    assert result.dropped == ("-fplugin=/tmp/evil.so",)
    assert result.origin == f"compile_flags.txt at {tmp_path}"
    assert result.compiler is None


def test_dangerous_flags_are_dropped_and_reported(tmp_path):
    src = _source(tmp_path / "a.c")
    args = ["clang", "-fplugin=/tmp/p.so", "-fpass-plugin=/tmp/q.so", "-Xclang", "-load", "-Xclang", "/tmp/r.so",
            "-Xclang", "-plugin", "-Xclang", "evil", "-load", "/tmp/s.so", "@/tmp/args.rsp", "-B/tmp/bin",
            "-B", "/tmp/bin2", "-fuse-ld=/tmp/ld", "--driver-mode=g++", "-fcrash-diagnostics-dir=/tmp/x",
            "-Wp,-MD,/tmp/deps", "-Xcompiler", "-fplugin=/tmp/t.so", "-ccbin", "/tmp/cc", "-specs=/tmp/specs",
            "--config=/tmp/cfg", "-DSAFE", "-c", str(src)]
    _write_db(tmp_path, [{"directory": str(tmp_path), "file": str(src), "arguments": args}])
    result = flags_for(str(src), language="c")
    assert result.flags == ("-DSAFE",)
    assert set(result.dropped) == {
        "-fplugin=/tmp/p.so", "-fpass-plugin=/tmp/q.so", "-Xclang -load", "-Xclang /tmp/r.so", "-Xclang -plugin",
        "-Xclang evil", "-load /tmp/s.so", "@/tmp/args.rsp", "-B/tmp/bin", "-B /tmp/bin2", "-fuse-ld=/tmp/ld",
        "--driver-mode=g++", "-fcrash-diagnostics-dir=/tmp/x", "-Wp,-MD,/tmp/deps", "-Xcompiler -fplugin=/tmp/t.so",
        "-ccbin /tmp/cc", "-specs=/tmp/specs", "--config=/tmp/cfg"}


def test_routine_and_inapplicable_flags_are_ignored_not_kept():
    s = sanitise(["-c", "-S", "-E", "-M", "-MD", "-MMD", "-MF", "a.d", "-MT", "a.o", "-MQ", "q", "-o", "a.o",
                  "-fsyntax-only", "-g", "-fsanitize=address", "-fprofile-instr-generate", "-fcolor-diagnostics",
                  "-Werror", "-Werror=format", "-Xclang", "-fno-pch-timestamp", "-mllvm", "-inline-threshold=5",
                  "-Wl,--as-needed", "-target", "arm-none-eabi", "-forward-unknown-to-host-compiler", "a.c"], "/w")
    assert s.flags == ()
    assert s.dropped == ()
    assert "-MF a.d" in s.ignored and "-o a.o" in s.ignored and "-target arm-none-eabi" in s.ignored


def test_kept_flag_families():
    s = sanitise(["-isystem", "sys", "-iquotequote", "-include", "pre.h", "-imacros", "/abs/m.h", "-U", "X",
                  "-D", "Y=1", "-fno-exceptions", "-march=native", "-Wall", "-Wno-unused", "-Os", "-pthread",
                  "--expt-relaxed-constexpr", "--std", "c++17"], "/w/d")
    assert s.flags == ("-isystem", "/w/d/sys", "-iquote", "/w/d/quote", "-include", "/w/d/pre.h",
                       "-imacros", "/abs/m.h", "-UX", "-DY=1", "-fno-exceptions", "-march=native", "-Wall",
                       "-Wno-unused", "-Os", "-pthread", "--expt-relaxed-constexpr", "-std=c++17")


def test_compiler_allowlist(tmp_path):
    src = _source(tmp_path / "a.c")
    tools = tmp_path / "tools"
    tools.mkdir()
    fake_cc = tools / "gcc-13"
    fake_cc.write_text("#!/bin/sh\nexit 99\n")  # never run: the test would notice nothing, so check the glob only
    fake_cc.chmod(0o755)
    _write_db(tmp_path, [{"directory": str(tmp_path), "file": str(src), "arguments": [str(fake_cc), str(src)]}])
    assert flags_for(str(src), language="c").compiler is None  # no globs: nothing is trusted
    assert flags_for(str(src), language="c", query_driver=["/usr/bin/*"]).compiler is None
    assert flags_for(str(src), language="c", query_driver=[f"{tools}/gcc-*"]).compiler == str(fake_cc)


def test_compiler_behind_a_launcher_and_relative_paths(tmp_path):
    src = _source(tmp_path / "a.c")
    build = tmp_path / "build"
    (build / "bin").mkdir(parents=True)
    cc = build / "bin" / "cc"
    cc.write_text("#!/bin/sh\n")
    cc.chmod(0o755)
    _write_db(tmp_path, [{"directory": str(build), "file": str(src),
                          "arguments": ["ccache", "bin/cc", "-I../include", "-I", "gen", "-DX", str(src)]}])
    result = flags_for(str(src), language="c", query_driver=[str(build / "bin" / "*")])
    assert result.compiler == str(cc)
    assert result.flags == (f"-I{tmp_path}/include", f"-I{build}/gen", "-DX")


def test_header_borrows_flags_from_same_stem_in_same_directory(tmp_path):
    header = _source(tmp_path / "src" / "widget.h")
    _write_db(tmp_path, [
        {"directory": str(tmp_path), "file": "src/other.cpp", "arguments": ["c++", "-DOTHER", "src/other.cpp"]},
        {"directory": str(tmp_path), "file": "src/widget.cpp", "arguments": ["c++", "-DWIDGET", "src/widget.cpp"]},
        {"directory": str(tmp_path), "file": "lib/far.cpp", "arguments": ["c++", "-DFAR", "lib/far.cpp"]},
    ])
    result = flags_for(str(header), language="cpp")
    assert result.flags == ("-DWIDGET",)
    assert "borrowed from " + str(tmp_path / "src" / "widget.cpp") in result.origin


def test_borrowing_across_languages_drops_the_language_choice(tmp_path):
    src = _source(tmp_path / "b.cpp")
    _write_db(tmp_path, [{"directory": str(tmp_path), "file": "a.c",
                          "arguments": ["cc", "-std=c11", "-x", "c", "-DSHARED", "a.c"]}])
    result = flags_for(str(src), language="cpp")
    assert result.flags == ("-DSHARED",)
    assert "-std=c11" in result.ignored and "-x c" in result.ignored


@pytest.mark.parametrize("content, message", [
    ("{not json", "is invalid: "),
    ('{"directory": "/"}', "the top level is not a list"),
    ("[]", "has no usable entries"),
    ('[{"directory": "/", "file": "a.c"}]', "has no usable entries"),
])
def test_malformed_database_falls_back_to_defaults(tmp_path, content, message):
    src = _source(tmp_path / "a.c")
    (tmp_path / "compile_commands.json").write_text(content)
    result = flags_for(str(src), language="c", extra=["-DEXTRA"])
    assert result.flags == ("-DEXTRA",)
    assert result.origin.startswith(f"compile_commands.json at {tmp_path} ")
    assert message in result.origin and result.origin.endswith("; using defaults")


def test_malformed_database_does_not_hide_a_good_one_further_up(tmp_path):
    src = _source(tmp_path / "sub" / "a.c")
    (tmp_path / "sub" / "compile_commands.json").write_text("[{")
    _write_db(tmp_path, [{"directory": str(tmp_path), "file": str(src), "arguments": ["cc", "-DUP", str(src)]}])
    result = flags_for(str(src), language="c")
    assert result.flags == ("-DUP",)
    assert "is invalid" in result.origin


def test_fifo_named_like_a_database_does_not_block(tmp_path):
    src = _source(tmp_path / "a.c")
    os.mkfifo(tmp_path / "compile_commands.json")
    result = flags_for(str(src), language="c")
    assert "cannot be read" in result.origin


def test_malformed_entries_are_skipped_and_counted(tmp_path):
    src = _source(tmp_path / "a.c")
    _write_db(tmp_path, [{"directory": str(tmp_path), "file": "x.c", "command": "cc 'unbalanced"},
                         {"directory": str(tmp_path), "file": str(src), "arguments": ["cc", "-DOK", str(src)]}])
    result = flags_for(str(src), language="c")
    assert result.flags == ("-DOK",)
    assert "1 malformed entries skipped" in result.origin


def test_override_replaces_database_and_extra_is_appended(tmp_path):
    src = _source(tmp_path / "a.c")
    _write_db(tmp_path, [{"directory": str(tmp_path), "file": str(src), "arguments": ["cc", "-DDB", str(src)]}])
    with_extra = flags_for(str(src), language="c", extra=["-DEXTRA", "-fplugin=x.so"])
    assert with_extra.flags == ("-DDB", "-DEXTRA")
    assert with_extra.dropped == ("-fplugin=x.so",)
    overridden = flags_for(str(src), language="c", override=["-Iinc", "-DSET"], extra=["-DEXTRA"],
                           stop_at=str(tmp_path))
    assert overridden.flags == (f"-I{tmp_path}/inc", "-DSET", "-DEXTRA")
    assert overridden.origin == "settings"


def test_default_when_nothing_is_found(tmp_path):
    src = _source(tmp_path / "a.c")
    result = flags_for(str(src), language="c", stop_at=str(tmp_path))
    assert result.flags == () and result.origin == "default" and result.compiler is None
    assert result.directory == str(tmp_path)


def test_database_is_reparsed_when_it_changes(tmp_path):
    src = _source(tmp_path / "a.c")
    db = _write_db(tmp_path, [{"directory": str(tmp_path), "file": str(src), "arguments": ["cc", "-DV1", str(src)]}])
    assert flags_for(str(src), language="c").flags == ("-DV1",)
    db.write_text(json.dumps([{"directory": str(tmp_path), "file": str(src),
                               "command": shlex.join(["cc", "-DVERSION_TWO", str(src)])}]))
    assert flags_for(str(src), language="c").flags == ("-DVERSION_TWO",)


def test_command_line_include_paths_are_relative_to_the_working_directory():
    from ccls.compile_db import anchored

    assert anchored(["-Iinc", "-I", "x/y", "-isystem", "sys", "-isystemsys2", "-DA=1", "-I/abs", "-include", "h.h",
                     "-include-pch", "p.pch", "-O2"], "/cwd") == (
        "-I/cwd/inc", "-I", "/cwd/x/y", "-isystem", "/cwd/sys", "-isystem/cwd/sys2", "-DA=1", "-I/abs",
        "-include", "/cwd/h.h", "-include-pch", "p.pch", "-O2")
