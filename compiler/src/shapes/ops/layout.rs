//! The rules of the ops that rearrange elements: flatten, reshape (one inferred dimension),
//! permute, transpose, concat, split and slice, and the complex views of float pairs.

use super::*;

pub(super) fn flatten(args: &Args) -> OpOutcome {
    let x = args.tensor("x")?;
    if x.rank() == 0 {
        return Ok(OpResult::one(TensorType::new(x.dtype, vec![k(1)])));
    }
    let start = axis(args, "start", x.rank())?;
    let end = axis(args, "end", x.rank())?;
    if start > end {
        return Err(error(format!("flatten's start ({start}) is after its end ({end})")).blame("start", "here"));
    }
    let merged = product(&x.shape[start..=end])?;
    let mut shape = x.shape[..start].to_vec();
    shape.push(merged);
    shape.extend_from_slice(&x.shape[end + 1..]);
    Ok(OpResult::one(TensorType::new(x.dtype, shape)))
}

pub(super) fn reshape(args: &Args) -> OpOutcome {
    let x = args.tensor("x")?;
    let target = args.ints("shape")?;
    let inferred: Vec<usize> = target.iter().enumerate().filter(|(_, d)| **d == k(-1)).map(|(i, _)| i).collect();
    if inferred.len() > 1 {
        return Err(error("only one dimension of a reshape can be -1").blame("shape", "two -1s"));
    }
    if let Some(bad) = target.iter().find(|d| d.known().is_some_and(|v| v < -1 || v == 0)) {
        return Err(error(format!("invalid size {bad} in reshape")).blame("shape", "sizes must be positive or -1"));
    }
    let total = x.numel().ok()?;
    let known_product = product(target.iter().filter(|d| **d != k(-1)))?;
    let mut shape = target.clone();
    if let Some(&i) = inferred.first() {
        let inferred_dim = total.floor_div(&known_product).ok()?;
        let remainder = total.rem(&known_product).ok()?;
        if remainder.certainly_differs(&k(0)) {
            return Err(error(format!(
                "cannot reshape {x} ({total} elements) into {}: {total} is not divisible by {known_product}",
                fmt_dims(&target)
            ))
            .blame("x", format!("{x}"))
            .blame("shape", format!("{} elements without the -1", known_product)));
        }
        shape[i] = inferred_dim;
    } else if total.certainly_differs(&known_product) {
        return Err(error(format!(
            "cannot reshape {x} into {}: that changes the element count from {total} to {known_product}",
            fmt_dims(&target)
        ))
        .blame("x", format!("{x}: {total} elements"))
        .blame("shape", format!("{known_product} elements")));
    }
    Ok(OpResult::one(TensorType::new(x.dtype, shape)))
}

pub(super) fn fmt_dims(dims: &[Dim]) -> String {
    let parts: Vec<String> = dims.iter().map(|d| d.to_string()).collect();
    format!("[{}]", parts.join(", "))
}

pub(super) fn permute(args: &Args) -> OpOutcome {
    let x = args.tensor("x")?;
    let dims = args.ints("dims")?;
    if dims.len() != x.rank() {
        return Err(error(format!(
            "permute of a {}-D tensor needs {} dimensions, found {}",
            x.rank(),
            x.rank(),
            dims.len()
        ))
        .blame("dims", "here"));
    }
    let mut seen = vec![false; x.rank()];
    let mut shape = Vec::new();
    for d in &dims {
        let v = d.known().ok_or_else(|| error("permute's dimensions must be known integers").blame("dims", "here"))?;
        let r = x.rank() as i128;
        let a = if v < 0 { v + r } else { v };
        if a < 0 || a >= r || seen[a as usize] {
            return Err(
                error(format!("permute's dimensions must be a permutation of 0..{}", x.rank())).blame("dims", "here")
            );
        }
        seen[a as usize] = true;
        shape.push(x.shape[a as usize].clone());
    }
    Ok(OpResult::one(TensorType::new(x.dtype, shape)))
}

pub(super) fn transpose(args: &Args) -> OpOutcome {
    let x = args.tensor("x")?;
    let (a, b) = (axis(args, "a", x.rank())?, axis(args, "b", x.rank())?);
    let mut shape = x.shape.clone();
    shape.swap(a, b);
    Ok(OpResult::one(TensorType::new(x.dtype, shape)))
}

