//! The rules of sequence ops: multi-head attention, scaled dot-product attention, and the
//! recurrent layers (LSTM, GRU).

use super::*;

/// nn.MultiheadAttention(dim, heads, batch_first=True) applied as self-attention.
pub(super) fn attention(args: &Args) -> OpOutcome {
    let x = rank(args, "x", &[3], "[N, S, dim] for attention")?;
    let dim = args.int("dim")?;
    let heads = args.int("heads")?;
    at_least(args, "heads", &heads, 1)?;
    if x.shape[2].certainly_differs(&dim) {
        return Err(error(format!("attention over dim {dim} got an input of width {}", x.shape[2]))
            .blame("x", format!("{x}"))
            .blame("dim", format!("dim {dim}")));
    }
    if let (Some(d), Some(h)) = (dim.known(), heads.known())
        && d % h != 0
    {
        return Err(error(format!("dim {d} is not divisible by {h} heads")).blame("heads", format!("{h} heads")));
    }
    let (n, s) = (&x.shape[0], &x.shape[1]);
    let dd = dim.mul(&dim).ok()?;
    let mut weights = vec![
        Weight { name: "in_proj_weight", numel: dd.mul(&k(3)).ok()? },
        Weight { name: "out_proj.weight", numel: dd.clone() },
    ];
    if args.bool("bias")? {
        weights.push(Weight { name: "in_proj_bias", numel: dim.mul(&k(3)).ok()? });
        weights.push(Weight { name: "out_proj.bias", numel: dim.clone() });
    }
    let tokens = n.mul(s).ok()?;
    // Projections: 4 N S d^2; scores and weighted sum: 2 N S^2 d.
    let projections = tokens.mul(&dd).ok()?.mul(&k(4)).ok()?;
    let attend = tokens.mul(s).ok()?.mul(&dim).ok()?.mul(&k(2)).ok()?;
    let macs = projections.add(&attend).ok()?;
    Ok(OpResult { outputs: vec![x.clone()], weights, buffers: Vec::new(), macs })
}

/// The values of `sdpa`'s `backend` argument: PyTorch's own choice, or one kernel forced.
pub const SDPA_BACKENDS: [&str; 5] = ["auto", "flash", "efficient", "cudnn", "math"];

pub(super) fn sdpa(args: &Args) -> OpOutcome {
    let q = args.tensor("q")?;
    let kk = args.tensor("k")?;
    let v = args.tensor("v")?;
    if q.rank() < 2 || q.rank() != kk.rank() || q.rank() != v.rank() {
        return Err(error(format!("sdpa needs q, k, v of equal rank of at least 2, found {q}, {kk}, {v}"))
            .blame("q", format!("{q}"))
            .blame("k", format!("{kk}"))
            .blame("v", format!("{v}")));
    }
    let backend = args.str("backend")?;
    if !SDPA_BACKENDS.contains(&backend) {
        return Err(error(format!("unknown attention kernel `{backend}`"))
            .blame("backend", "one of auto, flash, efficient, cudnn, math"));
    }
    let r = q.rank();
    let (tq, d) = (&q.shape[r - 2], &q.shape[r - 1]);
    let (tk, dk) = (&kk.shape[r - 2], &kk.shape[r - 1]);
    if d.certainly_differs(dk) {
        return Err(error(format!("q and k have different head sizes: {q} and {kk}"))
            .blame("q", format!("{q}"))
            .blame("k", format!("{kk}")));
    }
    if tk.certainly_differs(&v.shape[r - 2]) {
        return Err(error(format!("k and v have different lengths: {kk} and {v}"))
            .blame("k", format!("{kk}"))
            .blame("v", format!("{v}")));
    }
    // Batch and head dimensions must agree (broadcast) across q, k and v; with `enable_gqa`
    // the key/value heads (dimension -3) may divide the query's (grouped-query attention).
    let gqa = args.bool("enable_gqa").unwrap_or(false);
    if gqa {
        let heads = |t: &TensorType| t.shape.get(r.wrapping_sub(3)).and_then(|d| d.known());
        match (r >= 3, heads(q), heads(kk), heads(v)) {
            (false, ..) => {
                return Err(error(format!("enable_gqa needs heads: q, k, v of at least 3 dimensions, found {q}"))
                    .blame("q", format!("{q}")));
            }
            (true, Some(hq), Some(hk), Some(hv)) if hk != hv || hk == 0 || hq % hk != 0 => {
                return Err(error(format!(
                    "grouped-query attention needs k and v with one number of heads that divides q's, found {hq}, {hk} and {hv}"
                ))
                .blame("q", format!("{q}"))
                .blame("k", format!("{kk}"))
                .blame("v", format!("{v}")));
            }
            _ => {}
        }
    }
    for (name, t) in [("k", kk), ("v", v)] {
        for i in 0..r - 2 {
            let (a, b) = (&q.shape[i], &t.shape[i]);
            if gqa && i == r - 3 {
                continue;
            }
            if a.certainly_differs(b) && *a != k(1) && *b != k(1) {
                return Err(error(format!("q and {name} differ in dimension {i}: {q} and {t}"))
                    .blame("q", format!("{q}"))
                    .blame(name, format!("{t}"))
                    .help("repeat the key/value heads to the query's, or pass `enable_gqa=true` (grouped-query attention)"));
            }
        }
    }
    let batch = product(&q.shape[..r - 2])?;
    if sdpa_mask(args, q, tk)? && args.bool("causal").unwrap_or(false) {
        // `_scaled_dot_product_attention_math`: "Explicit attn_mask should not be set when
        // is_causal=True"; the fused kernels would ignore one of the two.
        return Err(error("an attention mask and `causal=true` together")
            .blame("mask", "a mask")
            .blame("causal", "causal")
            .help("fold the causal pattern into the mask, or leave the mask out"));
    }
    let mut shape = q.shape.clone();
    shape[r - 1] = v.shape[r - 1].clone();
    // Q K^T and A V: B H Tq Tk (d + dv).
    let macs = batch.mul(tq).ok()?.mul(tk).ok()?.mul(&d.add(&v.shape[r - 1]).ok()?).ok()?;
    Ok(OpResult { outputs: vec![TensorType::new(q.dtype, shape)], weights: Vec::new(), buffers: Vec::new(), macs })
}

