//! The rules of linear layers, matrix products (with NumPy broadcasting of batch
//! dimensions), embeddings and free-standing parameters.

use super::*;

pub(super) fn linear(args: &Args) -> OpOutcome {
    let x = args.tensor("x")?;
    if x.rank() == 0 {
        return Err(error("linear needs at least a 1-D input").blame("x", format!("{x}")));
    }
    if !x.dtype.is_float() {
        return Err(error(format!("linear needs a floating-point input, found {x}"))
            .blame("x", format!("{x}"))
            .help("integer ids go through `embedding` first"));
    }
    let out_features = args.int("out_features")?;
    at_least(args, "out_features", &out_features, 1)?;
    let in_features = x.shape.last().expect("rank checked").clone();
    let mut weights = vec![Weight { name: "weight", numel: out_features.mul(&in_features).ok()? }];
    if args.bool("bias")? {
        weights.push(Weight { name: "bias", numel: out_features.clone() });
    }
    let mut shape = x.shape.clone();
    *shape.last_mut().expect("rank checked") = out_features.clone();
    let out = TensorType::new(x.dtype, shape);
    let macs = out.numel().ok()?.mul(&in_features).ok()?;
    Ok(OpResult { outputs: vec![out], weights, buffers: Vec::new(), macs })
}

/// Broadcasts two shapes (numpy rules), or explains why not.
pub fn broadcast(a: &TensorType, b: &TensorType) -> Result<TensorType, OpError> {
    let rank = a.rank().max(b.rank());
    let mut shape = Vec::with_capacity(rank);
    for i in 0..rank {
        let da = if i + a.rank() >= rank { Some(&a.shape[i + a.rank() - rank]) } else { None };
        let db = if i + b.rank() >= rank { Some(&b.shape[i + b.rank() - rank]) } else { None };
        let d = match (da, db) {
            (Some(x), None) | (None, Some(x)) => x.clone(),
            (Some(x), Some(y)) if x == y => x.clone(),
            (Some(x), Some(y)) if *x == k(1) => y.clone(),
            (Some(x), Some(y)) if *y == k(1) => x.clone(),
            (Some(x), Some(y)) if x.certainly_differs(y) || (x.known().is_some() && y.known().is_some()) => {
                return Err(error(format!(
                    "shapes {a} and {b} cannot be broadcast: dimension {i} is {x} in one and {y} in the other"
                ))
                .help("broadcasting needs equal sizes or a size of 1 in each dimension"));
            }
            // Symbolic sizes that may be equal: assume they are.
            (Some(x), Some(_)) => x.clone(),
            (None, None) => unreachable!("i < rank"),
        };
        shape.push(d);
    }
    let dtype = DType::result_type([(a.dtype, a.rank() == 0), (b.dtype, b.rank() == 0)]).unwrap_or(a.dtype);
    Ok(TensorType::new(dtype, shape))
}

/// `a @ b` with torch.matmul's rules (1-D operands, batch broadcasting).
pub fn matmul(a: &TensorType, b: &TensorType) -> OpOutcome {
    matmul_rule(a, b)
        .map_err(|e| if e.blame.is_empty() { e.blame("a", format!("{a}")).blame("b", format!("{b}")) } else { e })
}

pub(super) fn matmul_rule(a: &TensorType, b: &TensorType) -> OpOutcome {
    if a.rank() == 0 || b.rank() == 0 {
        return Err(error(format!("matmul needs tensors of at least one dimension, found {a} and {b}")));
    }
    let a2 = if a.rank() == 1 { vec![k(1), a.shape[0].clone()] } else { a.shape.clone() };
    let b2 = if b.rank() == 1 { vec![b.shape[0].clone(), k(1)] } else { b.shape.clone() };
    let (n, inner_a) = (&a2[a2.len() - 2], &a2[a2.len() - 1]);
    let (inner_b, m) = (&b2[b2.len() - 2], &b2[b2.len() - 1]);
    if inner_a.certainly_differs(inner_b) {
        return Err(error(format!(
            "cannot multiply {a} by {b}: the inner dimensions differ ({inner_a} and {inner_b})"
        )));
    }
    let batch_a = TensorType::new(a.dtype, a2[..a2.len() - 2].to_vec());
    let batch_b = TensorType::new(b.dtype, b2[..b2.len() - 2].to_vec());
    let batch = broadcast(&batch_a, &batch_b)?;
    let mut shape = batch.shape.clone();
    if a.rank() > 1 {
        shape.push(n.clone());
    }
    if b.rank() > 1 {
        shape.push(m.clone());
    }
    let macs = product(&batch.shape)?.mul(n).ok()?.mul(inner_a).ok()?.mul(m).ok()?;
    Ok(OpResult { outputs: vec![TensorType::new(a.dtype, shape)], weights: Vec::new(), buffers: Vec::new(), macs })
}

