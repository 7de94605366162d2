"""The Coulomb NCP by ADMM on the proximal form of the contact problem [Carpentier24].

The splitting of [Carpentier24]: an unprojected primal x, its projection y = λ onto the
friction cones and the dual z = σ̂ (the corrected velocity), with

    x ← (G + R + (η + ρ) I)⁻¹ (ρ y + η x + z − g − Γ(z)),
    y ← P_K(x − z/ρ),      z ← z − ρ (x − y),

a proximal term η and the penalty ρ = √(L m) (L/m)^p, L the largest eigenvalue of G + R
(power iteration), m = η + min R, the exponent p raised or lowered by a step when the
primal residual ‖x − y‖ and the dual ‖ρ Δy + η Δx‖ are more than a ratio apart (the
"spectral" rule of [Carpentier24]); each change of ρ refactors the matrix
(:func:`shifted_cholesky`, or over G's envelope where contacts that share no body leave
zero blocks: :mod:`.envelope`). A change is followed by :data:`RHO_HOLD` iterations at the new
ρ, and none at an iteration whose NCP residual is below :data:`FAST_PROGRESS` times the
previous one's: the rule moves ρ by a factor (L/m)^0.05 (about 2 for rigid contact) at a
time, and applied at every iteration it refactored about as often as it iterated (talos
standing: 7.6 factorizations in 18 iterations per step), mostly in the final iterations,
where the residual already fell by 10× per iteration at the current ρ; held, 2.6 in 19.6
on the same problems. The iterations are accelerated by Anderson's method [Walker11] on the
pair (y, z), as [Zhang19] accelerates ADMM: each iterate is replaced by the combination of
the last :data:`AA_MEMORY` + 1 iterates whose residuals F(w) − w combine to the least norm
(:func:`anderson_step`), and an accelerated iterate whose residual came out larger than the
last accepted one's is dropped for the plain one, with the history (the safeguard); a solve
whose least accepted residual has not fallen for :data:`AA_PATIENCE` iterations goes on
without it. The
ADMM's linear convergence on a rank-deficient G is slow where contacts stick and slide at
once (a stack of boxes started with random velocities), and the combination takes out the
slowest directions of that contraction (the measurements: benchmarks/results/design_notes.md,
"anderson_step"). At a fixed point x = y = λ,
σ̂ = (G + R)λ + g + Γ = z ∈ K*, λ ∈ K and λ ⊥ σ̂: the NCP of :mod:`.cones`, whose
residuals at y are the stopping test.
"""
from __future__ import annotations

import math

from ...core.jit import helper, kernel
from ...core.layout import carve
from .cones import compliant_product, de_saxce, ncp_residuals, project_cone, project_dual_cone, row_dot
from .envelope import envelope_cholesky, envelope_product, envelope_solve, find_envelope

#: the proximal weight η (as Pinocchio's default ``mu_prox``)
PROXIMAL = 1e-6
#: the spectral rule: the initial exponent p, its step, the primal/dual ratio that moves it
RHO_POWER, RHO_POWER_STEP, PRIMAL_DUAL_RATIO = 0.2, 0.05, 10.0
#: power iterations for the largest eigenvalue L of G + R (at most; they stop when L
#: changes by less than EIGENVALUE_RTOL relatively)
POWER_ITERATIONS = 30
EIGENVALUE_RTOL = 1e-3
#: iterations a solve started from a given penalty scale keeps ρ (:func:`admm_solve`)
WARM_HOLD = 10
#: the largest exponent p a warm-started solve starts from (:func:`admm_solve`): p = 0 is
#: the balanced penalty ρ = √(L m). The exponent a cold solve ended at (0.25 on talos
#: standing) is the one that made progress from λ = 0; from the previous step's (λ, σ) the
#: iterations start near the solution, where the smaller ρ converged in 3 iterations what
#: ρ(0.25), 50× larger, took 14 (talos, 299 warm solves: 999 iterations against 4184;
#: 5-box stack, 396: 143 against 158)
WARM_POWER = 0.0
#: iterations at a new ρ before the spectral rule may change it again
RHO_HOLD = 3
#: the spectral rule leaves ρ alone at an iteration whose NCP residual is below this
#: fraction of the previous iteration's (the current ρ converges; a change costs a factorization)
FAST_PROGRESS = 0.5

