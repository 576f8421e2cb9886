"""Loops that end on data are named after what they walk (issue 17 §2): a string to its NUL
(`strlen(s)`), a linked list to its null link (`len(head)`), a count read from memory
(`a->count`). Inline C, compiled by clang-19 as the C front end does, then the CLI's `--param`."""
import json
import math
import shutil
import subprocess
import sys
from fractions import Fraction

import pytest

from ccls.frontends import SourceFile
from ccls.frontends.c_family import analyze_with_clang
from ccls.options import AnalysisOptions
from ccls.polynomial import Polynomial

pytestmark = pytest.mark.skipif(shutil.which("clang-19") is None and shutil.which("clang") is None,
                                reason="clang-19 is not installed (apt-get install clang-19)")


def analyse(code: str, path: str = "/tmp/ccls-test/data_loops.c"):
    result = analyze_with_clang(SourceFile(path, code), AnalysisOptions(), "c", [])
    assert result.errors == []
    return {f.display_name: f for f in result.functions}


def trips(fn) -> list:
    return sorted(((loop.trip_count.kind, loop.trip_count.iterations) for loop in fn.loops.values()),
                  key=lambda t: (t[0], str(t[1])))


LIBRARY = """
#include <ctype.h>
#include <stddef.h>
struct item { struct item *next; struct item *prev; struct item *first; char *name; long count; char *text; };
struct buffer { char *data; size_t length; size_t depth; };

size_t length_of(const char *s) { size_t n = 0; while (*s) { s++; n++; } return n; }

int checksum(const char *text) { int t = 0; for (int i = 0; text[i]; i++) t = t * 31 + text[i]; return t; }

/* a case-insensitive comparison, as JSON libraries write it */
int compare_names(const unsigned char *a, const unsigned char *b) {
  if (a == NULL || b == NULL) return 1;
  for (; tolower(*a) == tolower(*b); a++, b++)
    if (*a == '\\0') return 0;
  return tolower(*a) - tolower(*b);
}

void release(struct item *it, void (*drop)(void *)) {
  while (it != NULL) { struct item *next = it->next; drop(it->name); drop(it); it = next; }
}

int children(const struct item *parent) {
  if (parent == NULL) return 0;
  int size = 0;
  struct item *child = parent->first;
  while (child != NULL) { size++; child = child->next; }
  return size;
}

void indent(struct buffer *out, char *to) {
  for (size_t i = 0; i < out->depth; i++) *to++ = '\\t';
}

void copy_out(const char **input, char **output) {
  for (; (*input)[0] != '\\0'; ++*input, ++*output) (*output)[0] = (*input)[0];
}

struct state { unsigned have; unsigned short lens[320]; unsigned insert; unsigned ncode; };
static const unsigned short order[19] = {16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15};
void pad(struct state *s) { while (s->have < 19) s->lens[order[s->have++]] = 0; }
void drain(struct state *s, char *out) { while (s->insert) { *out++ = (char)s->lens[s->insert]; s->insert--; } }
void upto(struct state *s, char *out) { while (s->have < s->ncode) { out[s->have] = 1; s->have++; } }

long hop(const char *p) { long n = 0; while (*p) { p += (unsigned char)*p % 3 + 1; n++; } return n; }
"""


@pytest.fixture(scope="module")
def library():
    return analyse(LIBRARY)


def test_a_string_walked_to_its_nul_is_counted_in_strlen_of_the_string(library):
    strlen_s, strlen_text = Polynomial.symbol("strlen(s)"), Polynomial.symbol("strlen(text)")
    # `while (*s) s++`: the first character is tested before the loop, the rest in it
    assert trips(library["length_of"]) == [("data", strlen_s)]
    [(kind, count)] = [t for t in trips(library["checksum"])]
    assert (kind, count) == ("data", strlen_text)
    notes = " ".join(library["length_of"].assumptions)
    assert "walks the string at s to its terminating zero" in notes and "--param 'strlen(s)=N'" in notes


def test_a_comparison_of_two_strings_is_a_search_bounded_by_the_first_strings_length(library):
    [(kind, count)] = trips(library["compare_names"])
    # it leaves at the NUL or at the first difference: the mean of an exit anywhere up to the NUL
    assert kind == "expected" and count.symbols == {"strlen(a)"}
    assert count.evaluate({"strlen(a)": 100}) == pytest.approx((100 + 1 + 1) / 2)


