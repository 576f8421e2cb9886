"""Sizes a program keeps in integer globals (`ccls.readers.global_stores`, `ccls.sizes`): a loop
bounded by `width` runs at the values every write of the program gives `width` (a constant, an
entry of a read-only table the index can reach, a loop counter where its loop leaves), not at
the largest value of its type."""
from __future__ import annotations

import shutil
from dataclasses import replace

import pytest

from ccls.engine import count_sources
from ccls.frontends import SourceFile
from ccls.model import FieldStore
from ccls.options import AnalysisOptions
from ccls.readers.call_sites import read_call_sites
from ccls.sizes import infer_sizes, module_of

needs_clang = pytest.mark.skipif(shutil.which("clang-19") is None and shutil.which("clang") is None,
                                 reason="clang-19 is not installed (apt-get install clang-19)")

# As the call sites' IR has it (SROA, no inlining): `blocks = table[4 * level + 16 * (version - 1) + 1]`.
IR = """\
@width = dso_local global i8 0, align 1
@blocks = dso_local global i8 0, align 1
@shared = dso_local global i8 0, align 1
@table = internal constant [8 x i8] c"\\01\\09\\02\\05\\03\\07\\04\\06", align 1
define dso_local void @setup(i8 noundef zeroext %0, i8 noundef zeroext %1) {
  %3 = zext i8 %0 to i32
  %4 = mul nsw i32 %3, 4
  %5 = zext i8 %1 to i32
  %6 = sub nsw i32 %5, 1
  %7 = mul nsw i32 %6, 16
  %8 = add nsw i32 %4, %7
  %9 = add i32 %8, 1
  %10 = zext i32 %9 to i64
  %11 = getelementptr inbounds [8 x i8], ptr @table, i64 0, i64 %10
  %12 = load i8, ptr %11, align 1
  store i8 %12, ptr @blocks, align 1
  store i8 21, ptr @width, align 1
  call void @take(ptr @shared)
  ret void
}
declare void @take(ptr)
"""


def test_writes_into_integer_globals_are_read_as_one_field_structs():
    stores = {(s.struct, s.writer, s.value) for s in read_call_sites(IR, "/src/q.c").field_stores}
    assert ("@width", "", ("const", 0)) in stores  # what it holds before any write
    assert ("@width", "setup", ("const", 21)) in stores
    # an entry of the table at an index the parameters give: looked up where they are known; else
    # index ≡ 1 (mod 4): entries 1, 5 of the table (9 and 7), never 3 or 6 beside them
    blocks = next(value for struct, writer, value in stores if struct == "@blocks" and writer == "setup")
    assert blocks[:2] == ("entry", "table") and blocks[4] == ("most", 9, "table")
    assert ("@shared", "setup", None) in stores  # its address passed on: any value


def test_every_function_learns_the_globals_the_program_only_sets_to_known_values():
    sizes = infer_sizes([read_call_sites(IR, "/src/q.c")])[("/src/q.c", "setup")]
    assert sizes["@width"].value == 21 and sizes["@blocks"].value == 9
    assert "reading read-only table, whose entries its index reaches are at most 9" in sizes["@blocks"].origin
    assert "@shared" not in sizes


@pytest.mark.parametrize("value", [("op", "sub", ("const", 64), ("most", 9, "table")),  # falls as it rises
                                   ("op", "and", ("most", 9, "table"), ("const", 7))])  # 8 & 7 < 7 & 7
def test_a_bound_is_not_carried_through_arithmetic_it_does_not_bound(value):
    module = read_call_sites(IR, "/src/q.c")
    sizes = infer_sizes([replace(module, field_stores=module.field_stores + (FieldStore("@width", 0, "setup", 9, value),))])
    assert "@width" not in sizes[("/src/q.c", "setup")]
    rising = FieldStore("@width", 0, "setup", 9, ("op", "add", ("most", 9, "table"), ("const", 17)))
    sizes = infer_sizes([replace(module, field_stores=module.field_stores + (rising,))])
    assert sizes[("/src/q.c", "setup")]["@width"].value == 26


PROGRAM = """
unsigned char width, blocks;
static const unsigned char table[] = {1, 9, 2, 5, 3, 7, 4, 6, 2, 8, 1, 3};
void setup(unsigned char level, unsigned size) {
  unsigned char version;
  for (version = 1; version < 3; version++)
    if (size < table[4 * (version - 1) + 2]) break;
  width = 17 + 4 * version;
  blocks = table[4 * (version - 1) + 1];
}
__attribute__((noinline)) unsigned long fill(unsigned char *grid) {
  unsigned long s = 0;
  for (unsigned char y = 0; y < width; y++)
    for (unsigned char b = 0; b < blocks; b++) s += grid[y * blocks + b];
  return s;
}
"""