pub(super) fn concat(args: &Args) -> OpOutcome {
    let xs = args.tensors("xs")?;
    let first = xs.first().ok_or_else(|| error("concat needs at least one tensor").blame("xs", "empty"))?;
    let d = axis(args, "dim", first.rank())?;
    let mut total = k(0);
    for x in xs {
        if x.rank() != first.rank() {
            return Err(error(format!("concat of tensors of different ranks: {first} and {x}")).blame("xs", "here"));
        }
        for (i, (a, b)) in first.shape.iter().zip(&x.shape).enumerate() {
            if i != d && a.certainly_differs(b) {
                let err = error(format!(
                    "concat along dimension {d} needs equal sizes elsewhere, but dimension {i} is {a} in {first} and {b} in {x}"
                ))
                .blame("xs", "here");
                // torch.cat does not broadcast: a size-1 dimension must be expanded first.
                let one = k(1);
                return Err(if *a == one || *b == one {
                    err.help(format!(
                        "concat does not broadcast: `expand` the tensor with size 1 in dimension {i} first"
                    ))
                } else {
                    err
                });
            }
        }
        total = total.add(&x.shape[d]).ok()?;
    }
    let mut shape = first.shape.clone();
    shape[d] = total;
    Ok(OpResult::one(TensorType::new(first.dtype, shape)))
}

/// The argument elaboration gives a `kv_cache` call when the run has a cache: the tokens
/// cached before it. A name no `.net` file can write, so no call passes it.
pub const CACHED_TOKENS: &str = "cached tokens";

/// The tokens a `kv_cache` call's cache held before it, when the run has a cache (the hidden
/// [`CACHED_TOKENS`] argument); `None` without one, where the call is its input.
pub fn cached_tokens(args: &Args) -> Option<i128> {
    match args.values.get(CACHED_TOKENS) {
        Some(ArgValue::Int(d)) => d.known(),
        _ => None,
    }
}

/// A `kv_cache` call's sliding window (`window`; 0 for a full-attention layer's cache).
pub fn cache_window(args: &Args) -> i128 {
    args.known_int("window").unwrap_or(0)
}

/// The tokens along a `kv_cache` call's `dim` in `out`, its result: the cache after it.
pub fn cache_length(args: &Args, out: &TensorType) -> Option<i128> {
    let d = axis(args, "dim", out.rank()).ok()?;
    out.shape.get(d)?.known()
}

/// `kv_cache(x, dim, window)`: `x` with the tokens already cached (the hidden
/// [`CACHED_TOKENS`] argument; a sliding window's layer keeps `window - 1` of them at most)
/// added along `dim`, or `x` itself without a cache.
pub(super) fn kv_cache(args: &Args) -> OpOutcome {
    let x = args.tensor("x")?;
    let d = axis(args, "dim", x.rank())?;
    let window = cache_window(args);
    if window < 0 {
        return Err(error(format!("a sliding window of {window} tokens")).blame("window", "must not be negative"));
    }
    let mut out = x.clone();
    if let Some(ArgValue::Int(cached)) = args.values.get(CACHED_TOKENS) {
        let kept = match (window, cached.known()) {
            (w, Some(c)) if w > 0 => Dim::Known(c.min(w - 1)),
            _ => cached.clone(),
        };
        out.shape[d] = out.shape[d].add(&kept).ok()?;
    }
    Ok(OpResult::one(out))
}

