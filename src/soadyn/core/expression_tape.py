"""Sympy expressions as instruction tapes that compiled kernels evaluate.

A constraint written in sympy (:func:`soadyn.core.constraints.symbolic_constraint`) is
evaluated inside the closed-chain kernels without calling back into Python and without
compiling a kernel per model: its expressions are reduced once, when the constraint is
made, to a straight-line program — sympy's common-subexpression elimination, then one
instruction per arithmetic operation or elementary function — stored in plain arrays
(:class:`Tape`) that one generic compiled evaluator runs
(:func:`soadyn.kernels.tape.run_tape`).

An instruction is four integers ``(op, dst, a, b)``: register ``dst`` receives the
operation applied to registers ``a`` and ``b`` (``POWI``: register ``a`` to the integer
power ``b``). Registers 0..n_in−1 hold the inputs, the next ones the constants, which the
first instruction ``CONST`` copies in one block (``consts[a:a+b]`` into ``dst..dst+b−1``);
the outputs are the registers listed in ``outputs``.

An interpreter pays a dispatch per instruction (an unpredictable branch, several times the
cost of the arithmetic), so the program is made short without changing a single
floating-point operation: identical operations are computed once (value numbering), and
frequent patterns become one instruction performing the same operations in the same
order — ``SUB`` (a + (−b) is a − b in IEEE 754), ``MULADD`` x + a·b, ``MUL3`` (a·b)·c,
``MUL3ADD`` x + (a·b)·c, ``DOT2`` a·b + c·d, ``SINCOS`` (sin and cos of one register),
``SUMPROD`` ((x + t₁) + t₂) + … of terms tₖ = (a·b)·c — when the inner results are used
nowhere else. Their third and fourth register operands sit in the upper 32 bits of ``a``
and ``b``: ``MULADD`` (dst, x, a | b≪32), ``MUL3`` (dst, a | b≪32, c), ``MUL3ADD``
(dst, x | a≪32, b | c≪32), ``DOT2`` (dst, a | b≪32, c | d≪32), ``SINCOS`` (sin dst, a,
cos dst), ``SUMPROD`` (dst, x or −1, n) followed by n rows ``(TERM, a, b, c)`` (with
x = −1 the first term starts the sum). Only the CONST row has op 0: a packer that
concatenates tapes (:mod:`soadyn.closed.embedding.compiled`) offsets its ``a`` into the
joint constant array.
"""
from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass

import numpy as np

__all__ = ["Tape", "NotCompilable", "build_tape", "OPCODES"]

#: operation codes of the evaluator (soadyn.kernels.tape), in this order
OPCODES = ("CONST", "ADD", "MUL", "DIV", "NEG", "POWI", "POW", "SIN", "COS", "TAN", "EXP", "LOG", "SQRT",
           "ABS", "ATAN2", "ASIN", "ACOS", "ATAN", "SINH", "COSH", "TANH",
           "SUB", "MULADD", "MUL3", "MUL3ADD", "DOT2", "SINCOS", "SUMPROD", "TERM")
_OP = {name: code for code, name in enumerate(OPCODES)}


class NotCompilable(ValueError):
    """An expression uses an operation the tape evaluator does not have."""


@dataclass(frozen=True)
class Tape:
    """A straight-line program: ``code`` (n, 4) int64 instructions, ``consts`` float64,
    ``outputs`` (n_out,) int64 registers, ``n_inputs``, ``n_registers``."""

    code: np.ndarray
    consts: np.ndarray
    outputs: np.ndarray
    n_inputs: int
    n_registers: int


def _unary():
    import sympy
    return {sympy.sin: "SIN", sympy.cos: "COS", sympy.tan: "TAN", sympy.exp: "EXP", sympy.log: "LOG",
            sympy.Abs: "ABS", sympy.asin: "ASIN", sympy.acos: "ACOS", sympy.atan: "ATAN", sympy.sinh: "SINH",
            sympy.cosh: "COSH", sympy.tanh: "TANH"}


_COMMUTATIVE = ("ADD", "MUL")


class _Instruction:
    """One instruction while the tape is built: ``op`` on the value ids ``args`` (``imm``:
    POWI's exponent) giving the value ``dst`` (and ``dst2``, the cosine of SINCOS); ``op``
    None once fused into its only user."""

    __slots__ = ("op", "dst", "args", "imm", "dst2")

    def __init__(self, op, dst, args, imm=0):
        self.op, self.dst, self.args, self.imm, self.dst2 = op, dst, list(args), imm, None


