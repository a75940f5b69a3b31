//! The rules of reductions over dimensions: the reduced dimensions dropped, or kept as 1
//! (`keepdim`), as `Tensor.mean(dim, keepdim)` does.

use super::*;

/// `mean(x, dim, keepdim)`: a floating-point tensor averaged over the axes `dim` (each once,
/// negative counting from the end).
pub(super) fn mean(args: &Args) -> OpOutcome {
    let x = args.tensor("x")?;
    if !x.dtype.is_float() {
        return Err(error(format!(
            "mean of a {} tensor: PyTorch averages floating-point tensors only",
            x.dtype.name()
        ))
        .blame("x", format!("{x}"))
        .help("convert it first, or take the mean of a float tensor"));
    }
    let keepdim = args.bool("keepdim")?;
    let rank = x.rank() as i128;
    let mut reduced = vec![false; x.rank()];
    for d in args.ints("dim")? {
        let v = d.known().ok_or_else(|| error("mean's dimensions must be known integers").blame("dim", "here"))?;
        let a = if v < 0 { v + rank } else { v };
        if a < 0 || a >= rank {
            return Err(error(format!("dimension {v} is out of range for a {}-D tensor", x.rank()))
                .blame("dim", format!("valid: {} to {}", -rank, rank - 1)));
        }
        if std::mem::replace(&mut reduced[a as usize], true) {
            return Err(error(format!("dimension {v} appears twice in mean's dimensions")).blame("dim", "here"));
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
    Ok(OpResult::one(TensorType::new(x.dtype, shape)))
}
