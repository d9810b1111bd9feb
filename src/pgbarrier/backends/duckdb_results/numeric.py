"""PostgreSQL's ``numeric`` arithmetic on Python Decimals: the digits and the scale.

PostgreSQL's numeric carries a display scale per value, and its operators choose the
result's scale by rules of their own (``numeric.c``). DuckDB's DECIMAL has one fixed scale
per type and no exact division (it answers a DOUBLE), so results whose scale PostgreSQL
computes are computed here, exactly, from exact inputs. Rules this module keeps:

* Rounding is half away from zero, as PostgreSQL's ``round_var``; every result is exact
  (integer arithmetic on the scaled values, no floating point, no context precision).
* ``div``: the quotient at ``select_div_scale``'s scale (at least 16 significant digits:
  ``16 - 4 * qweight``, never below either input's scale; 0..1000).
* ``add``/``sub`` keep the larger input scale, ``mul`` the sum of the scales
  (``numeric_mul``), ``round``/``trunc`` the asked scale (at least 0), ``ceil``/``floor`` 0.
* ``avg`` is ``div(sum, count)`` (``numeric_avg``, ``int8_avg``); NULL for no rows.
* ``variance``/``stddev`` follow ``numeric_stddev_internal``: the numerator
  ``N * sum(x*x) - sum(x)^2`` exactly; ``0`` (scale 0) when it is not positive; else the
  quotient by ``N*(N-1)`` (sample) or ``N*N`` (population) at ``select_div_scale``, and
  for ``stddev`` its square root at that same scale. NULL for no rows, and for one row in
  the sample forms.
* ``from_float``: a ``float8`` (15 significant digits, ``DBL_DIG``) or ``float4`` (6) as
  ``numeric``, as PostgreSQL's casts print it first; NaN stays NaN.
* ``typmod``: a ``numeric(p,s)`` cast rounds to ``s`` and fails with 22003 ``numeric field
  overflow`` when the value does not fit, with PostgreSQL's DETAIL.
"""

from __future__ import annotations

from decimal import Decimal
from math import isqrt

from pgbarrier.errors import PgError

__all__ = ["add", "avg", "ceil", "div", "floor", "from_float", "mul", "round_to", "scale_of",
           "stddev", "sub", "trunc_to", "typmod", "variance"]

_MIN_SIG_DIGITS = 16
_MAX_DISPLAY_SCALE = 1000


def scale_of(d: Decimal) -> int:
    """PostgreSQL's display scale of ``d`` (digits after the point)."""
    exponent = d.as_tuple().exponent
    return -exponent if isinstance(exponent, int) and exponent < 0 else 0


def _as_int(d: Decimal, scale: int) -> int:
    """``d * 10**scale`` as an integer (exact when ``scale >= scale_of(d)``)."""
    sign, digits, exponent = d.as_tuple()
    n = int("".join(map(str, digits)) or "0")
    shift = exponent + scale  # type: ignore[operator]
    n = n * 10 ** shift if shift >= 0 else n // 10 ** (-shift)
    return -n if sign else n


def _make(n: int, scale: int) -> Decimal:
    """The Decimal ``n / 10**scale`` with exactly ``scale`` digits after the point."""
    return Decimal(n).scaleb(-scale) if scale else Decimal(n)


def _rounded_quotient(num: int, den: int) -> int:
    """``num / den`` rounded half away from zero."""
    negative = (num < 0) != (den < 0)
    q, r = divmod(abs(num), abs(den))
    if 2 * r >= abs(den):
        q += 1
    return -q if negative else q


def _weight_and_first(d: Decimal) -> tuple[int, int]:
    """PostgreSQL's base-10000 weight of ``d``'s first non-zero digit and that digit."""
    if d == 0:
        return 0, 0
    weight = d.copy_abs().adjusted() // 4
    first = int(d.copy_abs().scaleb(-4 * weight)) % 10000
    return weight, first


def div_scale(a: Decimal, b: Decimal) -> int:
    """PostgreSQL's ``select_div_scale`` for ``a / b``."""
    w1, f1 = _weight_and_first(a)
    w2, f2 = _weight_and_first(b)
    qweight = w1 - w2
    if f1 <= f2:
        qweight -= 1
    rscale = _MIN_SIG_DIGITS - qweight * 4
    rscale = max(rscale, scale_of(a), scale_of(b), 0)
    return min(rscale, _MAX_DISPLAY_SCALE)


def _special(*values: Decimal) -> Decimal | None:
    for v in values:
        if v.is_nan():
            return Decimal("NaN")
    return None


def div(a: Decimal, b: Decimal) -> Decimal:
    """``a / b`` as PostgreSQL's numeric division (22012 for a zero divisor)."""
    nan = _special(a, b)
    if nan is not None:
        return nan
    if b == 0:
        raise PgError("division by zero", sqlstate="22012")
    if a.is_infinite() or b.is_infinite():
        return Decimal("NaN") if a.is_infinite() and b.is_infinite() else \
            (a / b if a.is_infinite() else Decimal(0))
    rscale = div_scale(a, b)
    s = max(scale_of(a), scale_of(b))
    return _make(_rounded_quotient(_as_int(a, s) * 10 ** rscale, _as_int(b, s)), rscale)