#: Anderson acceleration (:func:`anderson_step`): the number m of past differences combined
AA_MEMORY = 5
#: the plain iterations before Anderson's history starts: most warm-started solves of a
#: time step end in fewer, where the history would only cost (the same iteration counts
#: with 0, 4 or 8: benchmarks/results/design_notes.md, "anderson_step")
AA_WAIT = 8
#: iterations without a new least accepted ‖F(w) − w‖ after which a solve stops accelerating: Anderson's
#: method can stall where the plain iterations converge (benchmarks/results/design_notes.md,
#: "AA_PATIENCE")
AA_PATIENCE = 60
#: the Tikhonov weight of Anderson's least squares, relative to the trace of its normal
#: matrix (the differences grow nearly parallel as the iterations converge)
AA_REGULARIZATION = 1e-10
#: iterations after which a solve started from a given penalty scale that has not converged
#: starts again from its best iterate with a scale of its own (:func:`admm_solve`)
WARM_RETRY = 50
#: rows (of n floats) of the solver's scratch ``V``: the ADMM's x, z, the envelope, the
#: previous y, x, z, a vector, the residuals' scratch, the residuals, the best iterate and
#: its σ (rows 0–10), then
#: Anderson's last m differences of the iterates F(w) (2n each), of their residuals
#: F(w) − w (2n each), and the last iterate and its residual (2n each)
SOLVER_ROWS = 11
ADMM_ROWS = SOLVER_ROWS + 4 * AA_MEMORY + 4
#: floats of ``V`` after its rows: Anderson's normal matrix and its factor (m × m each), the
#: combination's weights (m), a zero diagonal (m: its factorization adds none) and the best
#: iterate's residuals (3)
AA_SMALL = 2 * AA_MEMORY * AA_MEMORY + 2 * AA_MEMORY + 3

#: rows of the ``info`` output of the solver kernels
ITERATIONS, CONVERGED, PRIMAL, DUAL, COMPLEMENTARITY, RHO = range(6)
INFO_SIZE = 6


@helper(forceinline=True)
def write_info(info, iterations, converged, res, rho):
    """The ``info`` output of a solver kernel: iterations, converged, the residuals ``res``
    (primal, dual, complementarity) and the final ρ (0 for PGS)."""
    info[ITERATIONS] = iterations
    info[CONVERGED] = 1.0 if converged else 0.0
    info[PRIMAL], info[DUAL], info[COMPLEMENTARITY] = res[0], res[1], res[2]
    info[RHO] = rho


@helper(forceinline=True)
def largest_eigenvalue(G, R, v, w):
    """The largest eigenvalue of the symmetric positive semidefinite G + diag R by power
    iteration from the vector of ones; ``v``, ``w`` (n,) scratch."""
    n = v.shape[0]
    for r in range(n):
        v[r] = 1.0 / math.sqrt(n)
    L = 0.0
    for _ in range(POWER_ITERATIONS):
        norm = 0.0
        for r in range(n):
            acc = R[r] * v[r]
            for c in range(n):
                acc += G[r, c] * v[c]
            w[r] = acc
            norm += acc * acc
        norm = math.sqrt(norm)
        if not norm > 0.0:
            return 0.0
        settled = abs(norm - L) <= EIGENVALUE_RTOL * norm
        L = norm
        if settled:  # ρ needs the scale of L, not its digits
            break
        for r in range(n):
            v[r] = w[r] / norm
    return L


@helper
def shifted_cholesky(G, R, shift, A, floor):
    """A's lower triangle ← L with L Lᵀ = G + diag R + shift I (G (n, n) symmetric, only
    its lower triangle read), column by column (Cholesky–Crout): column j's pivot
    L_jj = √(A_jj − L[j, :j]·L[j, :j]), then its entries below,
    L_ij = (A_ij − L[i, :j]·L[j, :j]) / L_jj, each a dot product of two rows of L,
    contiguous in memory. Each entry is the same arithmetic as row by row
    (Cholesky–Banachiewicz), in another order: the entries of a column depend on none of
    each other, so their divisions overlap, where row by row each waited for the one before
    it (the measurements: benchmarks/results/design_notes.md, "shifted_cholesky"). No
    pivoting: with G + R positive semidefinite and shift > 0 the matrix is positive
    definite, and Cholesky is backward stable on such a matrix without it. Returns n, or the first row whose pivot is not positive (G + R not positive
    semidefinite by more than the shift) or, for ``floor`` > 0, whose squared pivot is at
    most ``floor`` times its diagonal entry (a row that depends on the rows before it to
    that precision: :mod:`.sticking`)."""
    n = G.shape[0]
    for j in range(n):
        Lj = A[j]
        diagonal = G[j, j] + R[j] + shift
        d = diagonal - row_dot(Lj, Lj, j)
        if not (d > 0.0 and d > floor * diagonal):
            return j
        pivot = math.sqrt(d)
        Lj[j] = pivot
        for i in range(j + 1, n):
            Li = A[i]
            Li[j] = (G[i, j] - row_dot(Li, Lj, j)) / pivot
    return n