pub(super) fn bmm(args: &Args) -> OpOutcome {
    batched_product(args, "bmm", "a", "b")
}

/// The product of the 3-D arguments `a` and `b` of `op` (`[B, N, K]` and `[B, K, M]`), which
/// must have the same batch.
fn batched_product(args: &Args, op: &str, a: &str, b: &str) -> OpOutcome {
    let (an, bn) = (a, b);
    let a = rank(args, an, &[3], &format!("[B, N, K] for {op}"))?;
    let b = rank(args, bn, &[3], &format!("[B, K, M] for {op}"))?;
    if a.shape[0].certainly_differs(&b.shape[0]) {
        return Err(error(format!("{op} batch sizes differ: {a} and {b}"))
            .blame(an, format!("{a}"))
            .blame(bn, format!("{b}")));
    }
    matmul(a, b).map_err(|e| e.blame(an, format!("{a}")).blame(bn, format!("{b}")))
}

/// `baddbmm(x, batch1, batch2)`: `bmm(batch1, batch2)`'s shape, which `x` broadcasts to
/// without growing it, of `batch1`'s dtype.
pub(super) fn baddbmm(args: &Args) -> OpOutcome {
    let x = args.tensor("x")?;
    let product = batched_product(args, "baddbmm", "batch1", "batch2")?;
    let out = &product.outputs[0];
    let added = broadcast(x, out).map_err(|e| e.blame("x", format!("{x}")))?;
    if added.shape != out.shape {
        return Err(error(format!("baddbmm's added {x} would grow the product {out}"))
            .blame("x", format!("{x}"))
            .help("`x` must broadcast to `[B, N, M]`"));
    }
    Ok(product)
}

pub(super) fn embedding(args: &Args) -> OpOutcome {
    let ids = args.tensor("ids")?;
    if ids.dtype.is_float() {
        return Err(error(format!("embedding ids must be integers, found {ids}"))
            .blame("ids", format!("{ids}"))
            .help("declare the input as i64: `input ids: i64[N, S]`"));
    }
    let (num, dim) = (args.int("num")?, args.int("dim")?);
    at_least(args, "num", &num, 1)?;
    at_least(args, "dim", &dim, 1)?;
    let mut shape = ids.shape.clone();
    shape.push(dim.clone());
    let weights = vec![Weight { name: "weight", numel: num.mul(&dim).ok()? }];
    Ok(OpResult { outputs: vec![TensorType::new(DType::F32, shape)], weights, buffers: Vec::new(), macs: k(0) })
}

/// A learned tensor: its own storage, created with the model.
/// `Module.register_buffer(name, tensor, persistent)`: a tensor of module state, of `dtype`
/// and `shape`, that is not trained. `persistent` only decides whether `state_dict` saves it:
/// its memory is the same.
pub(super) fn buffer(args: &Args) -> OpOutcome {
    let shape = args.ints("shape")?;
    if let Some(bad) = shape.iter().find(|d| d.certainly_nonpositive()) {
        return Err(error(format!("a buffer's dimensions must be positive, found {bad}")).blame("shape", "here"));
    }
    let dtype = args.dtype("dtype")?;
    let numel = product(&shape)?;
    Ok(OpResult {
        outputs: vec![TensorType::new(dtype, shape)],
        weights: Vec::new(),
        buffers: vec![Buffer { name: "buffer", numel, dtype }],
        macs: k(0),
    })
}