/// torch.chunk: `sections` pieces of ceil(L / sections), the last one smaller.
/// `split_sizes(x, sizes, dim)` (torch.split with a list, `split_with_sizes`): one view per
/// size, the sizes summing to the length of `dim`.
pub(super) fn split_sizes(args: &Args) -> OpOutcome {
    let x = args.tensor("x")?;
    let d = axis(args, "dim", x.rank())?;
    let sizes = args.sizes("sizes")?;
    if sizes.is_empty() {
        return Err(error("split_sizes needs at least one size").blame("sizes", "empty"));
    }
    let total = sizes.iter().try_fold(k(0), |acc, s| acc.add(s)).ok_or_else(|| error("the sizes overflow"))?;
    if total.certainly_differs(&x.shape[d]) {
        return Err(error(format!("split_sizes' sizes sum to {total}, but dimension {d} of {x} is {}", x.shape[d]))
            .blame("sizes", format!("sum {total}"))
            .help("the sizes must add up to the dimension's length, as torch.split requires"));
    }
    let outputs = sizes
        .into_iter()
        .map(|size| {
            let mut shape = x.shape.clone();
            shape[d] = size;
            TensorType::new(x.dtype, shape)
        })
        .collect();
    Ok(OpResult { outputs, weights: Vec::new(), buffers: Vec::new(), macs: k(0) })
}

pub(super) fn split(args: &Args) -> OpOutcome {
    let x = args.tensor("x")?;
    let d = axis(args, "dim", x.rank())?;
    let sections = args.known_int("sections")?;
    if sections < 1 {
        return Err(error(format!("split needs at least 1 section, found {sections}")).blame("sections", "here"));
    }
    let len = x.shape[d].clone();
    let Some(l) = len.known() else {
        // Symbolic length: equal pieces.
        let piece = len.floor_div(&k(sections)).ok()?;
        let mut shape = x.shape.clone();
        shape[d] = piece;
        return Ok(OpResult {
            outputs: vec![TensorType::new(x.dtype, shape); sections as usize],
            weights: Vec::new(),
            buffers: Vec::new(),
            macs: k(0),
        });
    };
    let piece = (l + sections - 1) / sections;
    let mut outputs = Vec::new();
    let mut start = 0;
    while start < l {
        let mut shape = x.shape.clone();
        shape[d] = k(piece.min(l - start));
        outputs.push(TensorType::new(x.dtype, shape));
        start += piece;
    }
    Ok(OpResult { outputs, weights: Vec::new(), buffers: Vec::new(), macs: k(0) })
}

pub(super) fn slice(args: &Args) -> OpOutcome {
    let x = args.tensor("x")?;
    let d = axis(args, "dim", x.rank())?;
    let (start, end, step) = (args.int("start")?, args.int("end")?, args.known_int("step")?);
    if step < 1 {
        return Err(error(format!("slice step must be positive, found {step}")).blame("step", "here"));
    }
    let len = x.shape[d].clone();
    let size = match (len.known(), start.known(), end.known()) {
        (Some(l), Some(s), Some(e)) => {
            let clamp = |v: i128| if v < 0 { (v + l).max(0) } else { v.min(l) };
            let (s, e) = (clamp(s), clamp(e));
            k(if e > s { (e - s + step - 1) / step } else { 0 })
        }
        _ => end.sub(&start).ok()?.ceil_div(&k(step)).ok()?,
    };
    let mut shape = x.shape.clone();
    shape[d] = size;
    Ok(OpResult::one(TensorType::new(x.dtype, shape)))
}

/// `expand(x, shape)` (Tensor.expand): `x`'s dimensions aligned with the last ones of
/// `shape`; each is kept (`-1`, or the same size) or, if it is 1, repeated to the new size;
/// new leading dimensions may be added.
pub(super) fn expand(args: &Args) -> OpOutcome {
    let x = args.tensor("x")?;
    let sizes = args.ints("shape")?;
    if sizes.len() < x.rank() {
        return Err(error(format!("expand to {} dimensions cannot drop any of the {} of {x}", sizes.len(), x.rank()))
            .blame("shape", "too few sizes")
            .blame("x", format!("{x}")));
    }
    let lead = sizes.len() - x.rank();
    let mut shape = Vec::with_capacity(sizes.len());
    for (i, size) in sizes.iter().enumerate() {
        let old = i.checked_sub(lead).map(|j| &x.shape[j]);
        let new = match (old, size.known()) {
            (Some(old), Some(-1)) => old.clone(),
            (None, Some(-1)) => {
                return Err(error(format!("expand: -1 is not allowed for the new leading dimension {i}"))
                    .blame("shape", "give its size"));
            }
            (_, Some(v)) if v < 0 => {
                return Err(error(format!("expand: size {v} is negative")).blame("shape", "here"));
            }
            (Some(old), _) if *old == k(1) || old == size => size.clone(),
            (Some(old), _) if old.certainly_differs(size) => {
                return Err(error(format!(
                    "expand: dimension {} of {x} is {old}, which can only be kept or, if it were 1, repeated; not made {size}",
                    i - lead
                ))
                .blame("x", format!("{x}"))
                .blame("shape", format!("{size} here"))
                .help("only dimensions of size 1 can be expanded"));
            }
            // Symbolic sizes that may be equal: assume they are.
            _ => size.clone(),
        };
        shape.push(new);
    }
    Ok(OpResult::one(TensorType::new(x.dtype, shape)))
}

