//! Dimensions: exact integers, or symbolic expressions over unbound dimensions (`N`, `H`).
//!
//! A scenario binds every dimension, so its shapes are concrete; a model or block elaborated
//! without one keeps `N` (and any other unbound name) symbolic, and the shape rules compute
//! on [`Dim`]s either way: `[N, 64, (H - 1)/2 + 1, ...]`. Arithmetic is checked: every
//! operation returns `None` on overflow (counts are `i128`, far beyond any real model), and
//! callers turn that into a diagnostic, never a wrap or a panic.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

/// A product of atoms (sorted); the empty product is 1.
type Monomial = Vec<Atom>;

/// An indivisible symbolic quantity.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Atom {
    /// An unbound dimension, such as `N`.
    Var(String),
    /// `floor(a / b)` that could not be simplified.
    FloorDiv(Poly, Poly),
    /// `a mod b` that could not be simplified.
    Rem(Poly, Poly),
}

/// A polynomial with integer coefficients over atoms, kept normalized: no zero
/// coefficients, monomials sorted.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Poly {
    terms: BTreeMap<Monomial, i128>,
}

impl Poly {
    fn constant(c: i128) -> Poly {
        let mut terms = BTreeMap::new();
        if c != 0 {
            terms.insert(Vec::new(), c);
        }
        Poly { terms }
    }

    fn atom(a: Atom) -> Poly {
        Poly { terms: BTreeMap::from([(vec![a], 1)]) }
    }

    /// The value, if the polynomial is a constant.
    fn as_const(&self) -> Option<i128> {
        match self.terms.len() {
            0 => Some(0),
            1 => self.terms.get(&Vec::new()).copied(),
            _ => None,
        }
    }

    fn add(&self, other: &Poly, sign: i128) -> Option<Poly> {
        let mut terms = self.terms.clone();
        for (m, c) in &other.terms {
            let entry = terms.entry(m.clone()).or_insert(0);
            *entry = entry.checked_add(c.checked_mul(sign)?)?;
            if *entry == 0 {
                terms.remove(m);
            }
        }
        Some(Poly { terms })
    }

    fn mul(&self, other: &Poly) -> Option<Poly> {
        let mut out = Poly::default();
        for (ma, ca) in &self.terms {
            for (mb, cb) in &other.terms {
                let mut m = ma.clone();
                m.extend(mb.iter().cloned());
                m.sort();
                let term = Poly { terms: BTreeMap::from([(m, ca.checked_mul(*cb)?)]) };
                out = out.add(&term, 1)?;
            }
        }
        Some(out)
    }

    /// Divides every coefficient by `d` if all are divisible.
    fn exact_div(&self, d: i128) -> Option<Poly> {
        if d == 0 || self.terms.values().any(|c| c % d != 0) {
            return None;
        }
        Some(Poly { terms: self.terms.iter().map(|(m, c)| (m.clone(), c / d)).collect() })
    }

    /// The greatest common divisor of the non-constant coefficients.
    fn symbolic_gcd(&self) -> i128 {
        self.terms.iter().filter(|(m, _)| !m.is_empty()).fold(0, |g, (_, c)| gcd(g, c.abs()))
    }

    fn substitute(&self, bindings: &BTreeMap<String, i128>) -> Option<Dim> {
        let mut total = Dim::Known(0);
        for (m, c) in &self.terms {
            let mut term = Dim::Known(*c);
            for atom in m {
                let value = match atom {
                    Atom::Var(name) => match bindings.get(name) {
                        Some(v) => Dim::Known(*v),
                        None => Dim::var(name),
                    },
                    Atom::FloorDiv(a, b) => a.substitute(bindings)?.floor_div(&b.substitute(bindings)?)?,
                    Atom::Rem(a, b) => a.substitute(bindings)?.rem(&b.substitute(bindings)?)?,
                };
                term = term.mul(&value)?;
            }
            total = total.add(&term)?;
        }
        Some(total)
    }
}

fn gcd(a: i128, b: i128) -> i128 {
    if b == 0 { a } else { gcd(b, a % b) }
}