pub(super) fn parameter(args: &Args) -> OpOutcome {
    let shape = args.ints("shape")?;
    if let Some(bad) = shape.iter().find(|d| d.certainly_nonpositive()) {
        return Err(error(format!("a parameter's dimensions must be positive, found {bad}")).blame("shape", "here"));
    }
    let numel = product(&shape)?;
    let active = args.int("active").unwrap_or(k(0));
    if let (Some(a), Some(slices)) = (active.known(), shape.first().and_then(|d| d.known()))
        && !(0..=slices).contains(&a)
    {
        return Err(error(format!("`active` names {a} of the parameter's {slices} slices"))
            .blame("active", format!("valid: 0 (all) to {slices}")));
    }
    Ok(OpResult {
        outputs: vec![TensorType::new(DType::F32, shape)],
        weights: vec![Weight { name: "weight", numel }],
        buffers: Vec::new(),
        macs: k(0),
    })
}

/// The most inputs a `kernel` saves for backward (with its `saved_bytes`, the most tensors an
/// op keeps).
pub const KERNEL_MAX_SAVES: usize = 4;

/// `kernel(inputs, shape, ...)`: an op declared by its costs. Its output is `shape` of
/// `dtype`; it creates `params` trained parameters and does `macs` multiply-accumulates; it
/// saves for backward the inputs `saves` names by position (and `saved_bytes` more); it holds
/// `workspace` bytes while it runs and while its backward runs, and `scratch` (forward) and
/// `backward_scratch` temporaries the size of its first input.
pub(super) fn kernel(args: &Args) -> OpOutcome {
    let inputs = args.tensors("inputs")?;
    let shape = args.ints("shape")?;
    if let Some(bad) = shape.iter().find(|d| d.known().is_some_and(|v| v < 0)) {
        return Err(
            error(format!("a kernel's output dimensions must not be negative, found {bad}")).blame("shape", "here")
        );
    }
    let dtype = args.dtype("dtype")?;
    for key in ["params", "macs", "saved_bytes", "workspace", "scratch", "backward_scratch"] {
        if let Some(v) = args.int(key)?.known()
            && v < 0
        {
            return Err(error(format!("a kernel's `{key}` must not be negative, found {v}")).blame(key, "here"));
        }
    }
    for key in ["scratch", "backward_scratch"] {
        if let Some(v) = args.int(key)?.known()
            && v > i128::from(u8::MAX)
        {
            return Err(error(format!("a kernel's `{key}` counts input-sized temporaries, at most 255, found {v}"))
                .blame(key, "here")
                .help("give a larger transient in bytes as `workspace`"));
        }
    }
    let saves = args.ints("saves")?;
    if saves.len() > KERNEL_MAX_SAVES {
        return Err(error(format!("a kernel saves at most {KERNEL_MAX_SAVES} of its inputs, here {}", saves.len()))
            .blame("saves", "too many")
            .help("give what else backward keeps as `saved_bytes`"));
    }
    for (i, s) in saves.iter().enumerate() {
        let Some(at) = s.known() else {
            return Err(error("a kernel's `saves` are input positions, known integers").blame("saves", "symbolic"));
        };
        if at < 0 || at as usize >= inputs.len() {
            return Err(error(format!("`saves` names input {at}, but the kernel has {} inputs", inputs.len()))
                .blame("saves", format!("0 to {}", inputs.len() as i128 - 1))
                .blame("inputs", format!("{} tensors", inputs.len())));
        }
        if saves[..i].contains(s) {
            return Err(error(format!("`saves` names input {at} twice")).blame("saves", "here"));
        }
    }
    if let Some(grads) = args.int("grads")?.known()
        && (grads < -1 || grads > inputs.len() as i128)
    {
        return Err(error(format!("`grads` counts inputs from the first, but the kernel has {} inputs", inputs.len()))
            .blame("grads", format!("-1 (every input) or 0 to {}", inputs.len())));
    }
    let params = args.int("params")?;
    let weights = if params.known() == Some(0) { Vec::new() } else { vec![Weight { name: "weight", numel: params }] };
    Ok(OpResult { outputs: vec![TensorType::new(dtype, shape)], weights, buffers: Vec::new(), macs: args.int("macs")? })
}