/// Checks `sdpa`'s `mask` (`attn_mask`): 0.0, the default, is none; a tensor must be bool (kept
/// where true) or float (added to the scores; float32 or q's dtype, as `validate_sdpa_input`
/// takes) and broadcast to the attention weights' `[..., Tq, Tk]` without growing them.
/// Whether there is a mask.
fn sdpa_mask(args: &Args, q: &TensorType, tk: &Dim) -> Result<bool, OpError> {
    let Some(mask) = args.optional_tensor("mask", "an attention mask (bool, or float added to the scores)")? else {
        return Ok(false);
    };
    if !(mask.dtype == DType::Bool || mask.dtype == DType::F32 || mask.dtype == q.dtype) {
        return Err(error(format!(
            "an attention mask is bool, float32 or q's dtype ({}), found {}",
            q.dtype.name(),
            mask.dtype.name()
        ))
        .blame("mask", format!("{mask}")));
    }
    let r = q.rank();
    let mut weights = q.shape.clone();
    weights[r - 1] = tk.clone();
    let weights = TensorType::new(q.dtype, weights);
    let grown = |b: &TensorType| b.rank() > weights.rank() || b.shape.iter().zip(&weights.shape).any(|(x, y)| x != y);
    match dense::broadcast(mask, &weights) {
        Ok(b) if !grown(&b) => Ok(true),
        _ => Err(error(format!("the mask {mask} does not broadcast to the attention weights {weights}"))
            .blame("mask", format!("{mask}"))
            .help("a mask is `[..., Tq, Tk]` with sizes of 1 where it is shared (heads, batch)")),
    }
}

/// LSTM (4 gates) and GRU (3 gates), batch-first, as torch.nn.LSTM / torch.nn.GRU.
pub(super) fn recurrent(args: &Args, gates: i128) -> OpOutcome {
    let x = rank(args, "x", &[3], "[N, S, features] for a recurrent layer")?;
    let hidden = args.int("hidden")?;
    let layers = args.known_int("layers")?;
    at_least(args, "hidden", &hidden, 1)?;
    if layers < 1 {
        return Err(error(format!("a recurrent layer needs at least 1 layer, found {layers}")).blame("layers", "here"));
    }
    let dirs = if args.bool("bidirectional")? { 2 } else { 1 };
    let bias = args.bool("bias")?;
    let (n, s) = (&x.shape[0], &x.shape[1]);
    let gate_h = hidden.mul(&k(gates)).ok()?;
    let mut weights = Vec::new();
    let mut macs = k(0);
    let mut input = x.shape[2].clone();
    for _ in 0..layers {
        for _ in 0..dirs {
            weights.push(Weight { name: "weight_ih", numel: gate_h.mul(&input).ok()? });
            weights.push(Weight { name: "weight_hh", numel: gate_h.mul(&hidden).ok()? });
            if bias {
                weights.push(Weight { name: "bias_ih", numel: gate_h.clone() });
                weights.push(Weight { name: "bias_hh", numel: gate_h.clone() });
            }
            let per_step = gate_h.mul(&input.add(&hidden).ok()?).ok()?;
            macs = macs.add(&n.mul(s).ok()?.mul(&per_step).ok()?).ok()?;
        }
        input = hidden.mul(&k(dirs)).ok()?;
    }
    let out = TensorType::new(x.dtype, vec![n.clone(), s.clone(), hidden.mul(&k(dirs)).ok()?]);
    let h = TensorType::new(x.dtype, vec![k(layers * dirs), n.clone(), hidden]);
    Ok(OpResult { outputs: vec![out, h], weights, buffers: Vec::new(), macs })
}
