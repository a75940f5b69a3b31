//! The rules of reductions over dimensions (the reduced dimensions dropped, or kept as 1
//! with `keepdim`, as `Tensor.mean(dim, keepdim)` does) and of scans along one (`cumsum`).

use super::*;

/// Which reduction: they differ in the dtypes they take and give.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Reduction {
    /// `mean`: floating-point tensors only.
    Mean,
    /// `sum`: integers and bools are summed into int64.
    Sum,
    /// `amax`: any dtype, kept.
    Amax,
    /// `logsumexp`: floating-point in, the same dtype out; integers and bools in float32.
    Logsumexp,
    /// `norm`: floating-point tensors only, `p` 1 or 2.
    Norm,
}

/// `mean`/`sum`/`amax(x, dim, keepdim)`: `x` reduced over the axes `dim` (each once,
/// negative counting from the end).
pub(super) fn reduce(args: &Args, reduction: Reduction) -> OpOutcome {
    let x = args.tensor("x")?;
    let name = match reduction {
        Reduction::Mean => "mean",
        Reduction::Sum => "sum",
        Reduction::Amax => "amax",
        Reduction::Logsumexp => "logsumexp",
        Reduction::Norm => "norm",
    };
    if matches!(reduction, Reduction::Mean | Reduction::Norm) && !x.dtype.is_float() {
        let what = if reduction == Reduction::Mean { "averages" } else { "takes norms of" };
        return Err(error(format!(
            "{name} of a {} tensor: PyTorch {what} floating-point tensors only",
            x.dtype.name()
        ))
        .blame("x", format!("{x}"))
        .help(format!("convert it first, or take the {name} of a float tensor")));
    }
    if reduction == Reduction::Norm {
        let p = args.float("p")?;
        if p != 1.0 && p != 2.0 {
            return Err(error(format!("norm is modelled for p 1 and 2, found {p}"))
                .blame("p", "here")
                .help("its backward differs for other orders"));
        }
    }
    let keepdim = args.bool("keepdim")?;
    let rank = x.rank() as i128;
    let mut reduced = vec![false; x.rank()];
    for d in args.ints("dim")? {
        let v = d
            .known()
            .ok_or_else(|| error(format!("{name}'s dimensions must be known integers")).blame("dim", "here"))?;
        let a = if v < 0 { v + rank } else { v };
        if a < 0 || a >= rank {
            return Err(error(format!("dimension {v} is out of range for a {}-D tensor", x.rank()))
                .blame("dim", format!("valid: {} to {}", -rank, rank - 1)));
        }
        if std::mem::replace(&mut reduced[a as usize], true) {
            return Err(error(format!("dimension {v} appears twice in {name}'s dimensions")).blame("dim", "here"));
        }
    }
    let shape = x
        .shape
        .iter()
        .zip(&reduced)
        .filter_map(|(d, &r)| match (r, keepdim) {
            (false, _) => Some(d.clone()),
            (true, true) => Some(Dim::Known(1)),
            (true, false) => None,
        })
        .collect();
    let given = match reduction {
        Reduction::Sum => args.str("dtype").ok().filter(|name| !name.is_empty()),
        _ => None,
    };
    let dtype = match reduction {
        _ if given.is_some() => args.dtype("dtype")?,
        Reduction::Sum if !x.dtype.is_float() => DType::I64,
        // `logsumexp` of integers: `at::logsumexp` converts them to the default float dtype.
        Reduction::Logsumexp if !x.dtype.is_float() => DType::F32,
        _ => x.dtype,
    };
    Ok(OpResult::one(TensorType::new(dtype, shape)))
}

/// `cumsum(x, dim)`: running sums along `dim`, the shape kept (integers and bools into int64).
pub(super) fn cumsum(args: &Args) -> OpOutcome {
    let x = args.tensor("x")?;
    axis(args, "dim", x.rank())?;
    // PyTorch accumulates an integer tensor in int64 unless told a dtype.
    let dtype = match args.str("dtype") {
        Ok(name) if !name.is_empty() => args.dtype("dtype")?,
        _ if x.dtype.is_float() => x.dtype,
        _ => DType::I64,
    };
    Ok(OpResult::one(TensorType::new(dtype, x.shape.clone())))
}

/// `histc(x, bins, min, max)`: `[bins]` counts of `x`'s elements, in `x`'s dtype.
pub(super) fn histc(args: &Args) -> OpOutcome {
    let x = args.tensor("x")?;
    let bins = args.int("bins")?;
    at_least(args, "bins", &bins, 1)?;
    let (min, max) = (args.float("min")?, args.float("max")?);
    if min > max {
        return Err(error(format!("histc's range is empty: min {min} is above max {max}")).blame("max", "here"));
    }
    Ok(OpResult::one(TensorType::new(x.dtype, vec![bins])))
}