/// `linear4bit(x, out_features, bias, quant_type, double_quant)`: `linear`'s shape,
/// parameters and MACs; the 4-bit storage is the simulation's.
pub(super) fn linear4bit(args: &Args) -> OpOutcome {
    let quant = args.str("quant_type")?;
    if !matches!(quant, "nf4" | "fp4") {
        return Err(error(format!("unknown 4-bit type `{quant}`")).blame("quant_type", "one of nf4, fp4"));
    }
    linear(args)
}

/// `linear8bit(x, out_features, bias, threshold)`: `linear`'s shape, parameters and MACs;
/// the int8 storage and the kernel's tensors are the simulation's.
pub(super) fn linear8bit(args: &Args) -> OpOutcome {
    let threshold = args.float("threshold")?;
    if threshold.is_nan() || threshold < 0.0 {
        return Err(error(format!("the outlier threshold must be 0 or more, found {threshold}"))
            .blame("threshold", "negative")
            .help("bitsandbytes' default is 6.0; 0 turns the outlier decomposition off"));
    }
    linear(args)
}

/// `linear_int4(x, out_features, bias, group, format)`: `linear`'s shape, parameters and MACs
/// for a known format, whose groups AWQ requires to divide the input features; the packed
/// storage is the simulation's.
pub(super) fn linear_int4(args: &Args) -> OpOutcome {
    let format = args.str("format")?;
    if !matches!(format, "gptq" | "awq") {
        return Err(error(format!("unknown int4 format `{format}`")).blame("format", "one of gptq, awq"));
    }
    let group = args.int("group")?;
    at_least(args, "group", &group, 1)?;
    let x = args.tensor("x")?;
    if format == "awq"
        && let (Some(features), Some(g)) = (x.shape.last().and_then(|d| d.known()), group.known())
        && features % g != 0
    {
        return Err(error(format!("AWQ needs the input features ({features}) to be a multiple of the group ({g})"))
            .blame("group", format!("{g}"))
            .blame("x", format!("{x}")));
    }
    linear(args)
}

/// `linear_fp8(x, out_features, bias, block_size)`: `linear`'s shape, parameters and MACs; a
/// `block_size` of 0 is one scale for the whole weight.
pub(super) fn linear_fp8(args: &Args) -> OpOutcome {
    let block = args.int("block_size")?;
    at_least(args, "block_size", &block, 0)?;
    linear(args)
}

/// `grouped_mm(x, w, offs)` (`F.grouped_mm` with 2-D `x` and 3-D `w`, as a mixture of
/// experts runs it): `x: [S, K]` rows sorted by group, `w: [G, K, N]` one matrix per group,
/// `offs: [G]` the integer end of each group's rows -> `[S, N]` in `x`'s dtype. Every row is
/// multiplied by one matrix, so the MACs are `S * K * N` whatever the groups' sizes.
pub(super) fn grouped_mm(args: &Args) -> OpOutcome {
    let x = rank(args, "x", &[2], "[S, K] for grouped_mm")?;
    let w = rank(args, "w", &[3], "[G, K, N] for grouped_mm")?;
    let offs = rank(args, "offs", &[1], "[G] of group ends for grouped_mm")?;
    if x.shape[1].certainly_differs(&w.shape[1]) {
        return Err(error(format!(
            "cannot multiply {x} by the matrices of {w}: the inner dimensions differ ({} and {})",
            x.shape[1], w.shape[1]
        ))
        .blame("x", format!("{x}"))
        .blame("w", format!("{w}")));
    }
    if offs.dtype.is_float() || offs.dtype == DType::Bool {
        return Err(
            error(format!("grouped_mm's offsets must be integers, found {offs}")).blame("offs", format!("{offs}"))
        );
    }
    if offs.shape[0].certainly_differs(&w.shape[0]) {
        return Err(error(format!("grouped_mm has {} groups of matrices but {} offsets", w.shape[0], offs.shape[0]))
            .blame("offs", format!("{offs}"))
            .blame("w", format!("{w}")));
    }
    let macs = x.shape[0].mul(&x.shape[1]).ok()?.mul(&w.shape[2]).ok()?;
    Ok(OpResult {
        outputs: vec![TensorType::new(x.dtype, vec![x.shape[0].clone(), w.shape[2].clone()])],
        weights: Vec::new(),
        buffers: Vec::new(),
        macs,
    })
}
