"""How the two mass-matrix methods scale on serial chains (the worst case of both: every
entry of M nonzero): time per call against the number of bodies N, and the exponent of a
least-squares fit t ∝ N^p over N ≥ 32. ``crba``: composite rigid bodies; ``jtmj``: M =
Gᵀ Ψ_Dᵀ M Ψ_D G column by column [CDI18, eq. 14], O(N²). Writes
``results/mass_matrix_scaling.md``.

    PYTHONPATH=src python benchmarks/mass_matrix_scaling.py
"""
from __future__ import annotations

import os
import time
import timeit

import numpy as np

import soadyn as sd

HERE = os.path.dirname(os.path.abspath(__file__))
SIZES = (8, 16, 32, 64, 128, 256, 512)


def per_call(fn, seconds=0.2):
    fn()
    n = max(1, int(seconds / max(timeit.timeit(fn, number=1), 1e-7)))
    return min(timeit.repeat(fn, number=n, repeat=5)) / n


def exponent(ns, ts, nmin=32):
    keep = [k for k, n in enumerate(ns) if n >= nmin]
    return float(np.polyfit(np.log([ns[k] for k in keep]), np.log([ts[k] for k in keep]), 1)[0])


def main():
    rng = np.random.default_rng(0)
    rows, times = [], {"crba": [], "jtmj": []}
    for n in SIZES:
        model = sd.models.serial_chain(n)
        q = sd.random_configuration(model, rng)
        assert np.allclose(sd.mass_matrix(model, q, method="jtmj"), sd.mass_matrix(model, q), rtol=1e-10, atol=1e-10)
        t = {m: per_call(lambda m=m: sd.mass_matrix(model, q, method=m)) for m in times}
        for m in times:
            times[m].append(t[m])
        rows.append(f"| {n} | {t['crba'] * 1e6:.1f} | {t['jtmj'] * 1e6:.1f} | {t['jtmj'] / t['crba']:.2f} |")
    fit = {m: exponent(SIZES, times[m]) for m in times}
    text = "\n".join([f"# Mass matrix on serial chains: CRBA and [CDI18]'s JᵀMJ ({time.strftime('%Y-%m-%d')})", "",
                      "µs per call (best of 5 repeats), `soadyn.models.serial_chain(N)` at a random configuration; "
                      f"fitted exponents over N ≥ 32: crba {fit['crba']:.2f}, jtmj {fit['jtmj']:.2f} "
                      "(t ∝ N^p; both fill an N × N matrix).", "",
                      "| N | crba [µs] | jtmj [µs] | jtmj / crba |", "|---|---|---|---|"] + rows + [""])
    with open(os.path.join(HERE, "results", "mass_matrix_scaling.md"), "w") as f:
        f.write(text)
    import sys
    sys.path.insert(0, HERE)
    import results_json
    from timing import machine_description
    results_json.write_twin(os.path.join(HERE, "results", "mass_matrix_scaling.md"), machine_description())
    print(text)


if __name__ == "__main__":
    main()