def test_a_linked_list_walked_to_its_null_link_is_counted_in_its_length(library):
    assert trips(library["release"]) == [("data", Polynomial.symbol("len(it)"))]
    # the walk starts at the address of `parent->first` and reads one link past the last node
    assert trips(library["children"]) == [("data", Polynomial.symbol("len(parent->first)") + 1)]


def test_a_count_read_from_a_struct_at_each_iteration_is_named_after_the_member(library):
    kinds = {kind for kind, _ in trips(library["indent"])}
    counts = [count for kind, count in trips(library["indent"]) if kind == "data"]
    assert kinds <= {"data", "constant"} and counts
    assert all(count.symbols == {"out->depth"} for count in counts)


def test_a_string_whose_pointer_is_kept_in_memory_is_counted_in_strlen_of_what_it_points_at(library):
    # `++*input`: the pointer lives in the caller's variable, every iteration stores it one on
    [(kind, count)] = trips(library["copy_out"])
    assert kind == "data" and count.symbols == {"strlen(*input)"}


def test_a_counter_kept_in_a_struct_is_counted_from_the_member_it_lives_in(library):
    # s->insert-- to 0: exactly s->insert iterations
    assert trips(library["drain"]) == [("data", Polynomial.symbol("s->insert"))]
    # s->have up to 19 from wherever it starts: at most 19 (its value at s->have = 0)
    assert trips(library["pad"]) == [("bounded", Polynomial.constant(19))]
    # s->have up to s->ncode: both sizes default alike, so the start is taken as 0 and says so
    [(kind, count)] = trips(library["upto"])
    assert kind == "bounded" and count.symbols == {"s->ncode"}
    assert any("taken as 0: at most" in a for a in library["upto"].assumptions)


def test_a_walk_that_steps_by_the_data_it_reads_stays_unknown(library):
    assert [kind for kind, _ in trips(library["hop"])] == ["unknown"]
    assert any("assuming 100" in a for a in library["hop"].assumptions)


HEAP = """
struct heap { int depth[600]; int len; int item[600]; };
void sift(struct heap *s, int k) {
  int v = s->item[k]; int j = k << 1;
  while (j <= s->len) {
    if (j < s->len && s->depth[s->item[j + 1]] < s->depth[s->item[j]]) j++;
    if (s->depth[v] < s->depth[s->item[j]]) break;
    s->item[k] = s->item[j]; k = j; j <<= 1;
  }
  s->item[k] = v;
}
int climb(const int *a, int k, int n) { int j = 2 * k; while (j < n && a[j] > 0) j = 2 * (j + a[j]); return j; }
"""


def test_a_heap_sift_down_is_bounded_by_log2_of_the_heap_size_read_from_its_struct():
    fs = analyse(HEAP)
    # j = 2j or 2(j + 1) each iteration: at least doubles until it passes s->len
    assert trips(fs["sift"]) == [("bounded", Polynomial.symbol("log2(s->len)"))]
    assert any("a heap's child index" in a and "log2(s->len)" in a for a in fs["sift"].assumptions)
    # a step by loaded data before the doubling is no small constant: stays unknown
    assert [kind for kind, _ in trips(fs["climb"])] == ["unknown"]


# The other form of a sift-down: the child `j = k + k`, then `j + 1` on some paths, then k = j;
# bounded by a parameter halved, and, inlined, by a count the caller computes (`n`).
HEAP_CHILD_THEN_MERGE = """
static void adjust(const long *freq, long *heap, int n, int k) {
  int j; long v = heap[k];
  while (k <= n / 2) {
    j = k + k;
    if (j < n && freq[heap[j]] > freq[heap[j + 1]]) ++j;
    if (freq[v] < freq[heap[j]]) break;
    heap[k] = heap[j]; k = j;
  }
  heap[k] = v;
}
void adjust_all(const long *freq, long *heap, int n, int k) { adjust(freq, heap, n, k); }
void build(const long *freq, long *heap, const unsigned char *used) {
  int n = 0;
  for (int i = 0; i < 256; i++) if (used[i]) heap[n++] = i;
  for (int i = n; i > 0; --i) adjust(freq, heap, n, i);
}
"""


