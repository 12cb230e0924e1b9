"""The Bessel functions of the first and second kind, J₀, J₁, Y₀, Y₁, and the Airy function Ai, as
``torch.special`` has them: elementwise, not differentiable (no node is recorded, as in PyTorch).

PyTorch evaluates them with Moshier's Cephes approximations, and so does this module, so that the values agree
to the last digits, near the zeros too, where any other method would differ from PyTorch's in relative terms.
The coefficient tables below are Cephes' published ones (public-domain mathematics); the evaluation is ours,
vectorised over arrays and run in the input's precision (float32 inputs compute in float32, as PyTorch's
kernels do, which matters for the phase x - π/4 of a large float32 argument).

Intended difference from the exact functions (not from PyTorch): PyTorch's port evaluates every denominator as a
plain polynomial of its listed coefficients, where Cephes' own code (``p1evl``) adds a leading 1 to some of them.
Its values, so ours, are therefore off the true J, Y and Ai by up to about 5e-5 relative (scipy's are exact).

Shape of the approximations:

* |x| ≤ 5: J and Y are rational functions of x² (Y adds its 2/π·log(x)·J term); J's two first zeros are factored
  out so that the values near them keep their relative precision.
* |x| > 5: Hankel's form √(2/(πx))·(P·cos(x - φ) ∓ (5/x)·Q·sin(x - φ)), with P and Q rational in (5/x)² and
  φ = π/4 for order 0, 3π/4 for order 1; Y uses the same P and Q with sin and cos exchanged.
* Ai: an asymptotic rational form for x < -2.09 (oscillating) and for x ≥ 2.09 (decaying), the Maclaurin
  series in between, 0 above 103.892, nan at ±inf.
"""
import numpy as np

from .special_bessel import _not_differentiable