/// A dimension or any integer the language computes with.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Dim {
    /// A known value.
    Known(i128),
    /// A symbolic value (never a constant: constants are always `Known`).
    Sym(Arc<Poly>),
}

impl From<i128> for Dim {
    fn from(v: i128) -> Self {
        Dim::Known(v)
    }
}

impl Dim {
    /// An unbound dimension.
    pub fn var(name: &str) -> Dim {
        Dim::Sym(Arc::new(Poly::atom(Atom::Var(name.to_string()))))
    }

    /// The value, if known.
    pub fn known(&self) -> Option<i128> {
        match self {
            Dim::Known(v) => Some(*v),
            Dim::Sym(_) => None,
        }
    }

    fn poly(&self) -> Poly {
        match self {
            Dim::Known(v) => Poly::constant(*v),
            Dim::Sym(p) => (**p).clone(),
        }
    }

    fn from_poly(p: Poly) -> Dim {
        match p.as_const() {
            Some(c) => Dim::Known(c),
            None => Dim::Sym(Arc::new(p)),
        }
    }

    /// `self + other`, `None` on overflow.
    pub fn add(&self, other: &Dim) -> Option<Dim> {
        match (self, other) {
            (Dim::Known(a), Dim::Known(b)) => a.checked_add(*b).map(Dim::Known),
            _ => Some(Dim::from_poly(self.poly().add(&other.poly(), 1)?)),
        }
    }

    /// `self - other`, `None` on overflow.
    pub fn sub(&self, other: &Dim) -> Option<Dim> {
        match (self, other) {
            (Dim::Known(a), Dim::Known(b)) => a.checked_sub(*b).map(Dim::Known),
            _ => Some(Dim::from_poly(self.poly().add(&other.poly(), -1)?)),
        }
    }

    /// `self * other`, `None` on overflow.
    pub fn mul(&self, other: &Dim) -> Option<Dim> {
        match (self, other) {
            (Dim::Known(a), Dim::Known(b)) => mul_i128(*a, *b).map(Dim::Known),
            _ => Some(Dim::from_poly(self.poly().mul(&other.poly())?)),
        }
    }

    /// `self ** exponent` (Python's `**` on integers), by squaring; `None` on overflow.
    pub fn pow(&self, mut exponent: u128) -> Option<Dim> {
        let (mut base, mut result) = (self.clone(), Dim::Known(1));
        while exponent > 0 {
            if exponent & 1 == 1 {
                result = result.mul(&base)?;
            }
            exponent >>= 1;
            if exponent > 0 {
                base = base.mul(&base)?;
            }
        }
        Some(result)
    }

    /// `floor(self / other)`; `None` on division by zero or overflow.
    pub fn floor_div(&self, other: &Dim) -> Option<Dim> {
        match (self, other) {
            (_, Dim::Known(0)) => None,
            (Dim::Known(a), Dim::Known(b)) => floor_div_i128(*a, *b).map(Dim::Known),
            (_, Dim::Known(1)) => Some(self.clone()),
            (Dim::Sym(p), Dim::Known(b)) => {
                if let Some(q) = p.exact_div(*b) {
                    return Some(Dim::from_poly(q));
                }
                // floor(floor(a / c) / b) = floor(a / (c b)) for positive divisors.
                if *b > 0
                    && let Some((m, 1)) = p.terms.iter().next().filter(|_| p.terms.len() == 1)
                    && let [Atom::FloorDiv(a, c)] = m.as_slice()
                    && let Some(c) = c.as_const().filter(|c| *c > 0)
                {
                    let divisor = Poly::constant(c.checked_mul(*b)?);
                    return Some(Dim::from_poly(Poly::atom(Atom::FloorDiv(a.clone(), divisor))));
                }
                // floor((b*q + r) / b) = q + floor(r / b) when b divides every symbolic term.
                let g = p.symbolic_gcd();
                if *b > 0 && g % b == 0 {
                    let constant = p.terms.get(&Vec::new()).copied().unwrap_or(0);
                    let symbolic = p.add(&Poly::constant(constant), -1)?.exact_div(*b)?;
                    let rest = floor_div_i128(constant, *b)?;
                    return Some(Dim::from_poly(symbolic.add(&Poly::constant(rest), 1)?));
                }
                Some(Dim::from_poly(Poly::atom(Atom::FloorDiv((**p).clone(), Poly::constant(*b)))))
            }
            _ => Some(Dim::from_poly(Poly::atom(Atom::FloorDiv(self.poly(), other.poly())))),
        }
    }