def test_a_heap_child_computed_then_merged_with_its_plus_one_is_bounded_by_log2_of_the_size():
    fs = analyse(HEAP_CHILD_THEN_MERGE)
    assert trips(fs["adjust_all"]) == [("bounded", Polynomial.symbol("log2(n)"))]
    assert any("a heap's child index" in a for a in fs["adjust_all"].assumptions)
    # inlined into a caller that counts n itself: log2 of that variable, n times
    assert ("bounded", Polynomial.symbol("log2(n)")) in trips(fs["build"])
    assert not any(kind == "unknown" for kind, _ in trips(fs["build"]))


# A sift-down as sglib writes it: `l = 2*i + 1; r = l + 1` computed at the end of one round from
# the index it chose, carried round the loop by LLVM; the loop leaves when the index stays.
HEAP_DOWN_ROTATED = """
void heap_down(int *a, int max) {
  int m = 0, i, l, r;
  do {
    i = m; l = 2 * i + 1; r = l + 1;
    if (l < max) {
      if (a[m] < a[l]) m = l;
      if (r < max) { if (a[m] < a[r]) m = r; }
    }
    if (m != i) { int t = a[i]; a[i] = a[m]; a[m] = t; }
  } while (m != i);
}
int drain(int *a) {  /* a heap of 100 emptied: each delete sifts the last element down from the root */
  int s = 0;
  for (int n = 100; n > 0;) { s += a[0]; n--; a[0] = a[n]; heap_down(a, n); }
  return s;
}
void wander(int *a, int max) {  /* the same children, but no exit when the index stays: not a descent */
  int m = 0, l = 1, r = 2;
  for (int k = 0; k < max; k += a[k] + 1) {
    if (a[m] < a[l]) m = l; else if (a[m] < a[r]) m = r;
    l = 2 * m + 1; r = 2 * m + 2;
    if (r >= max) { m = 0; l = 1; r = 2; }
  }
}
"""


def test_a_sift_down_with_its_children_carried_round_is_bounded_by_log2_of_the_size():
    fs = analyse(HEAP_DOWN_ROTATED, "/tmp/ccls-test/heap_down.c")
    assert trips(fs["heap_down"]) == [("bounded", Polynomial.symbol("log2(max)"))]
    assert any("a heap's child index" in a for a in fs["heap_down"].assumptions)
    # inlined where the heap is emptied from 100: log2 of the size it starts at (99 once one is
    # taken, so 100 values), at each of the 100 deletes
    assert ("bounded", Polynomial.constant(Fraction(math.log2(100)).limit_denominator(1000))) in trips(fs["drain"])
    assert not any("a heap's child index" in a for a in fs["wander"].assumptions)


HEAP_FILL = """
void heap_fill(int *a, const int *v) {  /* a sift-up after each insert: i halves from the heap's size */
  for (int n = 0; n < 100; n++) {
    int i = n; a[i] = v[n];
    while (i > 0 && a[i / 2] < a[i]) { int t = a[i / 2]; a[i / 2] = a[i]; a[i] = t; i = i / 2; }
  }
}
"""


def test_a_halving_loop_started_at_an_enclosing_count_is_bounded_by_log2_of_its_largest():
    fs = analyse(HEAP_FILL, "/tmp/ccls-test/heap_fill.c")
    # i starts at n, which the enclosing loop counts up to 99: at most log2(100) halvings
    assert ("bounded", Polynomial.constant(Fraction(math.log2(100)).limit_denominator(1000))) in trips(fs["heap_fill"])
    assert any("an enclosing loop counts, at most 99" in a for a in fs["heap_fill"].assumptions)


# LZ4's wild copy, inlined where the output pointer is carried from one copy to the next: the
# vectorised copy counts up from `op` to `op + length`, its scalar remainder from where the
# vector loop left off (`op + 32·n`): the pointer cancels in both.
WILD_COPY = """
#include <string.h>
static inline void wild_copy8(void *dst, const void *src, void *end) {
  unsigned char *d = dst; const unsigned char *s = src; unsigned char *const e = end;
  do { memcpy(d, s, 8); d += 8; s += 8; } while (d < e);
}
int decode(const unsigned char *src, unsigned char *dst, int n) {
  unsigned char *op = dst; const unsigned char *ip = src;
  while (ip < src + n) {
    unsigned length = *ip++;
    wild_copy8(op, ip, op + length);
    op += length; ip += length;
  }
  return op - dst;
}
"""