/// `tile(x, dims)` (torch.tile, Tensor.repeat): `x` tiled `dims[i]` times along each
/// dimension, its dimensions aligned with the last of `dims`: more counts than dimensions add
/// leading ones, fewer are taken as ones before them (torch.tile's rule; Tensor.repeat asks for
/// at least one a dimension); a new tensor.
pub(super) fn tile(args: &Args) -> OpOutcome {
    let x = args.tensor("x")?;
    let given = args.ints("dims")?;
    let mut repeats = vec![Dim::Known(1); x.rank().saturating_sub(given.len())];
    repeats.extend(given.iter().cloned());
    let lead = repeats.len() - x.rank();
    let mut shape = Vec::with_capacity(repeats.len());
    for (i, count) in repeats.iter().enumerate() {
        if let Some(v) = count.known()
            && v < 0
        {
            return Err(error(format!("tile: count {v} is negative")).blame("dims", "here"));
        }
        let size = match i.checked_sub(lead) {
            Some(j) => x.shape[j].mul(count).ok_or_else(|| error("tile: the size overflows").blame("dims", "here"))?,
            None => count.clone(),
        };
        shape.push(size);
    }
    Ok(OpResult::one(TensorType::new(x.dtype, shape)))
}

/// `tril(x, diagonal)` and `triu(x, diagonal)`: `x`'s shape and dtype; at least two dimensions
/// (the triangle is of the last two).
pub(super) fn triangle(op: Op, args: &Args) -> OpOutcome {
    let x = args.tensor("x")?;
    args.int("diagonal")?;
    if x.rank() < 2 {
        return Err(error(format!("{} needs a tensor of at least two dimensions, found {x}", op.name()))
            .blame("x", format!("{x}")));
    }
    Ok(OpResult::one(x.clone()))
}

/// `pad(x, pad, value)` (`F.pad` with `mode="constant"`): `pad` lists (before, after) counts
/// from the last dimension backwards, each added to its size (a negative count crops); an
/// even length of at most twice the rank.
pub(super) fn pad(args: &Args) -> OpOutcome {
    let x = args.tensor("x")?;
    args.float("value")?;
    let pad = args.ints("pad")?;
    if pad.len() % 2 != 0 || pad.len() > 2 * x.rank() {
        return Err(error(format!(
            "pad takes (before, after) pairs for at most {} dimensions, found {} counts",
            x.rank(),
            pad.len()
        ))
        .blame("pad", "here"));
    }
    let mut shape = x.shape.clone();
    for (pair, counts) in pad.chunks(2).enumerate() {
        let d = x.rank() - 1 - pair;
        let grown = shape[d].add(&counts[0]).and_then(|s| s.add(&counts[1]));
        let Some(size) = grown else { return Err(error("pad: the size overflows").blame("pad", "here")) };
        if size.known().is_some_and(|v| v < 0) {
            return Err(error(format!("pad crops dimension {d} of {x} below zero")).blame("pad", "here"));
        }
        shape[d] = size;
    }
    Ok(OpResult::one(TensorType::new(x.dtype, shape)))
}

/// `unsqueeze(x, dim)` (Tensor.unsqueeze, `x[:, None]`): a dimension of size 1 inserted at
/// `dim`, which ranges over the output's dimensions (`-1` appends one).
pub(super) fn unsqueeze(args: &Args) -> OpOutcome {
    let x = args.tensor("x")?;
    let d = axis(args, "dim", x.rank() + 1)?;
    let mut shape = x.shape.clone();
    shape.insert(d, Dim::Known(1));
    Ok(OpResult::one(TensorType::new(x.dtype, shape)))
}