@helper
def cholesky_solve(A, b, x):
    """x (n,) ← (L Lᵀ)⁻¹ b for L in the lower triangle of A (:func:`shifted_cholesky`);
    x may be b. Both sweeps read L by rows: forward y_i = (b_i − L[i, :i]·y)/L_ii, backward
    by columns of Lᵀ (x_i = y_i/L_ii, then y[:i] −= L[i, :i] x_i), each division a product
    with 1/L_ii (as :func:`~.envelope.envelope_solve`: the reciprocal depends on L alone,
    so the chain of dependent rows waits for a multiplication instead of a division)."""
    n = b.shape[0]
    for i in range(n):
        x[i] = (b[i] - row_dot(A[i], x, i)) * (1.0 / A[i, i])
    for i in range(n - 1, -1, -1):
        Li = A[i]
        xi = x[i] * (1.0 / Li[i])
        x[i] = xi
        for c in range(i):
            x[c] -= Li[c] * xi


@helper(forceinline=True)
def factor(G, R, shift, A, first):
    """:func:`~.envelope.envelope_cholesky` over the envelope ``first``, or
    :func:`shifted_cholesky` when ``first`` is empty (the dense G)."""
    return envelope_cholesky(G, R, shift, A, first) if first.shape[0] > 0 else shifted_cholesky(G, R, shift, A, 0.0)


@helper(forceinline=True)
def solve(A, b, x, first):
    """:func:`~.envelope.envelope_solve` over the envelope ``first``, or
    :func:`cholesky_solve` when ``first`` is empty."""
    if first.shape[0] > 0:
        envelope_solve(A, b, x, first)
    else:
        cholesky_solve(A, b, x)


@helper(forceinline=True)
def product(G, R, g, lam, sigma, first):
    """σ = (G + diag R)λ + g over the envelope ``first`` (:func:`~.envelope.envelope_product`),
    or dense (:func:`~.cones.compliant_product`) when ``first`` is empty."""
    if first.shape[0] > 0:
        envelope_product(G, R, g, lam, sigma, first)
    else:
        compliant_product(G, R, g, lam, sigma)


@helper(forceinline=True)
def admm_scratch_size(n):
    """Floats of the ADMM's scratch ``V`` for n = 3k rows (:data:`ADMM_ROWS`, :data:`AA_SMALL`);
    Python calls ``admm_scratch_size.py_func``."""
    return ADMM_ROWS * n + AA_SMALL


@helper(forceinline=True)
def corrected_dual_start(mu, sigma, z):
    """z (3k,) ← the projection of σ + Γ(σ) onto the dual cones K_μ*: the ADMM's dual start
    from velocities σ."""
    for i in range(mu.shape[0]):
        z[3 * i], z[3 * i + 1] = sigma[3 * i], sigma[3 * i + 1]
        z[3 * i + 2] = sigma[3 * i + 2] + de_saxce(mu[i], sigma, i)
        project_dual_cone(mu[i], z, i, z)


@helper(forceinline=True)
def keep_best(y, sigma, res, best_y, best_sigma, best_res):
    """The best iterate so far ← (y, σ, its residuals)."""
    for r in range(y.shape[0]):
        best_y[r], best_sigma[r] = y[r], sigma[r]
    best_res[0], best_res[1], best_res[2] = res[0], res[1], res[2]


