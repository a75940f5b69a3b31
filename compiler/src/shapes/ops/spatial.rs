//! The rules of convolutions, pooling and resizing: PyTorch's window formula
//! `floor((L + 2p - d(k - 1) - 1) / s) + 1`, groups, transposed convolutions.

use super::*;

/// The output size of a convolution or pooling window along one dimension:
/// `floor((L + 2p - d(k - 1) - 1) / s) + 1`, PyTorch's formula.
pub(super) fn window_out(len: &Dim, k_: &Dim, stride: &Dim, pad: &Dim, dilation: &Dim) -> Option<Dim> {
    let span = dilation.mul(&k_.sub(&k(1))?)?.add(&k(1))?;
    len.add(&pad.mul(&k(2))?)?.sub(&span)?.floor_div(stride)?.add(&k(1))
}

pub(super) fn conv(args: &Args, dims: usize) -> OpOutcome {
    let layout = ["[N, C, L]", "[N, C, H, W]", "[N, C, D, H, W]"][dims - 1];
    let x = rank(args, "x", &[dims + 2], &format!("{layout} for conv{dims}d"))?;
    if !x.dtype.is_float() {
        return Err(error(format!("convolution needs a floating-point input, found {x}")).blame("x", format!("{x}")));
    }
    let out_channels = args.int("out_channels")?;
    let (kernel, stride, pad, dilation, groups) =
        (args.int("k")?, args.int("stride")?, args.int("pad")?, args.int("dilation")?, args.int("groups")?);
    for (name, v, min) in
        [("out_channels", &out_channels, 1), ("k", &kernel, 1), ("stride", &stride, 1), ("dilation", &dilation, 1)]
    {
        at_least(args, name, v, min)?;
    }
    at_least(args, "pad", &pad, 0)?;
    at_least(args, "groups", &groups, 1)?;
    let in_channels = &x.shape[1];
    check_groups(in_channels, &out_channels, &groups, x)?;
    let mut out_shape = vec![x.shape[0].clone(), out_channels.clone()];
    for (i, len) in x.shape[2..].iter().enumerate() {
        let o = window_out(len, &kernel, &stride, &pad, &dilation).ok()?;
        if o.certainly_nonpositive() {
            return Err(error(format!(
                "convolution output would be empty: input size {len} in dimension {} is smaller than the kernel's reach {}",
                i + 2,
                dilation.mul(&kernel.sub(&k(1)).ok()?).ok()?.add(&k(1)).ok()?
            ))
            .blame("x", format!("{x}"))
            .blame("k", format!("kernel {kernel}"))
            .help("use a smaller kernel or stride, more padding, or a larger input"));
        }
        out_shape.push(o);
    }
    let kernel_volume = product(std::iter::repeat_n(&kernel, dims))?;
    let per_group_in = in_channels.floor_div(&groups).ok()?;
    let weight = out_channels.mul(&per_group_in).ok()?.mul(&kernel_volume).ok()?;
    let mut weights = vec![Weight { name: "weight", numel: weight.clone() }];
    if args.bool("bias")? {
        weights.push(Weight { name: "bias", numel: out_channels.clone() });
    }
    let out = TensorType::new(x.dtype, out_shape);
    // Every output element is a dot product of Cin/groups x k^dims terms.
    let macs = out.numel().ok()?.mul(&per_group_in).ok()?.mul(&kernel_volume).ok()?;
    Ok(OpResult { outputs: vec![out], weights, buffers: Vec::new(), macs })
}

pub(super) fn check_groups(in_channels: &Dim, out_channels: &Dim, groups: &Dim, x: &TensorType) -> Result<(), OpError> {
    for (what, channels, param) in [("input", in_channels, "x"), ("output", out_channels, "out_channels")] {
        if let (Some(c), Some(g)) = (channels.known(), groups.known())
            && c % g != 0
        {
            let label = if param == "x" { format!("{x}: {c} channels") } else { format!("{c} channels") };
            return Err(error(format!("{what} channels ({c}) are not divisible by groups ({g})"))
                .blame(param, label)
                .blame("groups", format!("{g} groups")));
        }
    }
    Ok(())
}