    /// `ceil(self / other)`.
    pub fn ceil_div(&self, other: &Dim) -> Option<Dim> {
        self.add(other)?.sub(&Dim::Known(1))?.floor_div(other)
    }

    /// `self mod other` (result with the sign of `other`, as Python's `%`).
    pub fn rem(&self, other: &Dim) -> Option<Dim> {
        match (self, other) {
            (_, Dim::Known(0)) => None,
            (Dim::Known(a), Dim::Known(b)) => {
                let q = floor_div_i128(*a, *b)?;
                Some(Dim::Known(a.checked_sub(q.checked_mul(*b)?)?))
            }
            _ => {
                let q = self.floor_div(other)?;
                match q {
                    Dim::Sym(ref p)
                        if matches!(p.terms.keys().next().and_then(|m| m.first()), Some(Atom::FloorDiv(..))) =>
                    {
                        Some(Dim::from_poly(Poly::atom(Atom::Rem(self.poly(), other.poly()))))
                    }
                    _ => self.sub(&q.mul(other)?),
                }
            }
        }
    }

    /// Replaces bound names by their values.
    pub fn bind(&self, bindings: &BTreeMap<String, i128>) -> Option<Dim> {
        match self {
            Dim::Known(_) => Some(self.clone()),
            Dim::Sym(p) => p.substitute(bindings),
        }
    }

    /// Whether the two are certainly different (known and unequal, or differing by a
    /// non-zero constant). Symbolic values that might be equal are not "certainly different".
    pub fn certainly_differs(&self, other: &Dim) -> bool {
        match self.sub(other) {
            Some(Dim::Known(d)) => d != 0,
            _ => false,
        }
    }

    /// Whether the value is certainly not positive (known and < 1).
    pub fn certainly_nonpositive(&self) -> bool {
        matches!(self, Dim::Known(v) if *v < 1)
    }
}

/// `a * b` for integers, `None` on overflow.
pub fn mul_i128(a: i128, b: i128) -> Option<i128> {
    match (i64::try_from(a), i64::try_from(b)) {
        // The usual case, without the library call of a checked i128 product: two i64
        // factors cannot overflow an i128.
        (Ok(a), Ok(b)) => Some(i128::from(a) * i128::from(b)),
        _ => a.checked_mul(b),
    }
}

/// `floor(a / b)` for integers, `None` on division by zero or overflow.
pub fn floor_div_i128(a: i128, b: i128) -> Option<i128> {
    if b == 0 {
        return None;
    }
    let q = a.checked_div(b)?;
    if (a % b != 0) && ((a < 0) != (b < 0)) { q.checked_sub(1) } else { Some(q) }
}

/// Whether a polynomial is a single factor (a variable or a constant), which needs no
/// parentheses as a divisor.
fn is_single_factor(p: &Poly) -> bool {
    match p.terms.iter().collect::<Vec<_>>().as_slice() {
        [] => true,
        [(m, c)] => (m.is_empty() && **c >= 0) || (m.len() == 1 && **c == 1 && matches!(m[0], Atom::Var(_))),
        _ => false,
    }
}

fn fmt_operand(p: &Poly, f: &mut fmt::Formatter<'_>, wrap: bool) -> fmt::Result {
    if wrap {
        f.write_str("(")?;
        fmt_poly(p, f)?;
        f.write_str(")")
    } else {
        fmt_poly(p, f)
    }
}

