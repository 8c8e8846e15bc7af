#!/usr/bin/env python3
# Fits the f32 polynomials of the cpu_fuser kernel preamble's vm_erff (python3 + mpmath).
# Weighted minimax polynomial fits (Lawson's iteratively reweighted least squares) in mpmath.
import mpmath as mp
mp.mp.dps = 40

def lawson(g, w, lo, hi, deg, M=None, iters=60, fixed=None):
    """Polynomial p(v) = sum c_k v^k minimising max_v w(v)|p(v) - g(v)| over [lo, hi].
    fixed: dict k -> value of coefficients held fixed. Returns (coeffs, max weighted error)."""
    lo, hi = mp.mpf(lo), mp.mpf(hi)
    M = M or 30 * (deg + 1)
    mid, half = (lo + hi) / 2, (hi - lo) / 2
    xs = [mid - half * mp.cos(mp.pi * (i + mp.mpf(0.5)) / M) for i in range(M)]
    fixed = fixed or {}
    free = [k for k in range(deg + 1) if k not in fixed]
    # basis in scaled variable z = (v - mid)/half for conditioning; fixed terms in v
    gs = [g(x) - sum(c * x**k for k, c in fixed.items()) for x in xs]
    ws = [w(x) for x in xs]
    # free basis functions: v^k evaluated directly (mp precision handles conditioning)
    B = [[x**k for k in free] for x in xs]
    lam = [mp.mpf(1) / M] * M
    best = None
    for it in range(iters):
        n = len(free)
        A = mp.matrix(n, n); b = mp.matrix(n, 1)
        for i in range(M):
            wi = lam[i] * ws[i]**2
            for r in range(n):
                br = B[i][r] * wi
                b[r] += br * gs[i]
                for c in range(r, n):
                    A[r, c] += br * B[i][c]
        for r in range(n):
            for c in range(r): A[r, c] = A[c, r]
        sol = mp.lu_solve(A, b)
        errs = [abs(ws[i] * (sum(sol[r] * B[i][r] for r in range(n)) - gs[i])) for i in range(M)]
        e = max(errs)
        if best is None or e < best[1]:
            best = (list(sol), e)
        tot = sum(lam[i] * errs[i] for i in range(M))
        lam = [lam[i] * errs[i] / tot for i in range(M)]
    coeffs = [None] * (deg + 1)
    for k, c in fixed.items(): coeffs[k] = c
    for r, k in enumerate(free): coeffs[k] = best[0][r]
    return coeffs, best[1]

def maxerr(coeffs, g, w, lo, hi, N=3000):
    e = 0
    for i in range(N + 1):
        x = mp.mpf(lo) + (mp.mpf(hi) - lo) * i / N
        p = mp.polyval(coeffs[::-1], x)
        e = max(e, abs(w(x) * (p - g(x))))
    return e

def f32(c):
    import struct
    return mp.mpf(struct.unpack('f', struct.pack('f', float(c)))[0])

def round_fit(g, w, lo, hi, deg, order=None):
    """Fit, then round coefficients to f32 one at a time (low order first), refitting the rest."""
    fixed = {}
    order = order or list(range(deg + 1))
    for k in order:
        c, e = lawson(g, w, lo, hi, deg, fixed=fixed, iters=40)
        fixed[k] = f32(c[k])
    c = [fixed[k] for k in range(deg + 1)]
    return c, maxerr(c, g, w, lo, hi)


if __name__ == "__main__":
    # Coefficients of vm_erff in src/executors/cpu_fuser/vector_math.cpp.
    L2 = 1 / mp.log(2)
    S = mp.mpf(0.875)

    def q_small(s):  # erf(x) = x + x q(x^2)
        if s == 0: return 2 / mp.sqrt(mp.pi) - 1
        x = mp.sqrt(s)
        return mp.erf(x) / x - 1

    def show(name, c, e):
        print('//', name, 'max weighted error', mp.nstr(e, 3))
        print(', '.join('%.9e' % float(v) for v in c[::-1]))

    # |x| < S: relative error of x + x q.
    show('small', *round_fit(q_small, lambda s: 1, 0, S * S, 5))
    # erfc = 2^Q: error of Q weighted by its effect on erf, erfc ln2.
    show('Q', *round_fit(lambda a: mp.log(mp.erfc(a)) * L2, lambda a: mp.erfc(a) / L2, S, 4, 6))
    # 2^f on [-1/2, 1/2], relative, constant term exactly 1.
    fixed = {0: mp.mpf(1)}
    for k in range(1, 7):
        c, _ = lawson(lambda f: 2**f, lambda f: 1 / 2**f, -0.5, 0.5, 6, fixed=fixed, iters=40)
        fixed[k] = f32(c[k])
    c = [fixed[k] for k in range(7)]
    show('exp2', c, maxerr(c, lambda f: 2**f, lambda f: 1 / 2**f, -0.5, 0.5))