@helper
def anderson_step(y, z, x, y_prev, z_prev, x_prev, dF, dR, last_f, last_r, small, count, head, have_last,
                  accelerated, accepted):
    """One step of Anderson's acceleration [Walker11] of the ADMM's map w = (y, z) ↦ F(w),
    after an iteration took w = (``y_prev``, ``z_prev``) to F(w) = (``y``, ``z``): with
    r = F(w) − w and the last m differences ΔF, ΔR of the iterates and of their residuals
    (``dF``, ``dR`` (m, 2n), a ring of ``count`` columns, the next at ``head``), the next w is
    F(w) − ΔF γ, γ = argmin ‖r − ΔR γ‖ (the normal equations with the Tikhonov weight
    :data:`AA_REGULARIZATION`, by :func:`shifted_cholesky`; ``small``: their matrix, its
    factor, γ and a zero diagonal). The safeguard: an
    iterate whose ‖r‖² is larger than ``accepted``, the last accepted one's, is dropped when
    it came from an accelerated w (``accelerated``): w goes back to the last plain iterate
    ``last_f`` (x to ``x_prev``); from a plain w it is kept and the history restarts from it.
    Either way the history is forgotten. Writes y, z (and x);
    returns (count, head, have_last, accelerated, accepted) for the next iteration."""
    n = y.shape[0]
    M = dF.shape[0]
    norm2 = 0.0
    for r in range(n):
        a, b = y[r] - y_prev[r], z[r] - z_prev[r]
        norm2 += a * a + b * b
    if have_last and norm2 > accepted:
        if accelerated:
            for r in range(n):
                y[r], z[r], x[r] = last_f[r], last_f[n + r], x_prev[r]
            return 0, 0, False, False, accepted
        # a plain iterate whose residual grew: the iterations left the regime the history
        # describes (contacts changing between sticking, sliding and separating); restart
        count, head, have_last = 0, 0, False
    N = carve(small, 0, (M, M))
    F = carve(small, M * M, (M, M))
    gamma = carve(small, 2 * M * M, M)
    zero = carve(small, 2 * M * M + M, M)
    if have_last:
        for r in range(n):
            dF[head, r] = y[r] - last_f[r]
            dF[head, n + r] = z[r] - last_f[n + r]
            dR[head, r] = (y[r] - y_prev[r]) - last_r[r]
            dR[head, n + r] = (z[r] - z_prev[r]) - last_r[n + r]
        count = min(count + 1, M)
        for j in range(count):
            N[head, j] = N[j, head] = row_dot(dR[head], dR[j], 2 * n)
        head = (head + 1) % M
    for r in range(n):
        last_f[r], last_f[n + r] = y[r], z[r]
        last_r[r], last_r[n + r] = y[r] - y_prev[r], z[r] - z_prev[r]
    if count == 0:
        return count, head, True, False, norm2
    trace = 0.0
    for j in range(count):
        trace += N[j, j]
        gamma[j] = row_dot(dR[j], last_r, 2 * n)
        zero[j] = 0.0
    Nm, Fm, gm = N[:count, :count], F[:count, :count], gamma[:count]
    if not (trace > 0.0 and shifted_cholesky(Nm, zero, AA_REGULARIZATION * trace, Fm, 0.0) == count):
        return count, head, True, False, norm2
    cholesky_solve(Fm, gm, gm)
    for j in range(count):
        c = gamma[j]
        Fj = dF[j]
        for r in range(n):
            y[r] -= c * Fj[r]
            z[r] -= c * Fj[n + r]
    return count, head, True, True, norm2


@kernel(nogil=True)
def admm_kernel(G, g, mu, R, tol, max_iter, warm, lam, sigma, info, A, V):
    """Solve the NCP of (G (n, n), g (n,), μ (k,), R (n,)), n = 3k, into λ = ``lam`` (n,)
    (on entry the warm start when ``warm``), σ = (G + R)λ + g into ``sigma`` and
    (iterations, converged, primal, dual, complementarity, ρ) into ``info``
    (:data:`INFO_SIZE`). Scratch: ``A`` (n, n), ``V`` (:func:`admm_scratch_size` floats). Stops
    when the three residuals are at most ``tol`` or after ``max_iter`` iterations.
    Returns 0, or 1 when the factorization failed (G + R not positive semidefinite)."""
    status, _, _ = admm_solve(G, g, mu, R, tol, max_iter, warm, lam, sigma, info, A, V, 0.0, RHO_POWER, sigma[:0])
    return status


