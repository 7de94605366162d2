"""The evaluator of expression tapes (:mod:`soadyn.core.expression_tape`): the symbolic
constraints' φ, K and acceleration bias inside compiled kernels, one generic loop for every
model (no compilation per constraint)."""
from __future__ import annotations

import math

import numpy as np

from ..core.jit import helper, kernel

# operation codes, in the order of soadyn.core.expression_tape.OPCODES
(CONST, ADD, MUL, DIV, NEG, POWI, POW, SIN, COS, TAN, EXP, LOG, SQRT, ABS, ATAN2, ASIN, ACOS, ATAN, SINH, COSH,
 TANH, SUB, MULADD, MUL3, MUL3ADD, DOT2, SINCOS, SUMPROD, TERM) = range(29)
LOW = 0xFFFFFFFF  # the first of two registers packed in one operand (the second: >> 32)


@helper(fastmath=False)
def run_tape(code, consts, regs):
    """Run the instructions ``code`` (n, 4) over the registers ``regs``, whose first
    entries hold the inputs; every other register is written before it is read. The
    fused kinds compute exactly the operations of the instructions they replace, in the
    same order (parenthesized as written; compiled without fastmath, so x + a·b is not
    contracted into a fused multiply-add: the same two roundings as MUL then ADD)."""
    i = 0
    while i < code.shape[0]:
        op, d, a, b = code[i, 0], code[i, 1], code[i, 2], code[i, 3]
        if op == MULADD:  # the most frequent operations first
            regs[d] = regs[a] + regs[b & LOW] * regs[b >> 32]
        elif op == SUMPROD:  # the next b rows are its terms (TERM, a, b, c): + (a·b)·c
            k = i + 1
            if a >= 0:
                acc = regs[a]
            else:
                acc = (regs[code[k, 1]] * regs[code[k, 2]]) * regs[code[k, 3]]
                k += 1
            while k <= i + b:
                acc = acc + (regs[code[k, 1]] * regs[code[k, 2]]) * regs[code[k, 3]]
                k += 1
            regs[d] = acc
            i += b
        elif op == MUL:
            regs[d] = regs[a] * regs[b]
        elif op == MUL3ADD:
            regs[d] = regs[a & LOW] + (regs[a >> 32] * regs[b & LOW]) * regs[b >> 32]
        elif op == MUL3:
            regs[d] = (regs[a & LOW] * regs[a >> 32]) * regs[b]
        elif op == ADD:
            regs[d] = regs[a] + regs[b]
        elif op == DOT2:
            regs[d] = regs[a & LOW] * regs[a >> 32] + regs[b & LOW] * regs[b >> 32]
        elif op == SUB:
            regs[d] = regs[a] - regs[b]
        elif op == SINCOS:
            regs[d] = math.sin(regs[a])
            regs[b] = math.cos(regs[a])
        elif op == CONST:  # the block of constants, once at the start
            for k in range(b):
                regs[d + k] = consts[a + k]
        elif op == DIV:
            regs[d] = regs[a] / regs[b]
        elif op == NEG:
            regs[d] = -regs[a]
        elif op == POWI:
            x = regs[a]
            n = b if b >= 0 else -b
            acc = 1.0
            while n > 0:  # exponentiation by squaring
                if n & 1:
                    acc *= x
                x *= x
                n >>= 1
            regs[d] = acc if b >= 0 else 1.0 / acc
        elif op == POW:
            regs[d] = regs[a] ** regs[b]
        elif op == SIN:
            regs[d] = math.sin(regs[a])
        elif op == COS:
            regs[d] = math.cos(regs[a])
        elif op == TAN:
            regs[d] = math.tan(regs[a])
        elif op == EXP:
            regs[d] = math.exp(regs[a])
        elif op == LOG:
            regs[d] = math.log(regs[a]) if regs[a] > 0.0 else math.nan
        elif op == SQRT:
            regs[d] = math.sqrt(regs[a]) if regs[a] >= 0.0 else math.nan
        elif op == ABS:
            regs[d] = abs(regs[a])
        elif op == ATAN2:
            regs[d] = math.atan2(regs[a], regs[b])
        elif op == ASIN:
            regs[d] = math.asin(regs[a]) if abs(regs[a]) <= 1.0 else math.nan
        elif op == ACOS:
            regs[d] = math.acos(regs[a]) if abs(regs[a]) <= 1.0 else math.nan
        elif op == ATAN:
            regs[d] = math.atan(regs[a])
        elif op == SINH:
            regs[d] = math.sinh(regs[a])
        elif op == COSH:
            regs[d] = math.cosh(regs[a])
        else:
            regs[d] = math.tanh(regs[a])
        i += 1


# with reference counting (_nrt=True, soadyn.core.jit): it allocates its registers (a call
# from Python, not from the kernels, which pass theirs)
@kernel(fastmath=False, _nrt=True)
def tape_kernel(code, consts, outputs, n_registers, x, out):
    """Evaluate a tape from Python (tests, and constraints evaluated outside the kernels):
    inputs ``x``, outputs into ``out``; returns 0."""
    regs = np.empty(n_registers)
    for i in range(x.shape[0]):
        regs[i] = x[i]
    run_tape(code, consts, regs)
    for i in range(outputs.shape[0]):
        out[i] = regs[outputs[i]]
    return 0