def test_a_copy_from_a_carried_pointer_is_counted_in_its_length_and_its_remainder_is_a_constant():
    loops = trips(analyse(WILD_COPY)["decode"])
    inner = [(kind, count) for kind, count in loops if kind != "unknown"]  # the outer loop walks data
    assert [kind for kind, _ in inner] == ["constant", "data"]
    (_, remainder), (_, vector) = inner
    assert vector.symbols == {"*ip"}  # no pointer: `op` cancelled
    assert 1 <= remainder.constant_value() <= 4  # what the vector loop leaves, on average


def test_a_member_stepped_in_the_header_and_read_again_by_a_do_whiles_test_is_counted_from_the_member():
    fs = analyse("""
struct heap { int depth[600]; int len; int max; int item[600]; };
void drop_min(struct heap *s, int *out);
void drain_heap(struct heap *s, int *out) { do { s->len--; drop_min(s, out); } while (s->len >= 2); }
void shrink(struct heap *s) {
  do { s->len--; s->item[--s->max] = s->item[1]; s->item[1] = s->item[s->len + 1]; } while (s->len >= 2);
}
""")
    # s->len = H: stepped to H - 1 before each test, on while above 1: H - 1 iterations
    for name in ("drain_heap", "shrink"):
        assert trips(fs[name]) == [("data", Polynomial.symbol("s->len") - 1)], name
        assert any("steps `s->len` (kept in memory) by -1" in a for a in fs[name].assumptions)


def test_a_count_in_the_distance_between_two_pointers_is_named_after_them():
    fs = analyse("""
#include <stddef.h>
void emit(unsigned char *, int);
unsigned char *run_length(const unsigned char **ip, const unsigned char **anchor, unsigned char *op) {
  size_t len = (size_t)(*ip - *anchor);
  for (; len >= 255; len -= 255) emit(op++, 255);
  return op;
}
""")
    [(kind, count)] = trips(fs["run_length"])
    # (*ip - *anchor) / 255 iterations (the remainder of the division taken at its mean)
    assert kind == "data" and count.symbols == {"(*ip-*anchor)"}
    assert count.evaluate({"(*ip-*anchor)": 2550}) == pytest.approx(10, abs=0.6)
    assert any("the bytes from the pointer `*anchor` to `*ip`" in a for a in fs["run_length"].assumptions)


def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "ccls", *args], capture_output=True, text=True, timeout=300)


def test_the_cli_reports_kind_data_and_big_o_in_the_named_size_and_param_sets_it(tmp_path):
    src = tmp_path / "walks.c"
    src.write_text(LIBRARY)
    default = run_cli("analyze", str(src), "--format", "json")
    given = run_cli("analyze", str(src), "--format", "json", "--param", "strlen(s)=64",
                    "--param", "len(parent->first)=5")
    assert default.returncode == 0 and given.returncode == 0, default.stderr + given.stderr
    at_default = {f["name"]: f for f in json.loads(default.stdout)["functions"]}
    at_given = {f["name"]: f for f in json.loads(given.stdout)["functions"]}
    assert at_default["length_of"]["big_o"] == "O(strlen(s))"
    assert at_default["children"]["big_o"] == "O(len(parent->first))"
    assert at_default["release"]["big_o"] == "O(len(it))"
    assert at_default["compare_names"]["big_o"] == "O(strlen(a))"
    assert [loop["kind"] for loop in at_default["length_of"]["loops"]] == ["data"]
    # the default value is stated; a given one replaces it and moves the numbers
    assert "numbers evaluated at strlen(s)=1000" in at_default["length_of"]["assumptions"]
    assert "numbers evaluated at strlen(s)=64" in at_given["length_of"]["assumptions"]
    assert at_given["length_of"]["metrics"]["CU"] < at_default["length_of"]["metrics"]["CU"] / 5
    assert at_given["children"]["metrics"]["CU"] < at_default["children"]["metrics"]["CU"] / 10


def test_the_editor_setting_parameter_values_sets_a_size_named_by_data():
    from ccls.lsp.settings import parse_settings
    settings, messages = parse_settings({"parameterValues": {"strlen(s)": 64, "len(parent->first)": 5}})
    assert messages == []
    options = settings.analysis_options()
    assert options.parameter_value("strlen(s)") == 64 and options.parameter_value("len(parent->first)") == 5
    assert options.parameter_value("strlen(t)") == options.default_parameter_value