@helper
def admm_solve(G, g, mu, R, tol, max_iter, warm, lam, sigma, info, A, V, L0, power0, dual):
    """:func:`admm_kernel` with the scale of the penalty given: ``L0`` > 0 the largest
    eigenvalue of G + R to use (0: estimate it by power iteration) and ``power0`` the
    spectral rule's starting exponent p. A time stepper passes the previous step's (its
    G nearly the same): no power iteration runs, the penalty starts at the exponent the
    last solve ended at but at most :data:`WARM_POWER`, and ρ is held for the first
    :data:`WARM_HOLD` iterations (from a warm start the
    primal and dual residuals are both tiny and their ratio says little; each change of ρ
    costs a factorization). ``dual`` (n,) or empty: the start of the dual z, a velocity σ
    (t1, t2, n) [m/s] per contact (a time stepper's previous σ, matched to the contacts as
    λ is), taken with ``warm`` (empty: σ of the primal start). z starts at the corrected
    σ + Γ(σ) projected onto the dual cones either way. A solve from a given scale that has
    not converged after :data:`WARM_RETRY` iterations starts again from its best iterate
    with the scale of a cold start (L by power iteration, p = :data:`RHO_POWER`). A solve
    stopped by ``max_iter`` returns its best iterate (the least largest residual), its σ and
    residuals. Returns (status, L, p at the end)."""
    n = g.shape[0]
    k = mu.shape[0]
    rows = carve(V, 0, (SOLVER_ROWS, n))
    x, z, first, y_prev, x_prev, tmp, p, res, z_prev = (rows[0], rows[1], rows[2], rows[3], rows[4], rows[5],
                                                        rows[6], rows[7], rows[8])
    best_y, best_sigma = rows[9], rows[10]
    M2 = 2 * AA_MEMORY * n
    dF = carve(V, SOLVER_ROWS * n, (AA_MEMORY, 2 * n))
    dR = carve(V, SOLVER_ROWS * n + M2, (AA_MEMORY, 2 * n))
    last_f = carve(V, SOLVER_ROWS * n + 2 * M2, 2 * n)
    last_r = carve(V, SOLVER_ROWS * n + 2 * M2 + 2 * n, 2 * n)
    small = carve(V, ADMM_ROWS * n, AA_SMALL)
    best_res = carve(small, AA_SMALL - 3, 3)
    y = lam
    for i in range(k):
        if warm:
            project_cone(mu[i], y, i, y)
        else:
            y[3 * i] = y[3 * i + 1] = y[3 * i + 2] = 0.0
    compliant_product(G, R, g, y, sigma)
    ncp_residuals(mu, y, sigma, p, res)
    if max(res[0], max(res[1], res[2])) <= tol:
        # the start solves it already (a warm start from the previous time step, or no
        # contact pressed): no eigenvalue, no factorization
        write_info(info, 0, True, res, 0.0)
        return 0, L0, power0
    # the iterations' products, factorizations and solves over G's envelope (:mod:`.envelope`)
    # where it leaves out a quarter of the lower triangle or more (a stack of boxes: 46 %);
    # otherwise (a floating base moved by every contact: none) by the dense ones
    if find_envelope(G, first) > 0.75 * (n * (n + 1) // 2):
        first = first[:0]
    L = L0 if L0 > 0.0 else largest_eigenvalue(G, R, tmp, p)
    r_min = R[0]
    for r in range(n):
        r_min = min(r_min, R[r])
    m = PROXIMAL + r_min
    L = max(L, m)
    power = min(power0, WARM_POWER) if L0 > 0.0 else power0
    hold = WARM_HOLD if L0 > 0.0 else 0
    rho = math.sqrt(L * m) * (L / m) ** power
    if factor(G, R, PROXIMAL + rho, A, first) < n:
        return 1, L, power
    for r in range(n):
        x[r] = y[r]
    # the dual's start: near a standing solution the previous step's σ (the sticking
    # contacts' velocities ≈ 0) is nearer the new σ* than σ of the warm λ on the new g,
    # whose error the rank-deficient G does not damp (talos: the first iteration from the
    # latter raised the residual 25×)
    corrected_dual_start(mu, dual if warm and dual.shape[0] == n else sigma, z)
    keep_best(y, sigma, res, best_y, best_sigma, best_res)
    it = 0
    changed = 0  # the iteration of the last change of ρ
    residual = max(res[0], max(res[1], res[2]))
    converged = residual <= tol
    # Anderson's state (anderson_step): the ring's columns and next slot, whether the last
    # iterate is kept, whether w is an accelerated point, the last accepted ‖F(w) − w‖²
    count, head, have_last, accelerated, accepted = 0, 0, False, False, 0.0
    # whether the iterations are accelerated; the least ‖F(w) − w‖² accepted and its iteration
    anderson, least, least_at, stalled = True, math.inf, 0, False
    while not converged and it < max_iter:
        it += 1
        for r in range(n):
            x_prev[r] = x[r]
            y_prev[r] = y[r]
            z_prev[r] = z[r]
            tmp[r] = rho * y[r] + PROXIMAL * x[r] + z[r] - g[r]  # the right-hand side
        for i in range(k):
            tmp[3 * i + 2] -= de_saxce(mu[i], z, i)
        solve(A, tmp, x, first)
        for r in range(n):
            tmp[r] = x[r] - z[r] / rho
        for i in range(k):
            project_cone(mu[i], tmp, i, y)
        primal = dual = 0.0
        for r in range(n):
            z[r] -= rho * (x[r] - y[r])
            primal = max(primal, abs(x[r] - y[r]))
            dual = max(dual, abs(rho * (y[r] - y_prev[r]) + PROXIMAL * (x[r] - x_prev[r])))
        product(G, R, g, y, sigma, first)
        ncp_residuals(mu, y, sigma, p, res)
        previous, residual = residual, max(res[0], max(res[1], res[2]))
        converged = residual <= tol
        if converged:
            break
        if residual < max(best_res[0], max(best_res[1], best_res[2])):
            keep_best(y, sigma, res, best_y, best_sigma, best_res)
        if anderson and it - max(least_at, AA_WAIT) > AA_PATIENCE:
            # stalled: the history restarts from this (plain) iterate; stalled again, the
            # iterations go on without it
            count, head, have_last, accelerated, least, least_at = 0, 0, False, False, math.inf, it
            anderson, stalled = not stalled, True
        if it == WARM_RETRY and L0 > 0.0:
            # the given scale is not this problem's (the contacts changed mode under it): the
            # scale of a cold start, from the best iterate (benchmarks/results/design_notes.md,
            # "WARM_RETRY")
            L = max(largest_eigenvalue(G, R, tmp, p), m)
            power, hold, changed = RHO_POWER, 0, it
            rho = math.sqrt(L * m) * (L / m) ** power
            if factor(G, R, PROXIMAL + rho, A, first) < n:
                return 1, L, power
            for r in range(n):
                y[r] = x[r] = best_y[r]
            corrected_dual_start(mu, best_sigma, z)
            count, head, have_last, accelerated = 0, 0, False, False
            continue
        if anderson and it > AA_WAIT:
            count, head, have_last, accelerated, accepted = anderson_step(
                y, z, x, y_prev, z_prev, x_prev, dF, dR, last_f, last_r, small, count, head, have_last, accelerated,
                accepted)
            if accepted < least:
                least, least_at = accepted, it
        if it <= hold:  # a given scale: keep its factorization for the first iterations
            continue
        if it - changed <= RHO_HOLD or residual < FAST_PROGRESS * previous:
            continue
        if primal > PRIMAL_DUAL_RATIO * dual:
            power += RHO_POWER_STEP
        elif dual > PRIMAL_DUAL_RATIO * primal:
            power -= RHO_POWER_STEP
        else:
            continue
        rho = math.sqrt(L * m) * (L / m) ** power
        changed = it
        count, head, have_last, accelerated = 0, 0, False, False  # another map: its history is not this one's
        if factor(G, R, PROXIMAL + rho, A, first) < n:
            return 1, L, power
    if not converged:
        # the last w may be Anderson's combination, outside the cones: λ is the best iterate
        # (the least of the three residuals' largest), with its σ and residuals
        for r in range(n):
            y[r], sigma[r] = best_y[r], best_sigma[r]
        res[0], res[1], res[2] = best_res[0], best_res[1], best_res[2]
    write_info(info, it, converged, res, rho)
    return 0, L, power
