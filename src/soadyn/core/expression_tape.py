"""Sympy expressions as instruction tapes that compiled kernels evaluate.

A constraint written in sympy (:func:`soadyn.core.constraints.symbolic_constraint`) is
evaluated inside the closed-chain kernels without calling back into Python and without
compiling a kernel per model: its expressions are reduced once, when the constraint is
made, to a straight-line program — sympy's common-subexpression elimination, then one
instruction per arithmetic operation or elementary function — stored in plain arrays
(:class:`Tape`) that one generic compiled evaluator runs
(:func:`soadyn.kernels.tape.run_tape`).

An instruction is four integers ``(op, dst, a, b)``: register ``dst`` receives the
operation applied to registers ``a`` and ``b`` (``CONST``: the constant ``consts[a]``;
``POWI``: register ``a`` to the integer power ``b``). Registers 0..n_in−1 hold the inputs;
the outputs are the registers listed in ``outputs``.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Tape", "NotCompilable", "build_tape", "OPCODES"]

#: operation codes of the evaluator (soadyn.kernels.tape), in this order
OPCODES = ("CONST", "ADD", "MUL", "DIV", "NEG", "POWI", "POW", "SIN", "COS", "TAN", "EXP", "LOG", "SQRT",
           "ABS", "ATAN2", "ASIN", "ACOS", "ATAN", "SINH", "COSH", "TANH")
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


def build_tape(inputs, outputs):
    """The :class:`Tape` computing the sympy expressions ``outputs`` from the symbols
    ``inputs`` (a sequence). Raises :class:`NotCompilable` for an operation the evaluator
    does not have (the caller then keeps the expressions in Python)."""
    import sympy
    unary = _unary()
    replacements, reduced = sympy.cse(list(outputs), optimizations="basic")
    reg = {sym: i for i, sym in enumerate(inputs)}
    code, consts, const_reg = [], [], {}
    count = [len(inputs)]

    def emit(op, a=0, b=0):
        code.append((_OP[op], count[0], a, b))
        count[0] += 1
        return count[0] - 1

    def constant(x):
        x = float(x)
        if x not in const_reg:
            consts.append(x)
            const_reg[x] = emit("CONST", len(consts) - 1)
        return const_reg[x]

    def fold(op, args):
        out = visit(args[0])
        for a in args[1:]:
            out = emit(op, out, visit(a))
        return out

    def visit(e):
        if e in reg:
            return reg[e]
        if e.is_Number or e.is_NumberSymbol:
            if not e.is_real:
                raise NotCompilable(f"the constant {e} is not real")
            return constant(e)
        if e.is_Symbol:
            raise NotCompilable(f"the symbol {e} is not an input ({list(inputs)})")
        if e.is_Add:
            r = fold("ADD", e.args)
        elif e.is_Mul:
            coeff, rest = e.as_coeff_Mul()
            if coeff == -1:
                r = emit("NEG", visit(rest))
            else:
                r = fold("MUL", e.args)
        elif e.is_Pow:
            base, ex = e.args
            if ex.is_Integer:
                r = emit("POWI", visit(base), int(ex))
            elif ex == sympy.Rational(1, 2):
                r = emit("SQRT", visit(base))
            else:
                r = emit("POW", visit(base), visit(ex))
        elif isinstance(e, sympy.atan2):
            r = emit("ATAN2", visit(e.args[0]), visit(e.args[1]))
        elif e.func in unary:
            r = emit(unary[e.func], visit(e.args[0]))
        else:
            raise NotCompilable(f"no compiled form for {e.func.__name__} (in {e})")
        reg[e] = r
        return r

    for sym, expr in replacements:
        reg[sym] = visit(expr)
    out = [visit(e) for e in reduced]
    return Tape(np.array(code, dtype=np.int64).reshape(-1, 4), np.array(consts, dtype=float),
                np.array(out, dtype=np.int64), len(inputs), count[0])