def test_a_copy_sized_by_a_member_is_costed_in_the_members_name_not_an_ir_value():
    # issue 17 item 6: memcpy(out, s->buf, s->used) read `O(i3)` (an IR name) before
    fns = analyse("#include <string.h>\n"
                  "struct state { struct state *up; char *buf; unsigned used; unsigned pad; };\n"
                  "void drain(struct state *s, char *out) { memcpy(out, s->buf, s->used); }\n"
                  "void drain_up(struct state *s, char *out) { memcpy(out, s->up->buf, s->up->used); }\n")
    sizes = {name: {sym for block in fns[name].blocks for i in block.instructions if i.bulk_bytes is not None
                    for sym in i.bulk_bytes.symbols} for name in ("drain", "drain_up")}
    assert sizes == {"drain": {"s->used"}, "drain_up": {"(*s)->used"}}


def test_a_string_walked_by_an_index_kept_in_memory_counts_from_that_index():
    # `s->gzindex` lives in memory (the call may change it, as far as LLVM knows), and the string's
    # address is read again each iteration from memory the loop never writes
    fns = analyse("""
struct head { int hcrc; char *name; };
struct st { long flags; struct head *gzhead; unsigned long gzindex; unsigned long pending, size; unsigned char *buf; };
void flush(struct st *s);
int put_name(struct st *s) {
  int val;
  do {
    if (s->pending == s->size) { flush(s); if (s->pending != 0) return 1; }
    val = s->gzhead->name[s->gzindex++];
    s->buf[s->pending++] = (unsigned char)val;
  } while (val != 0);
  return 0;
}
int put_all(struct st *s) {
  int val;
  do {
    val = s->gzhead->name[s->gzindex++];
    s->buf[s->pending++] = (unsigned char)val;
  } while (val != 0);
  return 0;
}
""")
    symbol = "strlen(s->gzhead->name+s->gzindex)"
    assert trips(fns["put_all"]) == [("data", Polynomial.symbol(symbol) + 1)]
    assert any("walks the string at s->gzhead->name from the index `s->gzindex` (kept in memory, moved on one "
               "element each iteration) to its terminating zero" in note for note in fns["put_all"].assumptions)
    # it may also leave when a flush leaves bytes pending: the early-exit policy's count, bounded by the walk
    [(kind, count)] = trips(fns["put_name"])
    assert kind == "expected" and count.symbols == {symbol}


def test_a_counter_kept_in_memory_from_a_constant_counts_to_its_bound():
    # a benchmark's `volatile` index: kept in memory, set just before the loop, stepped by one
    fns = analyse("""
int predict(int);
int run(void) {
  int correct = 0;
  for (volatile unsigned long i = 0; i < 128; i++) correct += predict((int)i);
  return correct;
}""", "/tmp/ccls-test/volatile_counter.c")
    assert trips(fns["run"]) == [("constant", Polynomial.constant(128))]
    assert any("set to 0 on entry" in a for a in fns["run"].assumptions)


GRID = """
unsigned char WD, WDB;
unsigned char *frame;
/* Stores through `unsigned char *` may write WD, as far as LLVM knows: it reads WD again. */
void timing(void) {
  for (unsigned x = 0; x < (unsigned) WD - 14; x++) frame[x * WDB] |= 1;
}
/* GVN keeps the WD read before the loops and reads it again only after the store: a phi of the two. */
void toggle(void) {
  unsigned char x, y;
  for (y = 0; y < WD; y++)
    for (x = 0; x < WD; x++)
      if ((x + y) & 1) frame[y * WDB + (x >> 3)] ^= 0x80 >> (x & 7);
}
"""


def test_a_bound_read_again_each_iteration_counts_with_a_constant_taken_off():
    fn = analyse(GRID, "/tmp/ccls-test/grid.c")["timing"]
    assert [(kind, count) for kind, count in trips(fn) if kind == "data"] == [("data", Polynomial.symbol("WD") - 14)]


def test_a_bound_merged_from_the_read_before_the_loop_and_the_reads_after_stores_is_that_value():
    fn = analyse(GRID, "/tmp/ccls-test/grid.c")["toggle"]
    assert trips(fn) == [("data", Polynomial.symbol("WD")), ("data", Polynomial.symbol("WD"))]
