"""CountedFunction ↔ JSON-compatible dicts, for the count cache. Polynomials are stored
exactly (numerator/denominator per term) so a cached result costs like a fresh one."""
from __future__ import annotations

from fractions import Fraction
from typing import Any

from ccls.model import AtPoint, CallSite, CountedFunction, FieldStore, FindingSite, LoopSummary, MemoryOverlap, TripCount
from ccls.polynomial import Polynomial

SCHEMA = 9


def poly_to_json(poly: Polynomial) -> list:
    return [[[list(pair) for pair in mono], coef.numerator, coef.denominator] for mono, coef in poly.terms]


def poly_from_json(data: list) -> Polynomial:
    # Written in the polynomial's own order, without zero terms (poly_to_json), so read back as it
    # is; Fraction(n) for whole coefficients: the same value without the two-argument gcd.
    return Polynomial(tuple((tuple((s, int(p)) for s, p in mono),
                             Fraction(int(num)) if den == 1 else Fraction(int(num), int(den))) for mono, num, den in data))


def _polys_to_json(polys: dict) -> dict:
    return {str(k): poly_to_json(v) for k, v in polys.items()}


def counted_to_json(f: CountedFunction) -> dict[str, Any]:
    return {
        "schema": SCHEMA, "name": f.name, "display_name": f.display_name, "file": f.file, "line": f.line,
        "end_line": f.end_line, "language": f.language, "arch": f.arch, "parameters": f.parameters,
        "static_counts": f.static_counts, "counts": _polys_to_json(f.counts),
        "machine_instructions": poly_to_json(f.machine_instructions) if f.machine_instructions is not None else None,
        "loops": [{"id": l.id, "depth": l.depth, "line": l.line, "kind": l.trip_count.kind,
                   "iterations": poly_to_json(l.trip_count.iterations), "source_text": l.trip_count.source_text}
                  for l in f.loops],
        "line_counts": {str(line): _polys_to_json(c) for line, c in f.line_counts.items()},
        "calls": _polys_to_json(f.calls),
        "sites": [{"kind": s.kind, "line": s.line, "loop": s.loop, "classes": _polys_to_json(s.classes),
                   "message": s.message, "cause": s.cause} for s in f.sites],
        "assumptions": f.assumptions, "ir_text": f.ir_text,
        "machine_cycles": poly_to_json(f.machine_cycles) if f.machine_cycles is not None else None,
        "compile_flags": list(f.compile_flags),
        "overlaps": [{"loop": o.loop, "cycles": poly_to_json(o.cycles), "misses": _polys_to_json(o.misses)}
                     for o in f.overlaps],
        "inferred_sizes": f.inferred_sizes, "size_notes": f.size_notes,
        "call_sites": [[c.caller, c.callee, c.line, list(c.args)] for c in f.call_sites],
        "size_slots": list(f.size_slots),
        "field_stores": [[s.struct, s.offset, s.writer, s.line, s.value] for s in f.field_stores],
        "at_point": _at_point_to_json(f.at_point),
        "guessed_calls": {k: [depth, product, list(lines)] for k, (depth, product, lines) in f.guessed_calls.items()},
        "guessed_call_counts": _polys_to_json(f.guessed_call_counts),
        "open_call_counts": {k: [poly_to_json(a), poly_to_json(b)] for k, (a, b) in f.open_call_counts.items()},
        "guessed_nest": list(f.guessed_nest), "guessed_share": f.guessed_share,
    }


def _at_point_to_json(point: AtPoint | None) -> dict | None:
    if point is None:
        return None
    return {"values": point.values, "counts": point.counts, "machine_instructions": point.machine_instructions,
            "machine_cycles": point.machine_cycles, "calls": point.calls}


def _at_point_from_json(data: dict | None) -> AtPoint | None:
    if data is None:
        return None
    return AtPoint({k: float(v) for k, v in data["values"].items()}, {k: float(v) for k, v in data["counts"].items()},
                   data["machine_instructions"], data["machine_cycles"], {k: float(v) for k, v in data["calls"].items()})


def counted_from_json(d: dict[str, Any]) -> CountedFunction:
    """Inverse of counted_to_json; raises KeyError/ValueError/TypeError on foreign data."""
    if d.get("schema") != SCHEMA:
        raise ValueError(f"count cache schema {d.get('schema')!r} is not {SCHEMA}")

    def polys(data: dict) -> dict:
        return {k: poly_from_json(v) for k, v in data.items()}

    return CountedFunction(
        name=d["name"], display_name=d["display_name"], file=d["file"], line=d["line"], end_line=d["end_line"],
        language=d["language"], arch=d["arch"], parameters=list(d["parameters"]),
        static_counts={k: int(v) for k, v in d["static_counts"].items()}, counts=polys(d["counts"]),
        machine_instructions=poly_from_json(d["machine_instructions"]) if d["machine_instructions"] is not None else None,
        loops=[LoopSummary(l["id"], l["depth"], l["line"],
                           TripCount(l["kind"], poly_from_json(l["iterations"]), l["source_text"])) for l in d["loops"]],
        line_counts={int(line): polys(c) for line, c in d["line_counts"].items()},
        calls=polys(d["calls"]),
        sites=[FindingSite(s["kind"], s["line"], s["loop"], polys(s["classes"]), s["message"], s["cause"])
               for s in d["sites"]],
        assumptions=list(d["assumptions"]), ir_text=d.get("ir_text", ""),
        machine_cycles=poly_from_json(d["machine_cycles"]) if d.get("machine_cycles") is not None else None,
        compile_flags=tuple(d["compile_flags"]),
        overlaps=[MemoryOverlap(o["loop"], poly_from_json(o["cycles"]), polys(o["misses"])) for o in d["overlaps"]],
        inferred_sizes={k: float(v) for k, v in d["inferred_sizes"].items()},
        size_notes=list(d["size_notes"]),
        call_sites=tuple(CallSite(caller, callee, line, _tuples(args)) for caller, callee, line, args in d["call_sites"]),
        size_slots=tuple(d.get("size_slots", ())),
        field_stores=tuple(FieldStore(struct, offset, writer, line, _tuples(value))
                           for struct, offset, writer, line, value in d.get("field_stores", ())),
        at_point=_at_point_from_json(d.get("at_point")),
        guessed_calls={k: (int(depth), float(product), tuple(int(n) for n in lines))
                       for k, (depth, product, lines) in d["guessed_calls"].items()},
        guessed_call_counts=polys(d["guessed_call_counts"]),
        open_call_counts={k: (poly_from_json(a), poly_from_json(b)) for k, (a, b) in d["open_call_counts"].items()},
        guessed_nest=(int(d["guessed_nest"][0]), float(d["guessed_nest"][1])), guessed_share=float(d["guessed_share"]),
    )


def _tuples(value: Any) -> Any:
    """JSON lists back into the tuples call-site expressions are made of."""
    return tuple(_tuples(v) for v in value) if isinstance(value, list) else value
