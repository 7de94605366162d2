"""O(N) products with spatial propagation operators (SPOs): [CDI18]'s two algorithms.

[CDI18, "O(N) recursive operators"] for an influence matrix Φ_A of a block-diagonal
A = diag{A_i} ([Φ_A](i, ℘(i)) = A_i) and Ψ_A = (e − Φ_A)⁻¹:

* z = Ψ_A x:   z_i = A_i z_℘(i) + x_i,  parents before children (base to tips);
* z = Ψ_Aᵀ x:  z = x, then z_℘(i) += A_iᵀ z_i,  children before parents (tips to base),

here for any tree (several children per body, several roots). With A_k = φ*(℘(k), k)
they are φ*x and φx (Ψ_A = φ*, since Φ_A = E_φ*); with A_k = ψ*(℘(k), k) =
τ̄*(k)φ*(℘(k), k) they are ψ*x and ψx ([Jain24, topic 6], [Jain12, §2.4] "O(N)
procedures for computing SPO operator and stacked vector products").
"""
from __future__ import annotations


from ..core.jit import kernel
from ..core.layout import model_tables
from ..core.status import BAD_SECOND, BAD_SHAPE, OK
from .innovations import atbi, spo_adjoint_blocks
from .kinematics import configuration_status, joint_placements, nonfinite_matrix


@kernel
def influence_product_kernel(parents, A, x, z, transpose):
    """z = Ψ_A x (``transpose`` False) or z = Ψ_Aᵀ x (True); A (n, k, k), x and z (n, k)."""
    n = parents.shape[0]
    k = A.shape[1]
    if not transpose:
        for i in range(n):
            p = parents[i]
            for a in range(k):
                acc = x[i, a]
                if p >= 0:
                    for b in range(k):
                        acc += A[i, a, b] * z[p, b]
                z[i, a] = acc
    else:
        for i in range(n):  # z = x, as loops (see soadyn.kernels.oscm._copy6)
            for a in range(k):
                z[i, a] = x[i, a]
        for i in range(n - 1, -1, -1):
            p = parents[i]
            if p >= 0:
                for a in range(k):
                    acc = 0.0
                    for b in range(k):
                        acc += A[i, b, a] * z[i, b]
                    z[p, a] += acc


@kernel
def spo_product_kernel(mi, mf, ws, q, psi, adjoint, A, x, z):
    """z = φx, φ*x, ψx or ψ*x (see ``soadyn.dynamics.spo.spo_product``); ``A`` (nb, 6, 6) scratch."""
    m = model_tables(mi, mf)
    st = configuration_status(m, q, ws)
    if st != OK:
        return st
    if x.shape[0] != m.nb or z.shape[0] != m.nb or A.shape[0] != m.nb:
        return BAD_SHAPE
    if nonfinite_matrix(x):
        return BAD_SECOND
    if psi:
        st = atbi(mi, mf, ws, q)
        if st != OK:
            return st
    else:
        joint_placements(mi, mf, ws, q)
    spo_adjoint_blocks(mi, mf, ws, psi, A)
    influence_product_kernel(m.parent, A, x, z, not adjoint)
    return OK
