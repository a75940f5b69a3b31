//! The rules of the normalizations: batch, layer, group and RMS norm, with their affine
//! parameters and (batch norm) running-statistics buffers.

use super::*;

pub(super) fn batchnorm(args: &Args, ranks: &[usize], layout: &str) -> OpOutcome {
    let x = rank(args, "x", ranks, &format!("{layout} for batch normalization"))?;
    let c = x.shape[1].clone();
    let weights = if args.bool("affine")? {
        vec![Weight { name: "weight", numel: c.clone() }, Weight { name: "bias", numel: c.clone() }]
    } else {
        Vec::new()
    };
    let buffers = vec![
        Buffer { name: "running_mean", numel: c.clone(), dtype: DType::F32 },
        Buffer { name: "running_var", numel: c, dtype: DType::F32 },
        Buffer { name: "num_batches_tracked", numel: k(1), dtype: DType::I64 },
    ];
    Ok(OpResult { outputs: vec![x.clone()], weights, buffers, macs: k(0) })
}

pub(super) fn last_dim(args: &Args, what: &str) -> Result<(TensorType, Dim), OpError> {
    let x = args.tensor("x")?;
    let d = x
        .shape
        .last()
        .cloned()
        .ok_or_else(|| error(format!("{what} needs at least a 1-D input")).blame("x", format!("{x}")))?;
    Ok((x.clone(), d))
}

pub(super) fn layernorm(args: &Args) -> OpOutcome {
    let (x, d) = last_dim(args, Op::LayerNorm.name())?;
    let mut weights = Vec::new();
    if args.bool("affine")? {
        weights.push(Weight { name: "weight", numel: d.clone() });
        if args.bool("bias")? {
            weights.push(Weight { name: "bias", numel: d });
        }
    }
    Ok(OpResult { outputs: vec![x], weights, buffers: Vec::new(), macs: k(0) })
}

/// `F.layer_norm(x, [D], weight, bias)`: the given weight and bias (each `[D]`, or 0.0 for
/// none) are tensors of the graph, not parameters of the op.
pub(super) fn layer_norm_with(args: &Args) -> OpOutcome {
    let (x, d) = last_dim(args, Op::LayerNormWith.name())?;
    for name in ["weight", "bias"] {
        if let Some(t) = args.optional_tensor(name, &format!("a layer norm's {name}"))?
            && t.shape != [d.clone()]
        {
            return Err(error(format!("a layer norm over a last dimension of {d} takes a [{d}] {name}, found {t}"))
                .blame("x", format!("{x}"))
                .blame(name, format!("{t}")));
        }
    }
    Ok(OpResult { outputs: vec![x], weights: Vec::new(), buffers: Vec::new(), macs: k(0) })
}

pub(super) fn groupnorm(args: &Args) -> OpOutcome {
    let x = args.tensor("x")?;
    if x.rank() < 2 {
        return Err(error(format!("groupnorm needs [N, C, ...], found {x}")).blame("x", format!("{x}")));
    }
    let groups = args.int("groups")?;
    at_least(args, "groups", &groups, 1)?;
    let c = x.shape[1].clone();
    if let (Some(cv), Some(g)) = (c.known(), groups.known())
        && cv % g != 0
    {
        return Err(error(format!("{cv} channels cannot be split into {g} groups"))
            .blame("x", format!("{x}"))
            .blame("groups", format!("{g} groups")));
    }
    let weights = if args.bool("affine")? {
        vec![Weight { name: "weight", numel: c.clone() }, Weight { name: "bias", numel: c }]
    } else {
        Vec::new()
    };
    Ok(OpResult { outputs: vec![x.clone()], weights, buffers: Vec::new(), macs: k(0) })
}

pub(super) fn rmsnorm(args: &Args) -> OpOutcome {
    let (x, d) = last_dim(args, Op::RmsNorm.name())?;
    // `nn.RMSNorm(..., elementwise_affine=False)` has no weight.
    let weights = if args.bool("affine")? { vec![Weight { name: "weight", numel: d }] } else { Vec::new() };
    Ok(OpResult { outputs: vec![x], weights, buffers: Vec::new(), macs: k(0) })
}