pub(super) fn conv_transpose(args: &Args, dims: usize) -> OpOutcome {
    let x = rank(args, "x", &[dims + 2], "[N, C, H, W] for conv_transpose2d")?;
    let out_channels = args.int("out_channels")?;
    let (kernel, stride, pad, output_pad, dilation, groups) = (
        args.int("k")?,
        args.int("stride")?,
        args.int("pad")?,
        args.int("output_pad")?,
        args.int("dilation")?,
        args.int("groups")?,
    );
    at_least(args, "out_channels", &out_channels, 1)?;
    at_least(args, "k", &kernel, 1)?;
    at_least(args, "stride", &stride, 1)?;
    at_least(args, "groups", &groups, 1)?;
    let in_channels = &x.shape[1];
    check_groups(in_channels, &out_channels, &groups, x)?;
    let mut out_shape = vec![x.shape[0].clone(), out_channels.clone()];
    for len in &x.shape[2..] {
        // (L - 1) s - 2p + d (k - 1) + output_pad + 1
        let o = len
            .sub(&k(1))
            .and_then(|v| v.mul(&stride))
            .and_then(|v| v.sub(&pad.mul(&k(2))?))
            .and_then(|v| v.add(&dilation.mul(&kernel.sub(&k(1))?)?))
            .and_then(|v| v.add(&output_pad))
            .and_then(|v| v.add(&k(1)))
            .ok()?;
        if o.certainly_nonpositive() {
            return Err(error("transposed convolution output would be empty").blame("x", format!("{x}")));
        }
        out_shape.push(o);
    }
    let kernel_volume = product(std::iter::repeat_n(&kernel, dims))?;
    let per_group_out = out_channels.floor_div(&groups).ok()?;
    let weight = in_channels.mul(&per_group_out).ok()?.mul(&kernel_volume).ok()?;
    let mut weights = vec![Weight { name: "weight", numel: weight }];
    if args.bool("bias")? {
        weights.push(Weight { name: "bias", numel: out_channels.clone() });
    }
    // Each input element is scattered into Cout/groups x k^dims outputs.
    let macs = x.numel().ok()?.mul(&per_group_out).ok()?.mul(&kernel_volume).ok()?;
    Ok(OpResult { outputs: vec![TensorType::new(x.dtype, out_shape)], weights, buffers: Vec::new(), macs })
}

pub(super) fn pool(args: &Args, max: bool) -> OpOutcome {
    let x = rank(args, "x", &[3, 4], "[N, C, H, W] for 2-D pooling")?;
    let kernel = args.int("k")?;
    let stride = match args.int("stride")? {
        Dim::Known(0) => kernel.clone(),
        s => s,
    };
    let pad = args.int("pad")?;
    let dilation = if max { args.int("dilation")? } else { k(1) };
    let ceil_mode = args.bool("ceil_mode")?;
    at_least(args, "k", &kernel, 1)?;
    at_least(args, "stride", &stride, 1)?;
    at_least(args, "pad", &pad, 0)?;
    if let (Some(p), Some(kv)) = (pad.known(), kernel.known())
        && p > kv / 2
    {
        return Err(error(format!("pad should be at most half of the kernel size, found pad {p} for kernel {kv}"))
            .blame("pad", format!("pad {p}")));
    }
    let mut shape = x.shape[..x.rank() - 2].to_vec();
    for len in &x.shape[x.rank() - 2..] {
        let span = dilation.mul(&kernel.sub(&k(1)).ok()?).ok()?.add(&k(1)).ok()?;
        let numerator = len.add(&pad.mul(&k(2)).ok()?).ok()?.sub(&span).ok()?;
        let mut o = if ceil_mode {
            numerator.ceil_div(&stride).ok()?.add(&k(1)).ok()?
        } else {
            numerator.floor_div(&stride).ok()?.add(&k(1)).ok()?
        };
        // PyTorch: with ceil_mode, the last window must start inside the input or left padding.
        if ceil_mode
            && let (Some(ov), Some(s), Some(l), Some(p)) = (o.known(), stride.known(), len.known(), pad.known())
            && (ov - 1) * s >= l + p
        {
            o = k(ov - 1);
        }
        if o.certainly_nonpositive() {
            return Err(error(format!(
                "pooling output would be empty: input size {len} is smaller than the window {span}"
            ))
            .blame("x", format!("{x}"))
            .blame("k", format!("window {kernel}")));
        }
        shape.push(o);
    }
    Ok(OpResult::one(TensorType::new(x.dtype, shape)))
}

pub(super) fn adaptive_pool(args: &Args) -> OpOutcome {
    let x = rank(args, "x", &[3, 4], "[N, C, H, W] for adaptive pooling")?;
    let size = args.int("size")?;
    at_least(args, "size", &size, 1)?;
    let mut shape = x.shape[..x.rank() - 2].to_vec();
    shape.extend([size.clone(), size]);
    Ok(OpResult::one(TensorType::new(x.dtype, shape)))
}

pub(super) fn upsample(args: &Args) -> OpOutcome {
    let x = rank(args, "x", &[3, 4, 5], "[N, C, ...] for upsample")?;
    let scale = args.int("scale")?;
    at_least(args, "scale", &scale, 1)?;
    args.str("mode")?;
    let mut shape = x.shape[..2].to_vec();
    for len in &x.shape[2..] {
        shape.push(len.mul(&scale).ok()?);
    }
    Ok(OpResult::one(TensorType::new(x.dtype, shape)))
}

pub(super) fn interpolate(args: &Args) -> OpOutcome {
    let x = rank(args, "x", &[3, 4, 5], "[N, C, ...] for interpolate")?;
    let size = args.ints("size")?;
    if size.len() != x.rank() - 2 {
        return Err(error(format!("interpolate of {x} needs {} sizes, found {}", x.rank() - 2, size.len()))
            .blame("size", "here"));
    }
    let mut shape = x.shape[..2].to_vec();
    shape.extend(size);
    Ok(OpResult::one(TensorType::new(x.dtype, shape)))
}