def build_tape(inputs, outputs):
    """The :class:`Tape` computing the sympy expressions ``outputs`` from the symbols
    ``inputs`` (a sequence). Raises :class:`NotCompilable` for an operation the evaluator
    does not have (the caller then keeps the expressions in Python)."""
    import sympy
    replacements, reduced = sympy.cse(list(outputs), optimizations="basic")
    program = _Program(inputs)
    values = program.lower(replacements, reduced, _unary())
    _fuse(program.code, values)
    _chain(program, values)
    return _assemble(len(inputs), {i: x for (x, _), i in program.consts.items()}, program.code, values)


class _Program:
    """The sympy expressions as instructions on value ids (0..n_in−1: the inputs; then
    constants and results in order of creation), each distinct operation once."""

    def __init__(self, inputs):
        self.inputs = list(inputs)
        self.value = {sym: i for i, sym in enumerate(self.inputs)}
        self.n_values = len(self.inputs)
        self.consts = {}  # (value, sign) -> id: -0.0 and 0.0 kept apart
        self.code = []
        self.numbered = {}  # (op, operands, immediate) -> id: value numbering

    def fresh(self):
        self.n_values += 1
        return self.n_values - 1

    def constant(self, e):
        x = float(e)
        key = (x, math.copysign(1.0, x))
        if key not in self.consts:
            self.consts[key] = self.fresh()
        return self.consts[key]

    def emit(self, op, *args, imm=0):
        # the same operation on the same registers gives the same bits: compute it once
        # (ADD and MUL commute exactly in IEEE 754, so their operands are sorted)
        key = (op, tuple(sorted(args)) if op in _COMMUTATIVE else args, imm)
        if key not in self.numbered:
            self.numbered[key] = self.fresh()
            self.code.append(_Instruction(op, self.numbered[key], args, imm))
        return self.numbered[key]

    def fold(self, op, args):
        out = self.visit(args[0])
        for a in args[1:]:
            out = self.emit(op, out, self.visit(a))
        return out

    def visit(self, e):
        import sympy
        if e in self.value:
            return self.value[e]
        if e.is_Number or e.is_NumberSymbol:
            if not e.is_real:
                raise NotCompilable(f"the constant {e} is not real")
            return self.constant(e)
        if e.is_Symbol:
            raise NotCompilable(f"the symbol {e} is not an input ({self.inputs})")
        if e.is_Add:
            r = self.fold("ADD", e.args)
        elif e.is_Mul:
            coeff, rest = e.as_coeff_Mul()
            if coeff == -1:
                r = self.emit("NEG", self.visit(rest))
            else:
                r = self.fold("MUL", e.args)
        elif e.is_Pow:
            base, ex = e.args
            if ex.is_Integer:
                r = self.emit("POWI", self.visit(base), imm=int(ex))
            elif ex == sympy.Rational(1, 2):
                r = self.emit("SQRT", self.visit(base))
            else:
                r = self.emit("POW", self.visit(base), self.visit(ex))
        elif isinstance(e, sympy.atan2):
            r = self.emit("ATAN2", self.visit(e.args[0]), self.visit(e.args[1]))
        elif e.func in self.unary:
            r = self.emit(self.unary[e.func], self.visit(e.args[0]))
        else:
            raise NotCompilable(f"no compiled form for {e.func.__name__} (in {e})")
        self.value[e] = r
        return r

    def lower(self, replacements, reduced, unary):
        """The output ids of the cse-reduced expressions (instructions in ``code``)."""
        self.unary = unary
        for sym, expr in replacements:
            self.value[sym] = self.visit(expr)
        return [self.visit(e) for e in reduced]


