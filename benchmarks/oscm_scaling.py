"""Scaling of the operational-space compliance Λ = 𝒥M⁻¹𝒥* ([Jain24]).

Serial chains of 8 … 512 bodies (``soadyn.models.serial_chain``), one frame at the tip.
Compares

* ``oscm``  — ``sd.operational_space_compliance``: ATBI + Υ scatter + one frame, O(N);
* ``dense`` — forming Λ densely: CRBA mass matrix (O(N²)), tip Jacobian, Cholesky
  solve (O(N³)), Λ = J M⁻¹ Jᵀ;
* ``minv``  — Λ = J M⁻¹ Jᵀ with the O(N²) ``sd.mass_matrix_inverse``;
* ``aba``   — one O(N) forward-dynamics call, for reference.

Writes ``benchmarks/results/oscm_scaling.csv`` and ``oscm_scaling.md`` (times in µs,
the best of 5 repetitions of a timed loop, after a warm-up call that compiles or loads
the Numba kernels). BLAS is limited to one thread, like the compiled kernels: on a
small shared machine a multi-threaded BLAS oversubscribes the cores and a 128 × 128
Cholesky factorization can take tens of milliseconds.

    PYTHONPATH=src python benchmarks/oscm_scaling.py [--sizes 8 16 ... 512]
"""
from __future__ import annotations

import argparse
import csv
import os
import platform
import time

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402  (after the BLAS thread settings)
from scipy.linalg import cho_factor, cho_solve  # noqa: E402

import soadyn as sd  # noqa: E402
from soadyn.models import serial_chain  # noqa: E402

SIZES = (8, 16, 32, 64, 128, 256, 512)
RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")


def best_time(f, budget=0.2, repeat=5):
    """Best per-call time [s] over ``repeat`` loops of about ``budget`` seconds each."""
    f()
    n, t = 1, 0.0
    while True:
        t0 = time.perf_counter()
        for _ in range(n):
            f()
        t = time.perf_counter() - t0
        if t >= budget / 4 or n >= 1 << 20:
            break
        n *= 2
    n = max(1, int(n * budget / max(t, 1e-9)))
    best = np.inf
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(n):
            f()
        best = min(best, (time.perf_counter() - t0) / n)
    return best


def measure(n):
    model = serial_chain(n)
    q = sd.random_configuration(model, np.random.default_rng(n))
    zeros = np.zeros(model.nv)
    M_buffer = np.zeros((model.nv, model.nv))

    def dense():
        M = sd.mass_matrix(model, q, out=M_buffer)
        J = sd.frame_jacobian(model, q, "tip", "local")
        return J @ cho_solve(cho_factor(M), J.T)

    def via_minv():
        J = sd.frame_jacobian(model, q, "tip", "local")
        return J @ sd.mass_matrix_inverse(model, q) @ J.T

    def oscm():
        return sd.operational_space_compliance(model, q, "tip")

    # same result three ways
    ref = dense()
    scale = max(1.0, np.abs(ref).max())
    err = max(np.abs(oscm() - ref).max(), np.abs(via_minv() - ref).max()) / scale
    return {
        "bodies": n,
        "oscm_us": best_time(oscm) * 1e6,
        "dense_us": best_time(dense) * 1e6,
        "minv_us": best_time(via_minv) * 1e6,
        "aba_us": best_time(lambda: sd.aba(model, q, zeros, zeros)) * 1e6,
        "max_rel_diff": err,
    }


def slope(xs, ys):
    """Least-squares exponent p of y ∝ x^p."""
    return float(np.polyfit(np.log(xs), np.log(ys), 1)[0])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    parser.add_argument("--output", default=RESULTS)
    args = parser.parse_args(argv)
    rows = []
    for n in args.sizes:
        row = measure(n)
        rows.append(row)
        print(f"N = {n:4d}: oscm {row['oscm_us']:9.1f} µs   dense {row['dense_us']:10.1f} µs   "
              f"minv {row['minv_us']:10.1f} µs   aba {row['aba_us']:8.1f} µs   "
              f"(agree to {row['max_rel_diff']:.1e})", flush=True)
    os.makedirs(args.output, exist_ok=True)
    keys = list(rows[0])
    with open(os.path.join(args.output, "oscm_scaling.csv"), "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=keys)
        w.writeheader()
        for row in rows:
            w.writerow({k: (f"{v:.6g}" if isinstance(v, float) else v) for k, v in row.items()})
    big = [r for r in rows if r["bodies"] >= 32] or rows
    exps = {k: slope([r["bodies"] for r in big], [r[k] for r in big]) for k in ("oscm_us", "dense_us", "minv_us", "aba_us")}
    lines = [
        "# Operational-space compliance: O(N) Υ/Λ algorithm vs dense J M⁻¹ Jᵀ",
        "",
        f"Serial chains (`soadyn.models.serial_chain`), one frame at the tip; best of 5 timed loops; "
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores (shared), single-threaded BLAS, "
        f"Python {platform.python_version()}, numpy {np.__version__}.",
        "",
        "| bodies | oscm [µs] | µs / body | dense CRBA + Cholesky [µs] | J M⁻¹ Jᵀ via M⁻¹ [µs] | ABA [µs] | dense / oscm |",
        "|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(f"| {r['bodies']} | {r['oscm_us']:.1f} | {r['oscm_us'] / r['bodies']:.2f} | {r['dense_us']:.1f} | "
                     f"{r['minv_us']:.1f} | {r['aba_us']:.1f} | {r['dense_us'] / r['oscm_us']:.1f} |")
    lines += ["", f"Fitted exponents p (time ∝ N^p, N ≥ {big[0]['bodies']}): oscm {exps['oscm_us']:.2f}, "
              f"dense {exps['dense_us']:.2f}, via M⁻¹ {exps['minv_us']:.2f}, ABA {exps['aba_us']:.2f}.",
              f"All three forms of Λ agree to {max(r['max_rel_diff'] for r in rows):.1e} (relative).", ""]
    with open(os.path.join(args.output, "oscm_scaling.md"), "w") as fh:
        fh.write("\n".join(lines))
    import sys
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import results_json
    from timing import machine_description
    results_json.write_twin(os.path.join(args.output, "oscm_scaling.md"), machine_description())
    print("\n".join(lines))


if __name__ == "__main__":
    main()