def add(a: Decimal, b: Decimal) -> Decimal:
    s = max(scale_of(a), scale_of(b))
    return _make(_as_int(a, s) + _as_int(b, s), s)


def sub(a: Decimal, b: Decimal) -> Decimal:
    s = max(scale_of(a), scale_of(b))
    return _make(_as_int(a, s) - _as_int(b, s), s)


def mul(a: Decimal, b: Decimal) -> Decimal:
    sa, sb = scale_of(a), scale_of(b)
    return _make(_as_int(a, sa) * _as_int(b, sb), sa + sb)


def round_to(a: Decimal, places: int = 0) -> Decimal:
    """``round(a, places)``: half away from zero; the scale is ``max(places, 0)``."""
    if not a.is_finite():
        return a
    places = max(min(places, _MAX_DISPLAY_SCALE), -_MAX_DISPLAY_SCALE)
    s = scale_of(a)
    n = _as_int(a, s)
    if places >= s:
        return _make(n * 10 ** (places - s), places)
    unit = 10 ** (s - places)
    q = _rounded_quotient(n, unit)
    return _make(q * 10 ** max(-places, 0), max(places, 0)) if places < 0 else _make(q, places)


def trunc_to(a: Decimal, places: int = 0) -> Decimal:
    if not a.is_finite():
        return a
    s = scale_of(a)
    n = _as_int(a, s)
    if places >= s:
        return _make(n * 10 ** (places - s), places)
    unit = 10 ** (s - places)
    q = abs(n) // unit * (-1 if n < 0 else 1)
    return _make(q * 10 ** max(-places, 0), 0) if places < 0 else _make(q, places)


def ceil(a: Decimal) -> Decimal:
    if not a.is_finite():
        return a
    s = scale_of(a)
    return _make(-((-_as_int(a, s)) // 10 ** s), 0)


def floor(a: Decimal) -> Decimal:
    if not a.is_finite():
        return a
    s = scale_of(a)
    return _make(_as_int(a, s) // 10 ** s, 0)


def avg(total: Decimal | int | None, count: int | None) -> Decimal | None:
    if total is None or not count:
        return None
    return div(Decimal(total), Decimal(count))


def variance(n: int | None, sum_x: Decimal | int | None, sum_x2: Decimal | int | None,
             sample: bool) -> Decimal | None:
    """``var_samp`` / ``var_pop`` from the count, sum and sum of squares."""
    quotient = _variance(n, sum_x, sum_x2, sample)
    return quotient[0] if quotient is not None else None


def stddev(n: int | None, sum_x: Decimal | int | None, sum_x2: Decimal | int | None,
           sample: bool) -> Decimal | None:
    """``stddev_samp`` / ``stddev_pop``: the square root of the rounded variance."""
    quotient = _variance(n, sum_x, sum_x2, sample)
    if quotient is None:
        return None
    var, rscale = quotient
    if var == 0 and rscale < 0:
        return var
    scaled = _as_int(var, rscale) * 10 ** rscale  # var * 10**(2 * rscale)
    root = isqrt(scaled)
    if scaled > root * root + root:  # at or past the half: round up
        root += 1
    return _make(root, rscale)


def _variance(n: int | None, sum_x: Decimal | int | None, sum_x2: Decimal | int | None,
              sample: bool) -> tuple[Decimal, int] | None:
    if not n or sum_x is None or sum_x2 is None or (sample and n <= 1):
        return None
    sx, sx2 = Decimal(sum_x), Decimal(sum_x2)
    numerator = sub(mul(Decimal(n), sx2), mul(sx, sx))
    if numerator <= 0:
        return Decimal(0), -1  # PostgreSQL's const_zero (scale 0)
    denominator = Decimal(n * (n - 1) if sample else n * n)
    rscale = div_scale(numerator, denominator)
    s = scale_of(numerator)
    return _make(_rounded_quotient(_as_int(numerator, s) * 10 ** rscale,
                                   int(denominator) * 10 ** s), rscale), rscale


def from_float(v: float, float4: bool = False) -> Decimal:
    """A float as PostgreSQL's cast to numeric reads it (its 15, or 6, significant digits)."""
    if v != v:
        return Decimal("NaN")
    if v in (float("inf"), float("-inf")):
        return Decimal(v)
    d = Decimal(format(v, ".6g" if float4 else ".15g"))
    if d.as_tuple().exponent > 0:  # type: ignore[operator]
        d = d.quantize(Decimal(1))
    return d


def typmod(a: Decimal, mod: int) -> Decimal:
    """``a`` cast to ``numeric(p,s)`` (``mod`` is PostgreSQL's typmod; -1: unchanged)."""
    if mod < 4 or not a.is_finite():
        return a
    precision, scale = ((mod - 4) >> 16) & 0xFFFF, (mod - 4) & 0xFFFF
    rounded = round_to(a, scale)
    digits = len(str(abs(_as_int(rounded, scale)) // 10 ** scale)) if rounded != 0 else 0
    if abs(rounded) >= 1 and digits > precision - scale:
        raise PgError("numeric field overflow", sqlstate="22003",
                      detail=f"A field with precision {precision}, scale {scale} must round "
                             f"to an absolute value less than "
                             f"{'1' if precision == scale else '10^' + str(precision - scale)}.")
    return rounded