def _fuse(code, outputs):
    """Merge instructions into the fused kinds (module docstring) where the inner result
    has no other use (and is not an output): each fused instruction performs the same
    floating-point operations in the same order as the ones it replaces."""
    uses = Counter(outputs)
    for ins in code:
        uses.update(ins.args)
    made = {ins.dst: ins for ins in code}

    def single(v, ops):
        ins = made.get(v)
        return ins if ins is not None and ins.op in ops and uses[v] == 1 else None

    def absorb(ins, op, args, *inner):
        ins.op, ins.args = op, args
        for i in inner:
            i.op = None

    for ins in code:
        if ins.op == "ADD":
            x, y = ins.args
            if n := single(y, ("NEG",)):
                absorb(ins, "SUB", [x, n.args[0]], n)
            elif n := single(x, ("NEG",)):
                absorb(ins, "SUB", [y, n.args[0]], n)
        if ins.op == "MUL":
            for k in (0, 1):
                if m := single(ins.args[k], ("MUL",)):  # (a·b)·c
                    absorb(ins, "MUL3", m.args + [ins.args[1 - k]], m)
                    break
        if ins.op == "ADD":
            x, y = ins.args
            p, q = single(x, ("MUL", "MUL3")), single(y, ("MUL", "MUL3"))
            if p and q and p.op == q.op == "MUL":
                absorb(ins, "DOT2", p.args + q.args, p, q)
            elif p or q:
                m, other = (q, x) if q and (not p or q.op == "MUL3") else (p, y)
                absorb(ins, m.op + "ADD", [other] + m.args, m)
    first = {}  # the sine and the cosine of one register: one instruction
    for ins in code:
        if ins.op in ("SIN", "COS"):
            twin = first.setdefault(ins.args[0], ins)
            if twin is not ins and twin.op in ("SIN", "COS") and twin.op != ins.op:
                sin, cos = (twin.dst, ins.dst) if twin.op == "SIN" else (ins.dst, twin.dst)
                twin.op, twin.dst, twin.dst2 = "SINCOS", sin, cos
                ins.op = None


def _chain(program, outputs):
    """Sums of products x + t₁ + t₂ + … built link by link (MULADD, MUL3ADD; DOT2 or a
    register first) whose partial sums have no other use: one SUMPROD, adding the terms
    (a·b)·c in the same order (a two-factor term is (a·b)·1, exactly a·b)."""
    code = program.code
    uses = Counter(outputs)
    for ins in code:
        uses.update(ins.args)
    made = {ins.dst: ins for ins in code if ins.op is not None}

    def as_sum(ins):  # (first register or None, terms (a, b, c))
        if ins.op == "SUMPROD":
            return ins.imm
        if ins.op == "MUL3ADD":
            return ins.args[0], [tuple(ins.args[1:])]
        one = program.constant(1.0)
        if ins.op == "DOT2":
            return None, [(ins.args[0], ins.args[1], one), (ins.args[2], ins.args[3], one)]
        return ins.args[0], [(ins.args[1], ins.args[2], one)]  # MULADD

    for ins in code:
        if ins.op in ("MULADD", "MUL3ADD"):
            p = made.get(ins.args[0])
            if p is not None and p.op in ("MULADD", "MUL3ADD", "DOT2", "SUMPROD") and uses[p.dst] == 1:
                (first, terms), (_, mine) = as_sum(p), as_sum(ins)
                ins.op, ins.imm, p.op = "SUMPROD", (first, terms + mine), None


def _pack(lo, hi):
    return lo | (hi << 32)


def _assemble(n_inputs, consts, code, outputs):
    """The :class:`Tape`: registers numbered inputs, constants (one CONST block), then the
    results in program order."""
    reg = {i: i for i in range(n_inputs)}
    for i in consts:
        reg[i] = len(reg)
    rows = [(_OP["CONST"], n_inputs, 0, len(consts))] if consts else []
    for ins in code:
        if ins.op is None:
            continue
        reg[ins.dst] = len(reg)
        if ins.dst2 is not None:
            reg[ins.dst2] = len(reg)
        if ins.op == "SUMPROD":
            first, terms = ins.imm
            rows.append((_OP["SUMPROD"], reg[ins.dst], -1 if first is None else reg[first], len(terms)))
            rows += [(_OP["TERM"], reg[x], reg[y], reg[z]) for x, y, z in terms]
            continue
        r = [reg[a] for a in ins.args]
        if ins.op == "MULADD":
            a, b = r[0], _pack(r[1], r[2])
        elif ins.op == "MUL3":
            a, b = _pack(r[0], r[1]), r[2]
        elif ins.op in ("MUL3ADD", "DOT2"):
            a, b = _pack(r[0], r[1]), _pack(r[2], r[3])
        elif ins.op == "SINCOS":
            a, b = r[0], reg[ins.dst2]
        elif ins.op == "POWI":
            a, b = r[0], ins.imm
        else:
            a, b = r[0], (r[1] if len(r) > 1 else 0)
        rows.append((_OP[ins.op], reg[ins.dst], a, b))
    return Tape(np.array(rows, dtype=np.int64).reshape(-1, 4), np.array(list(consts.values()), dtype=float),
                np.array([reg[o] for o in outputs], dtype=np.int64), n_inputs, len(reg))