/// `squeeze(x, dim)` (Tensor.squeeze with a dimension): the dimension `dim` removed when its
/// size is 1; any other size (a symbolic one included) is kept, as PyTorch keeps a size it
/// cannot squeeze.
pub(super) fn squeeze(args: &Args) -> OpOutcome {
    let x = args.tensor("x")?;
    let d = axis(args, "dim", x.rank())?;
    let mut shape = x.shape.clone();
    if shape.get(d).is_some_and(|size| size.known() == Some(1)) {
        shape.remove(d);
    }
    Ok(OpResult::one(TensorType::new(x.dtype, shape)))
}

/// `select(x, dim, index)` (Tensor.select, `x[:, i]`): the dimension `dim` removed, at
/// position `index` (negative counts from the end).
pub(super) fn select(args: &Args) -> OpOutcome {
    let x = args.tensor("x")?;
    if x.rank() == 0 {
        return Err(error("select needs a tensor with at least one dimension").blame("x", format!("{x}")));
    }
    let d = axis(args, "dim", x.rank())?;
    let index = args.int("index")?;
    if let (Some(i), Some(size)) = (index.known(), x.shape[d].known())
        && !(-size..size).contains(&i)
    {
        return Err(error(format!("index {i} is out of range for dimension {d} of size {size}"))
            .blame("index", format!("valid: {} to {}", -size, size - 1)));
    }
    let mut shape = x.shape.clone();
    shape.remove(d);
    Ok(OpResult::one(TensorType::new(x.dtype, shape)))
}

/// `narrow(x, dim, start, length)` (Tensor.narrow): `length` elements from `start` along `dim`.
pub(super) fn narrow(args: &Args) -> OpOutcome {
    let x = args.tensor("x")?;
    let d = axis(args, "dim", x.rank())?;
    let (start, length) = (args.int("start")?, args.int("length")?);
    if let (Some(s), Some(l), Some(size)) = (start.known(), length.known(), x.shape[d].known()) {
        let from = if s < 0 { s + size } else { s };
        if l < 0 || from < 0 || from > size || from + l > size {
            return Err(error(format!("narrow of {l} elements from {s} does not fit in dimension {d} of size {size}"))
                .blame("start", format!("{s}"))
                .blame("length", format!("{l}")));
        }
    }
    let mut shape = x.shape.clone();
    shape[d] = length;
    Ok(OpResult::one(TensorType::new(x.dtype, shape)))
}

/// `view_as_complex(x)` (torch.view_as_complex): a float32 (float64) tensor whose last
/// dimension is 2, its pairs seen as complex64 (complex128) numbers; the last dimension goes.
pub(super) fn view_as_complex(args: &Args) -> OpOutcome {
    let x = args.tensor("x")?;
    let Some(dtype) = x.dtype.complex() else {
        return Err(error(format!("view_as_complex takes float32 or float64 pairs, found {x}"))
            .blame("x", format!("{x}"))
            .help("cast the pairs first, as transformers does: `view_as_complex(to(x, \"f32\"))`"));
    };
    match x.shape.last().map(|d| d.known()) {
        Some(Some(2)) | Some(None) => {}
        _ => {
            return Err(error(format!("view_as_complex needs a last dimension of 2 (real, imaginary), found {x}"))
                .blame("x", format!("{x}"))
                .help("reshape the features into pairs: `reshape(x, [..., D // 2, 2])`"));
        }
    }
    Ok(OpResult::one(TensorType::new(dtype, x.shape[..x.rank() - 1].to_vec())))
}

/// `view_as_real(x)` (torch.view_as_real): complex numbers seen as pairs of their parts, a
/// new last dimension of 2.
pub(super) fn view_as_real(args: &Args) -> OpOutcome {
    let x = args.tensor("x")?;
    let Some(dtype) = x.dtype.real_part() else {
        return Err(error(format!("view_as_real takes a complex tensor, found {x}")).blame("x", format!("{x}")));
    };
    let mut shape = x.shape.clone();
    shape.push(k(2));
    Ok(OpResult::one(TensorType::new(dtype, shape)))
}