__all__ = ["bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "airy_ai"]

_TWO_OVER_PI = 0.636619772367581343075535053490057448
_SQRT_TWO_OVER_PI = 0.797884560802865355879892119868763737
_QUARTER_PI = 0.785398163397448309615660845819875721
_THREE_QUARTER_PI = 2.356194490192344928846982537459627163

# --- Hankel's P and Q for |x| > 5, shared by J and Y of one order --------------------------------------------
_P0_NUMERATOR = (7.96936729297347051624e-04, 8.28352392107440799803e-02, 1.23953371646414299388e+00,
                 5.44725003058768775090e+00, 8.74716500199817011941e+00, 5.30324038235394892183e+00,
                 9.99999999999999997821e-01)
_P0_DENOMINATOR = (9.24408810558863637013e-04, 8.56288474354474431428e-02, 1.25352743901058953537e+00,
                   5.47097740330417105182e+00, 8.76190883237069594232e+00, 5.30605288235394617618e+00,
                   1.00000000000000000218e+00)
_Q0_NUMERATOR = (-1.13663838898469149931e-02, -1.28252718670509318512e+00, -1.95539544257735972385e+01,
                 -9.32060152123768231369e+01, -1.77681167980488050595e+02, -1.47077505154951170175e+02,
                 -5.14105326766599330220e+01, -6.05014350600728481186e+00)
_Q0_DENOMINATOR = (6.43178256118178023184e+01, 8.56430025976980587198e+02, 3.88240183605401609683e+03,
                   7.24046774195652478189e+03, 5.93072701187316984827e+03, 2.06209331660327847417e+03,
                   2.42005740240291393179e+02)
_P1_NUMERATOR = (7.62125616208173112003e-04, 7.31397056940917570436e-02, 1.12719608129684925192e+00,
                 5.11207951146807644818e+00, 8.42404590141772420927e+00, 5.21451598682361504063e+00,
                 1.00000000000000000254e+00)
_P1_DENOMINATOR = (5.71323128072548699714e-04, 6.88455908754495404082e-02, 1.10514232634061696926e+00,
                   5.07386386128601488557e+00, 8.39985554327604159757e+00, 5.20982848682361821619e+00,
                   9.99999999999999997461e-01)
_Q1_NUMERATOR = (5.10862594750176621635e-02, 4.98213872951233449420e+00, 7.58238284132545283818e+01,
                 3.66779609360150777800e+02, 7.10856304998926107277e+02, 5.97489612400613639965e+02,
                 2.11688757100572135698e+02, 2.52070205858023719784e+01)
_Q1_DENOMINATOR = (7.42373277035675149943e+01, 1.05644886038262816351e+03, 4.98641058337653607651e+03,
                   9.56231892404756170795e+03, 7.99704160447350683650e+03, 2.82619278517639096600e+03,
                   3.36093607810698293419e+02)

# --- |x| ≤ 5 ----------------------------------------------------------------------------------------------
_J0_NUMERATOR = (-4.79443220978201773821e+09, 1.95617491946556577543e+12, -2.49248344360967716204e+14,
                 9.70862251047306323952e+15)
_J0_DENOMINATOR = (4.99563147152651017219e+02, 1.73785401676374683123e+05, 4.84409658339962045305e+07,
                   1.11855537045356834862e+10, 2.11277520115489217587e+12, 3.10518229857422583814e+14,
                   3.18121955943204943306e+16, 1.71086294081043136091e+18)
#: the squares of J₀'s first two zeros
_J0_ZEROS_SQUARED = (5.78318596294678452118e+00, 3.04712623436620863991e+01)
_J1_NUMERATOR = (-8.99971225705559398224e+08, 4.52228297998194034323e+11, -7.27494245221818276015e+13,
                 3.68295732863852883286e+15)
_J1_DENOMINATOR = (6.20836478118054335476e+02, 2.56987256757748830383e+05, 8.35146791431949253037e+07,
                   2.21511595479792499675e+10, 4.74914122079991414898e+12, 7.84369607876235854894e+14,
                   8.95222336184627338078e+16, 5.32278620332680085395e+18)
_J1_ZEROS_SQUARED = (1.46819706421238932572e+01, 4.92184563216946036703e+01)
_Y0_NUMERATOR = (1.55924367855235737965e+04, -1.46639295903971606143e+07, 5.43526477051876500413e+09,
                 -9.82136065717911466409e+11, 8.75906394395366999549e+13, -3.46628303384729719441e+15,
                 4.42733268572569800351e+16, -1.84950800436986690637e+16)
_Y0_DENOMINATOR = (1.04128353664259848412e+03, 6.26107330137134956842e+05, 2.68919633393814121987e+08,
                   8.64002487103935000337e+10, 2.02979612750105546709e+13, 3.17157752842975028269e+15,
                   2.50596256172653059228e+17)
_Y1_NUMERATOR = (1.26320474790178026440e+09, -6.47355876379160291031e+11, 1.14509511541823727583e+14,
                 -8.12770255501325109621e+15, 2.02439475713594898196e+17, -7.78877196265950026825e+17)
_Y1_DENOMINATOR = (5.94301592346128195359e+02, 2.35564092943068577943e+05, 7.34811944459721705660e+07,
                   1.87601316108706159478e+10, 3.88231277496238566008e+12, 6.20557727146953693363e+14,
                   6.87141087355300489866e+16, 3.97270608116560655612e+18)

# --- Airy's Ai --------------------------------------------------------------------------------------------
_AI_DECAYING_NUMERATOR = (3.46538101525629032477e-01, 1.20075952739645805542e+01, 7.62796053615234516538e+01,
                          1.68089224934630576269e+02, 1.59756391350164413639e+02, 7.05360906840444183113e+01,
                          1.40264691163389668864e+01, 9.99999999999999995305e-01)
_AI_DECAYING_DENOMINATOR = (5.67594532638770212846e-01, 1.47562562584847203173e+01, 8.45138970141474626562e+01,
                            1.77318088145400459522e+02, 1.64234692871529701831e+02, 7.14778400825575695274e+01,
                            1.40959135607834029598e+01, 1.00000000000000000470e+00)
_AI_F_NUMERATOR = (-1.31696323418331795333e-01, -6.26456544431912369773e-01, -6.93158036036933542233e-01,
                   -2.79779981545119124951e-01, -4.91900132609500318020e-02, -4.06265923594885404393e-03,
                   -1.59276496239262096340e-04, -2.77649108155232920844e-06, -1.67787698489114633780e-08)
_AI_F_DENOMINATOR = (1.33560420706553243746e+01, 3.26825032795224613948e+01, 2.67367040941499554804e+01,
                     9.18707402907259625840e+00, 1.47529146771666414581e+00, 1.15687173795188044134e-01,
                     4.40291641615211203805e-03, 7.54720348287414296618e-05, 4.51850092970580378464e-07)
_AI_G_NUMERATOR = (1.97339932091685679179e-02, 3.91103029615688277255e-01, 1.06579897599595591108e+00,
                   9.39169229816650230044e-01, 3.51465656105547619242e-01, 6.33888919628925490927e-02,
                   5.85804113048388458567e-03, 2.82851600836737019778e-04, 6.98793669997260967291e-06,
                   8.11789239554389293311e-08, 3.41551784765923618484e-10)
_AI_G_DENOMINATOR = (9.30892908077441974853e+00, 1.98352928718312140417e+01, 1.55646628932864612953e+01,
                     5.47686069422975497931e+00, 9.54293611618961883998e-01, 8.64580826352392193095e-02,
                     4.12656523824222607191e-03, 1.01259085116509135510e-04, 1.17166733214413521882e-06,
                     4.91834570062930015649e-09)
_ONE_OVER_SQRT_PI = 5.64189583547756286948e-01
#: Ai(0) and -Ai'(0), the weights of the two Maclaurin series
_AI_AT_0, _MINUS_AI_PRIME_AT_0 = 0.355028053887817239260, 0.258819403792806798405


def _horner(coefficients, z):
    """Σ cₖ·z^(n-k), highest power first, in z's precision."""
    total = np.zeros_like(z)
    for c in coefficients:
        total = total * z + z.dtype.type(c)
    return total


def _hankel(x, order, second_kind):
    """J or Y of order 0 or 1 at x > 5 (any x, computed in x's dtype; callers keep what they need)."""
    t = x.dtype.type
    p_num, p_den, q_num, q_den, phase = ((_P0_NUMERATOR, _P0_DENOMINATOR, _Q0_NUMERATOR, _Q0_DENOMINATOR,
                                          _QUARTER_PI) if order == 0 else
                                         (_P1_NUMERATOR, _P1_DENOMINATOR, _Q1_NUMERATOR, _Q1_DENOMINATOR,
                                          _THREE_QUARTER_PI))
    # order 0 squares 5/x after dividing, order 1 multiplies the two quotients: the same number, rounded as
    # PyTorch rounds it
    z = t(25.0) / (x * x) if order == 0 else t(5.0) / x * (t(5.0) / x)
    p = _horner(p_num, z) / _horner(p_den, z)
    q = t(5.0) / x * (_horner(q_num, z) / _horner(q_den, z))
    angle = x - t(phase)
    wave = p * np.sin(angle) + q * np.cos(angle) if second_kind else p * np.cos(angle) - q * np.sin(angle)
    return wave * t(_SQRT_TWO_OVER_PI) / np.sqrt(x)


def _j0_near(x):
    t, z = x.dtype.type, x * x
    first, second = _J0_ZEROS_SQUARED
    value = (z - t(first)) * (z - t(second)) * _horner(_J0_NUMERATOR, z) / _horner(_J0_DENOMINATOR, z)
    return np.where(x < t(1e-5), t(1.0) - z / t(4.0), value)


def _j1_near(x):
    t, z = x.dtype.type, x * x
    first, second = _J1_ZEROS_SQUARED
    return _horner(_J1_NUMERATOR, z) / _horner(_J1_DENOMINATOR, z) * x * (z - t(first)) * (z - t(second))


def _j0(x):
    with np.errstate(all="ignore"):
        x = np.abs(x)
        return np.where(x <= 5, _j0_near(x), _hankel(x, 0, second_kind=False))


def _j1(x):
    with np.errstate(all="ignore"):
        size = np.abs(x)
        value = np.where(size <= 5, _j1_near(size), _hankel(size, 1, second_kind=False))
        return np.where(x < 0, -value, value)       # J₁ is odd


def _y_near_edges(x, value):
    """Y at 0 is -inf; below 0 (and at nan) it has no real value."""
    t = x.dtype.type
    return np.where(x == 0, t(-np.inf), np.where(x < 0, t(np.nan), value))


def _y0(x):
    t = x.dtype.type
    with np.errstate(all="ignore"):
        z = x * x
        near = (_horner(_Y0_NUMERATOR, z) / _horner(_Y0_DENOMINATOR, z)
                + t(_TWO_OVER_PI) * np.log(x) * _j0_near(x))
        return _y_near_edges(x, np.where(x <= 5, near, _hankel(x, 0, second_kind=True)))


def _y1(x):
    t = x.dtype.type
    with np.errstate(all="ignore"):
        z = x * x
        near = (x * (_horner(_Y1_NUMERATOR, z) / _horner(_Y1_DENOMINATOR, z))
                + t(_TWO_OVER_PI) * (_j1_near(x) * np.log(x) - t(1.0) / x))
        return _y_near_edges(x, np.where(x <= 5, near, _hankel(x, 1, second_kind=True)))


def _airy_oscillating(x):
    """Ai(x) for x < -2.09: |x|^(-1/4)·(sin(ζ + π/4)·(1 + f(1/ζ)) - cos(ζ + π/4)·g(1/ζ))/√π, ζ = (2/3)|x|^(3/2)."""
    t = x.dtype.type
    zeta = t(-2.0) * x * np.sqrt(-x) / t(3.0)
    z = t(1.0) / zeta
    zz = z * z
    f = zz * _horner(_AI_F_NUMERATOR, zz) / _horner(_AI_F_DENOMINATOR, zz)
    g = z * _horner(_AI_G_NUMERATOR, zz) / _horner(_AI_G_DENOMINATOR, zz)
    angle = zeta + t(0.25) * t(np.pi)
    return t(_ONE_OVER_SQRT_PI) / np.sqrt(np.sqrt(-x)) * (np.sin(angle) * (t(1.0) + f) - np.cos(angle) * g)


def _airy_decaying(x):
    """Ai(x) for x ≥ 2.09: e^(-ζ)/(2·√π·x^(1/4)) times a rational function of 1/ζ."""
    t = x.dtype.type
    zeta = t(2.0) * x * np.sqrt(x) / t(3.0)
    ratio = _horner(_AI_DECAYING_NUMERATOR, t(1.0) / zeta) / _horner(_AI_DECAYING_DENOMINATOR, t(1.0) / zeta)
    return t(_ONE_OVER_SQRT_PI) * ratio / (t(2.0) * np.sqrt(np.sqrt(x)) * np.exp(zeta))


def _airy_series(x):
    """Ai(x) = Ai(0)·f(x) + Ai'(0)·g(x), f and g the Maclaurin series in x³, each summed until its next term is
    below the dtype's epsilon relative to f (elementwise, as PyTorch's loop stops)."""
    t = x.dtype.type
    eps = np.finfo(x.dtype).eps
    f, g = np.ones_like(x), x.copy()
    m, n, k = np.ones_like(x), x.copy(), np.ones_like(x)
    cube = x * x * x
    running = np.ones(x.shape, bool)
    while running.any():
        m = np.where(running, m * cube, m)
        k = np.where(running, k + t(1.0), k)
        m = np.where(running, m / k, m)
        n = np.where(running, n * cube, n)
        k = np.where(running, k + t(1.0), k)
        n = np.where(running, n / k, n)
        m = np.where(running, m / k, m)
        f = np.where(running, f + m, f)
        k = np.where(running, k + t(1.0), k)
        n = np.where(running, n / k, n)
        g = np.where(running, g + n, g)
        running &= np.abs(m / f) > eps
    return t(_AI_AT_0) * f - t(_MINUS_AI_PRIME_AT_0) * g


def _airy_ai(x):
    t = x.dtype.type
    with np.errstate(all="ignore"):
        middle = np.where((x >= -2.09) & (x < 2.09), x, t(0.0))      # the series only where it is used
        value = np.where(x < t(-2.09), _airy_oscillating(x),
                         np.where(x >= t(2.09), _airy_decaying(x), _airy_series(middle)))
        value = np.where(x > t(103.892), t(0.0), value)
        return np.where(np.isinf(x) | np.isnan(x), t(np.nan), value)


bessel_j0 = _not_differentiable("special_bessel_j0", _j0)
bessel_j1 = _not_differentiable("special_bessel_j1", _j1)
bessel_y0 = _not_differentiable("special_bessel_y0", _y0)
bessel_y1 = _not_differentiable("special_bessel_y1", _y1)
airy_ai = _not_differentiable("special_airy_ai", _airy_ai)