@needs_clang
def test_a_loop_to_a_global_runs_at_the_values_the_program_writes_into_it(tmp_path):
    counted = count_sources([SourceFile(str(tmp_path / "grid.c"), PROGRAM)], AnalysisOptions())
    fill = next(fn for f in counted for fn in f.functions if fn.name == "fill")
    # version leaves its loop at 3 at most: width = 17 + 4·3; blocks reads entries 1, 5, 9: at most 9
    assert fill.inferred_sizes == {"width": 29.0, "blocks": 9.0}
    assert any(note.startswith("width = 29 from the write at grid.c:8, a loop counter, at most 3 where its loop "
                               "leaves; also set to 0 (its initial value in grid.c)") for note in fill.size_notes)
    assert any("blocks = 9 from the write at grid.c:9, reading read-only table" in note for note in fill.size_notes)
    # The language server infers again from what it keeps per function: the writes travel with them.
    again = infer_sizes([module_of(str(tmp_path / "grid.c"), [fn for f in counted for fn in f.functions])])
    assert again[(str(tmp_path / "grid.c"), "fill")]["@width"].value == 29


COUNTED_CALLS = """
__attribute__((noinline)) unsigned long row(const int *a, int k) {
  unsigned long s = 0;
  for (int j = 0; j < k; j++) s += a[j];
  return s;
}
unsigned long triangle(const int *a) {
  unsigned long s = 0;
  for (int k = 0; k < 48; k++) s += row(a, k);
  return s;
}
"""


@needs_clang
def test_a_loop_counter_passed_to_a_call_is_at_most_where_its_loop_leaves(tmp_path):
    counted = count_sources([SourceFile(str(tmp_path / "tri.c"), COUNTED_CALLS)], AnalysisOptions())
    row = next(fn for f in counted for fn in f.functions if fn.name == "row")
    assert row.inferred_sizes == {"k": 48.0}
    assert row.size_notes == ["k = 48 from the call at tri.c:9, a loop counter, at most 48 where its loop leaves"]


SEARCH = """
unsigned char width;
static unsigned need;
static const unsigned char capacity[] = {0, 9, 14, 20, 27, 35, 44, 54, 65, 77, 90, 104};
void pick(unsigned size) {
  unsigned char version;
  for (version = 1; version < 11; version++)
    if (size < capacity[version] - 3) break;
  width = 17 + 4 * version;
}
__attribute__((noinline)) unsigned long fill(unsigned char *grid) {
  unsigned long s = 0;
  for (unsigned char y = 0; y < width; y++) s += grid[y];
  return s;
}
unsigned long run(unsigned char *grid) {
  need = 15;
  pick(need);
  return fill(grid);
}
"""


@needs_clang
def test_a_search_loop_leaves_where_its_test_first_passes_at_the_values_the_program_passes(tmp_path):
    counted = count_sources([SourceFile(str(tmp_path / "pick.c"), SEARCH)], AnalysisOptions())
    fill = next(fn for f in counted for fn in f.functions if fn.name == "fill")
    # 15 < capacity[v] - 3 first at v = 3 (20 - 3 = 17); its bound alone says 11 (width 61)
    assert fill.inferred_sizes == {"width": 29.0}
    assert fill.size_notes == ["width = 29 from the write at pick.c:9, a search loop's counter, 3 where it leaves at "
                               "size = 15; also set to 0 (its initial value in pick.c)"]


def test_a_search_whose_test_reads_what_is_not_known_keeps_its_bound():
    module = read_call_sites(IR, "/src/q.c")
    search = ("search", 1, 1, ("icmp", "slt", ("counter",), ("const", 3), True),
              ("icmp", "ult", ("param", "1"), ("entry", "table", (1, 9, 2, 5), ("counter",), ("most", 9, "table")), True),
              ("most", 3, "a loop counter"))
    width = FieldStore("@width", 0, "setup", 9, ("op", "add", ("const", 17), search))
    sizes = infer_sizes([replace(module, field_stores=module.field_stores + (width,))])
    width = sizes[("/src/q.c", "setup")]["@width"]  # setup's size is passed by no call: at most 3, 17 + 3
    assert (20, "the write at q.c:9, a loop counter, at most 3 where its loop leaves") in width.others