fn fmt_poly(p: &Poly, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    // Symbolic terms first, the constant last: `N*64 + 1`.
    let mut terms: Vec<(&Monomial, &i128)> = p.terms.iter().collect();
    terms.sort_by_key(|(m, _)| m.is_empty());
    if terms.is_empty() {
        return f.write_str("0");
    }
    for (i, (m, c)) in terms.iter().enumerate() {
        let (sign, abs) = if **c < 0 { ("-", -**c) } else { ("+", **c) };
        if i == 0 {
            if sign == "-" {
                f.write_str("-")?;
            }
        } else {
            write!(f, " {sign} ")?;
        }
        if m.is_empty() {
            write!(f, "{abs}")?;
            continue;
        }
        // A quotient among other factors is parenthesized: `N*((H - 1)/2)`.
        let in_product = m.len() > 1 || abs != 1;
        for (k, atom) in m.iter().enumerate() {
            if k > 0 {
                f.write_str("*")?;
            }
            let (a, op, b) = match atom {
                Atom::Var(v) => {
                    f.write_str(v)?;
                    continue;
                }
                Atom::FloorDiv(a, b) => (a, "/", b),
                Atom::Rem(a, b) => (a, "%", b),
            };
            if in_product {
                f.write_str("(")?;
            }
            fmt_operand(a, f, a.terms.len() > 1)?;
            f.write_str(op)?;
            fmt_operand(b, f, !is_single_factor(b))?;
            if in_product {
                f.write_str(")")?;
            }
        }
        if abs != 1 {
            write!(f, "*{abs}")?;
        }
    }
    Ok(())
}

impl fmt::Display for Dim {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Dim::Known(v) => write!(f, "{v}"),
            Dim::Sym(p) => fmt_poly(p, f),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn k(v: i128) -> Dim {
        Dim::Known(v)
    }

    #[test]
    fn known_arithmetic_is_python_like() {
        assert_eq!(k(7).floor_div(&k(2)), Some(k(3)));
        assert_eq!(k(-7).floor_div(&k(2)), Some(k(-4)));
        assert_eq!(k(7).floor_div(&k(-2)), Some(k(-4)));
        assert_eq!(k(-7).rem(&k(2)), Some(k(1)));
        assert_eq!(k(7).ceil_div(&k(2)), Some(k(4)));
        assert_eq!(k(1).floor_div(&k(0)), None);
        assert_eq!(k(i128::MAX).add(&k(1)), None);
    }

    #[test]
    fn symbolic_arithmetic_simplifies() {
        let h = Dim::var("H");
        // Conv 3x3, stride 1, pad 1: (H + 2 - 2 - 1)/1 + 1 = H.
        let out = h.add(&k(2)).unwrap().sub(&k(3)).unwrap().floor_div(&k(1)).unwrap().add(&k(1)).unwrap();
        assert_eq!(out, h);
        // Stride 2: floor((H - 1)/2) + 1 stays symbolic.
        let out = h.sub(&k(1)).unwrap().floor_div(&k(2)).unwrap().add(&k(1)).unwrap();
        assert_eq!(out.to_string(), "(H - 1)/2 + 1");
        // (2H + 4) / 2 = H + 2.
        assert_eq!(h.mul(&k(2)).unwrap().add(&k(4)).unwrap().floor_div(&k(2)).unwrap().to_string(), "H + 2");
        // (2H + 3) / 2 = H + 1.
        assert_eq!(h.mul(&k(2)).unwrap().add(&k(3)).unwrap().floor_div(&k(2)).unwrap().to_string(), "H + 1");
        assert_eq!(Dim::var("N").mul(&k(64)).unwrap().to_string(), "N*64");
        // Two stride-2 layers: floor(floor((H - 1)/2)/2) = (H - 1)/4.
        let once = h.sub(&k(1)).unwrap().floor_div(&k(2)).unwrap();
        assert_eq!(once.floor_div(&k(2)).unwrap().to_string(), "(H - 1)/4");
    }

    #[test]
    fn binding_makes_symbolic_values_concrete() {
        let h = Dim::var("H");
        let out = h.sub(&k(1)).unwrap().floor_div(&k(2)).unwrap().add(&k(1)).unwrap();
        let bound = out.bind(&BTreeMap::from([("H".to_string(), 224)])).unwrap();
        assert_eq!(bound, k(112));
        assert!(h.add(&k(1)).unwrap().certainly_differs(&h));
        assert!(!h.certainly_differs(&Dim::var("W")));
    }
}
