//! The semantics of the built-in ops: shape rule, parameters and MACs.
//!
//! The signatures (parameter names, kinds, defaults) are declared in `stdlib/std/nn.net`; the
//! elaborator binds a call's arguments to them and hands the values here by parameter name.
//! Each rule follows PyTorch exactly (the formulas of its module documentation).
//!
//! MACs follow the convention of fvcore, ptflops and torchvision's GFLOPS column (FLOPs = 2 x
//! MACs): one MAC per multiply-accumulate of convolutions, linear layers, matrix products and
//! attention; bias adds, normalization, activations, pooling, softmax and elementwise ops are
//! not counted (spec/shapes.md says why).

use std::sync::Arc;

use super::dim::Dim;
use super::types::{DType, TensorType};
use crate::op::Op;

/// A bound argument value.
#[derive(Debug, Clone, PartialEq)]
pub enum ArgValue {
    /// A tensor (its type shared with the graph that holds it).
    Tensor(Arc<TensorType>),
    /// A list of tensors.
    Tensors(Vec<TensorType>),
    /// An integer.
    Int(Dim),
    /// A float.
    Float(f64),
    /// A boolean.
    Bool(bool),
    /// A string.
    Str(String),
    /// A list of integers.
    Ints(Vec<Dim>),
}

/// A call's arguments by parameter name, defaults filled in.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Args {
    /// Parameter name to value.
    pub values: ArgMap,
}

/// Argument values by parameter name, in the order they were added (the op's parameter
/// order). An op has a handful of parameters: a short scan finds one, and the whole map is
/// one allocation, which matters for a graph that holds one per node.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ArgMap {
    entries: Vec<(Arc<str>, ArgValue)>,
}

impl ArgMap {
    /// The value of parameter `name`, if given.
    pub fn get(&self, name: &str) -> Option<&ArgValue> {
        self.entries.iter().find(|(n, _)| &**n == name).map(|(_, v)| v)
    }

    /// Sets parameter `name`, replacing an earlier value in place.
    pub fn insert(&mut self, name: impl Into<Arc<str>>, value: ArgValue) {
        let name = name.into();
        match self.entries.iter_mut().find(|(n, _)| *n == name) {
            Some(entry) => entry.1 = value,
            None => self.entries.push((name, value)),
        }
    }

    /// The same parameters with each value mapped by `f`; `None` if `f` fails for one.
    pub fn try_map(&self, mut f: impl FnMut(&ArgValue) -> Option<ArgValue>) -> Option<ArgMap> {
        // Sized at once: collecting `Option`s would grow the vector push by push.
        let mut entries = Vec::with_capacity(self.entries.len());
        for (name, value) in &self.entries {
            entries.push((Arc::clone(name), f(value)?));
        }
        Some(ArgMap { entries })
    }

    /// The parameters and their values, in the order they were added.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &ArgValue)> {
        self.entries.iter().map(|(n, v)| (&**n, v))
    }

    /// How many parameters are set.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether no parameter is set.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

impl<K: Into<Arc<str>>> FromIterator<(K, ArgValue)> for ArgMap {
    fn from_iter<I: IntoIterator<Item = (K, ArgValue)>>(iter: I) -> Self {
        let mut map = ArgMap::default();
        for (name, value) in iter {
            map.insert(name, value);
        }
        map
    }
}

/// A parameter tensor an op creates.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Weight {
    /// Its name within the op, as PyTorch names it (`weight`, `bias`, `in_proj_weight`).
    pub name: &'static str,
    /// Number of elements.
    pub numel: Dim,
}

/// A buffer an op registers (BatchNorm's running statistics).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Buffer {
    /// Its name, as PyTorch names it.
    pub name: &'static str,
    /// Number of elements.
    pub numel: Dim,
    /// Element type.
    pub dtype: DType,
}

/// What an op produces and costs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpResult {
    /// The output tensors.
    pub outputs: Vec<TensorType>,
    /// Trainable parameters.
    pub weights: Vec<Weight>,
    /// Buffers.
    pub buffers: Vec<Buffer>,
    /// Multiply-accumulates for the whole batch.
    pub macs: Dim,
}

impl OpResult {
    fn one(output: TensorType) -> Self {
        OpResult { outputs: vec![output], weights: Vec::new(), buffers: Vec::new(), macs: Dim::Known(0) }
    }

    /// Total parameter count, `None` on overflow.
    pub fn params(&self) -> Option<Dim> {
        self.weights.iter().try_fold(Dim::Known(0), |acc, w| acc.add(&w.numel))
    }
}

/// Why an op cannot be applied to its arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpError {
    /// What is wrong.
    pub message: String,
    /// Arguments to label, by parameter name, with a label text.
    pub blame: Vec<(String, String)>,
    /// What to do about it.
    pub help: Option<String>,
}

type OpOutcome = Result<OpResult, OpError>;

fn error(message: impl Into<String>) -> OpError {
    OpError { message: message.into(), blame: Vec::new(), help: None }
}

impl OpError {
    fn blame(mut self, param: &str, label: impl Into<String>) -> Self {
        self.blame.push((param.to_string(), label.into()));
        self
    }

    fn help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }
}

/// An integer overflow in a shape or cost computation.
pub fn overflow() -> OpError {
    error("integer overflow computing this op's shape or cost").help("the sizes involved exceed 2^127")
}

trait Checked<T> {
    fn ok(self) -> Result<T, OpError>;
}

impl<T> Checked<T> for Option<T> {
    fn ok(self) -> Result<T, OpError> {
        self.ok_or_else(overflow)
    }
}

fn k(v: i128) -> Dim {
    Dim::Known(v)
}

/// Product of dims.
fn product<'a>(dims: impl IntoIterator<Item = &'a Dim>) -> Result<Dim, OpError> {
    dims.into_iter().try_fold(k(1), |acc, d| acc.mul(d)).ok()
}

impl Args {
    fn get(&self, name: &str) -> Result<&ArgValue, OpError> {
        self.values.get(name).ok_or_else(|| error(format!("missing argument `{name}`")))
    }

    /// The tensor argument `name`.
    pub fn tensor(&self, name: &str) -> Result<&TensorType, OpError> {
        match self.get(name)? {
            ArgValue::Tensor(t) => Ok(t),
            _ => Err(error(format!("`{name}` must be a tensor")).blame(name, "not a tensor")),
        }
    }

    fn tensors(&self, name: &str) -> Result<&[TensorType], OpError> {
        match self.get(name)? {
            ArgValue::Tensors(t) => Ok(t),
            _ => Err(error(format!("`{name}` must be a list of tensors")).blame(name, "not a list of tensors")),
        }
    }

    fn int(&self, name: &str) -> Result<Dim, OpError> {
        match self.get(name)? {
            ArgValue::Int(d) => Ok(d.clone()),
            _ => Err(error(format!("`{name}` must be an integer")).blame(name, "not an integer")),
        }
    }

    /// An integer that must be known (an axis, a count of outputs).
    fn known_int(&self, name: &str) -> Result<i128, OpError> {
        self.int(name)?.known().ok_or_else(|| {
            error(format!("`{name}` must be a known integer, not a symbolic one"))
                .blame(name, "depends on an unbound dimension")
        })
    }

    fn ints(&self, name: &str) -> Result<Vec<Dim>, OpError> {
        match self.get(name)? {
            ArgValue::Ints(d) => Ok(d.clone()),
            ArgValue::Int(d) => Ok(vec![d.clone()]),
            _ => Err(error(format!("`{name}` must be a list of integers")).blame(name, "not a list of integers")),
        }
    }

    fn bool(&self, name: &str) -> Result<bool, OpError> {
        match self.get(name)? {
            ArgValue::Bool(b) => Ok(*b),
            _ => Err(error(format!("`{name}` must be a bool")).blame(name, "not a bool")),
        }
    }

    fn float(&self, name: &str) -> Result<f64, OpError> {
        match self.get(name)? {
            ArgValue::Float(f) => Ok(*f),
            ArgValue::Int(Dim::Known(v)) => Ok(*v as f64),
            _ => Err(error(format!("`{name}` must be a number")).blame(name, "not a number")),
        }
    }

    fn str(&self, name: &str) -> Result<&str, OpError> {
        match self.get(name)? {
            ArgValue::Str(s) => Ok(s),
            _ => Err(error(format!("`{name}` must be a string")).blame(name, "not a string")),
        }
    }
}

/// Requires `value >= min` (when known).
fn at_least(args: &Args, name: &str, value: &Dim, min: i128) -> Result<(), OpError> {
    if let Some(v) = value.known()
        && v < min
    {
        return Err(error(format!("`{name}` must be at least {min}, found {v}")).blame(name, format!("{v} here")));
    }
    let _ = args;
    Ok(())
}

/// Requires the tensor `name` to have rank `ranks` (one of).
fn rank<'a>(args: &'a Args, name: &str, ranks: &[usize], what: &str) -> Result<&'a TensorType, OpError> {
    let t = args.tensor(name)?;
    if !ranks.contains(&t.rank()) {
        let expected: Vec<String> = ranks.iter().map(|r| r.to_string()).collect();
        return Err(error(format!("expected a {}-D tensor {what}, found {t}", expected.join(" or ")))
            .blame(name, format!("this is {t}")));
    }
    Ok(t)
}

/// Normalizes a possibly negative axis.
fn axis(args: &Args, name: &str, rank: usize) -> Result<usize, OpError> {
    let v = args.known_int(name)?;
    let r = rank as i128;
    let a = if v < 0 { v + r } else { v };
    if a < 0 || a >= r.max(1) {
        return Err(error(format!("dimension {v} is out of range for a {rank}-D tensor"))
            .blame(name, format!("valid: {} to {}", -r, r - 1)));
    }
    Ok(a as usize)
}

/// Applies `op` to `args`: the op's shape, parameter and MAC rule.
pub fn apply(op: Op, args: &Args) -> OpOutcome {
    use Op::*;
    match op {
        Conv1d => conv(args, 1),
        Conv2d => conv(args, 2),
        Conv3d => conv(args, 3),
        ConvTranspose2d => conv_transpose(args, 2),
        Linear => linear(args),
        Matmul => matmul(args.tensor("a")?, args.tensor("b")?),
        Bmm => bmm(args),
        Embedding => embedding(args),
        BatchNorm => batchnorm(args, &[4], "[N, C, H, W]"),
        BatchNorm1d => batchnorm(args, &[2, 3], "[N, C] or [N, C, L]"),
        LayerNorm => layernorm(args),
        GroupNorm => groupnorm(args),
        RmsNorm => rmsnorm(args),
        Relu | Relu6 | LeakyRelu | Gelu | Silu | Sigmoid | Tanh | Hardswish | Hardsigmoid | Dropout => {
            elementwise_unary(args)
        }
        Softmax | LogSoftmax => {
            let x = args.tensor("x")?;
            axis(args, "dim", x.rank())?;
            Ok(OpResult::one(x.clone()))
        }
        MaxPool2d => pool(args, true),
        AvgPool2d => pool(args, false),
        AdaptiveAvgPool2d | AdaptiveMaxPool2d => adaptive_pool(args),
        Flatten => flatten(args),
        Reshape => reshape(args),
        Permute => permute(args),
        Transpose => transpose(args),
        Concat => concat(args),
        Split => split(args),
        Slice => slice(args),
        Parameter => parameter(args),
        Add | Mul | Sub | Div => {
            let (a, b) = (args.tensor("a")?, args.tensor("b")?);
            let out = broadcast(a, b).map_err(|e| e.blame("a", format!("{a}")).blame("b", format!("{b}")))?;
            if args.bool("inplace").unwrap_or(false) && out.shape != a.shape {
                return Err(error(format!("in-place {op} would change the shape of `a` from {a} to {out}"))
                    .blame("a", format!("{a}")));
            }
            Ok(OpResult::one(out))
        }
        Upsample => upsample(args),
        Interpolate => interpolate(args),
        Attention => attention(args),
        Sdpa => sdpa(args),
        Lstm => recurrent(args, 4),
        Gru => recurrent(args, 3),
        CrossEntropy => cross_entropy(args),
        Mse => {
            let (p, t) = (args.tensor("prediction")?, args.tensor("target")?);
            broadcast(p, t).map_err(|e| e.blame("prediction", format!("{p}")).blame("target", format!("{t}")))?;
            Ok(OpResult::one(TensorType::new(p.dtype, Vec::new())))
        }
    }
}

/// The output size of a convolution or pooling window along one dimension:
/// `floor((L + 2p - d(k - 1) - 1) / s) + 1`, PyTorch's formula.
fn window_out(len: &Dim, k_: &Dim, stride: &Dim, pad: &Dim, dilation: &Dim) -> Option<Dim> {
    let span = dilation.mul(&k_.sub(&k(1))?)?.add(&k(1))?;
    len.add(&pad.mul(&k(2))?)?.sub(&span)?.floor_div(stride)?.add(&k(1))
}

fn conv(args: &Args, dims: usize) -> OpOutcome {
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

fn check_groups(in_channels: &Dim, out_channels: &Dim, groups: &Dim, x: &TensorType) -> Result<(), OpError> {
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

fn conv_transpose(args: &Args, dims: usize) -> OpOutcome {
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

fn linear(args: &Args) -> OpOutcome {
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
    let dtype = if a.dtype.is_float() { a.dtype } else { b.dtype };
    Ok(TensorType::new(dtype, shape))
}

/// `a @ b` with torch.matmul's rules (1-D operands, batch broadcasting).
pub fn matmul(a: &TensorType, b: &TensorType) -> OpOutcome {
    matmul_rule(a, b)
        .map_err(|e| if e.blame.is_empty() { e.blame("a", format!("{a}")).blame("b", format!("{b}")) } else { e })
}

fn matmul_rule(a: &TensorType, b: &TensorType) -> OpOutcome {
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

fn bmm(args: &Args) -> OpOutcome {
    let a = rank(args, "a", &[3], "[B, N, K] for bmm")?;
    let b = rank(args, "b", &[3], "[B, K, M] for bmm")?;
    if a.shape[0].certainly_differs(&b.shape[0]) {
        return Err(error(format!("bmm batch sizes differ: {a} and {b}"))
            .blame("a", format!("{a}"))
            .blame("b", format!("{b}")));
    }
    matmul(a, b).map_err(|e| e.blame("a", format!("{a}")).blame("b", format!("{b}")))
}

fn embedding(args: &Args) -> OpOutcome {
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

fn batchnorm(args: &Args, ranks: &[usize], layout: &str) -> OpOutcome {
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

fn last_dim(args: &Args, what: &str) -> Result<(TensorType, Dim), OpError> {
    let x = args.tensor("x")?;
    let d = x
        .shape
        .last()
        .cloned()
        .ok_or_else(|| error(format!("{what} needs at least a 1-D input")).blame("x", format!("{x}")))?;
    Ok((x.clone(), d))
}

fn layernorm(args: &Args) -> OpOutcome {
    let (x, d) = last_dim(args, "layernorm")?;
    let mut weights = Vec::new();
    if args.bool("affine")? {
        weights.push(Weight { name: "weight", numel: d.clone() });
        if args.bool("bias")? {
            weights.push(Weight { name: "bias", numel: d });
        }
    }
    Ok(OpResult { outputs: vec![x], weights, buffers: Vec::new(), macs: k(0) })
}

fn groupnorm(args: &Args) -> OpOutcome {
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

fn rmsnorm(args: &Args) -> OpOutcome {
    let (x, d) = last_dim(args, "rmsnorm")?;
    Ok(OpResult {
        outputs: vec![x],
        weights: vec![Weight { name: "weight", numel: d }],
        buffers: Vec::new(),
        macs: k(0),
    })
}

fn elementwise_unary(args: &Args) -> OpOutcome {
    let x = args.tensor("x")?;
    if let Ok(p) = args.float("p")
        && !(0.0..=1.0).contains(&p)
    {
        return Err(error(format!("dropout probability must be between 0 and 1, found {p}")).blame("p", "here"));
    }
    Ok(OpResult::one(x.clone()))
}

fn pool(args: &Args, max: bool) -> OpOutcome {
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

fn adaptive_pool(args: &Args) -> OpOutcome {
    let x = rank(args, "x", &[3, 4], "[N, C, H, W] for adaptive pooling")?;
    let size = args.int("size")?;
    at_least(args, "size", &size, 1)?;
    let mut shape = x.shape[..x.rank() - 2].to_vec();
    shape.extend([size.clone(), size]);
    Ok(OpResult::one(TensorType::new(x.dtype, shape)))
}

fn flatten(args: &Args) -> OpOutcome {
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

fn reshape(args: &Args) -> OpOutcome {
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

fn fmt_dims(dims: &[Dim]) -> String {
    let parts: Vec<String> = dims.iter().map(|d| d.to_string()).collect();
    format!("[{}]", parts.join(", "))
}

fn permute(args: &Args) -> OpOutcome {
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

fn transpose(args: &Args) -> OpOutcome {
    let x = args.tensor("x")?;
    let (a, b) = (axis(args, "a", x.rank())?, axis(args, "b", x.rank())?);
    let mut shape = x.shape.clone();
    shape.swap(a, b);
    Ok(OpResult::one(TensorType::new(x.dtype, shape)))
}

fn concat(args: &Args) -> OpOutcome {
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
                return Err(error(format!(
                    "concat along dimension {d} needs equal sizes elsewhere, but dimension {i} is {a} in {first} and {b} in {x}"
                ))
                .blame("xs", "here"));
            }
        }
        total = total.add(&x.shape[d]).ok()?;
    }
    let mut shape = first.shape.clone();
    shape[d] = total;
    Ok(OpResult::one(TensorType::new(first.dtype, shape)))
}

/// torch.chunk: `sections` pieces of ceil(L / sections), the last one smaller.
fn split(args: &Args) -> OpOutcome {
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

fn slice(args: &Args) -> OpOutcome {
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

/// A learned tensor: its own storage, created with the model.
fn parameter(args: &Args) -> OpOutcome {
    let shape = args.ints("shape")?;
    if let Some(bad) = shape.iter().find(|d| d.certainly_nonpositive()) {
        return Err(error(format!("a parameter's dimensions must be positive, found {bad}")).blame("shape", "here"));
    }
    let numel = product(&shape)?;
    Ok(OpResult {
        outputs: vec![TensorType::new(DType::F32, shape)],
        weights: vec![Weight { name: "weight", numel }],
        buffers: Vec::new(),
        macs: k(0),
    })
}

fn upsample(args: &Args) -> OpOutcome {
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

fn interpolate(args: &Args) -> OpOutcome {
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

/// nn.MultiheadAttention(dim, heads, batch_first=True) applied as self-attention.
fn attention(args: &Args) -> OpOutcome {
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

fn sdpa(args: &Args) -> OpOutcome {
    let q = args.tensor("q")?;
    let kk = args.tensor("k")?;
    let v = args.tensor("v")?;
    if q.rank() < 2 || q.rank() != kk.rank() || q.rank() != v.rank() {
        return Err(error(format!("sdpa needs q, k, v of equal rank of at least 2, found {q}, {kk}, {v}"))
            .blame("q", format!("{q}"))
            .blame("k", format!("{kk}"))
            .blame("v", format!("{v}")));
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
    // Batch and head dimensions must agree (broadcast) across q, k and v.
    for (name, t) in [("k", kk), ("v", v)] {
        for i in 0..r - 2 {
            let (a, b) = (&q.shape[i], &t.shape[i]);
            if a.certainly_differs(b) && *a != k(1) && *b != k(1) {
                return Err(error(format!("q and {name} differ in dimension {i}: {q} and {t}"))
                    .blame("q", format!("{q}"))
                    .blame(name, format!("{t}"))
                    .help("repeat the key/value heads to the query's (grouped-query attention)"));
            }
        }
    }
    let batch = product(&q.shape[..r - 2])?;
    let mut shape = q.shape.clone();
    shape[r - 1] = v.shape[r - 1].clone();
    // Q K^T and A V: B H Tq Tk (d + dv).
    let macs = batch.mul(tq).ok()?.mul(tk).ok()?.mul(&d.add(&v.shape[r - 1]).ok()?).ok()?;
    Ok(OpResult { outputs: vec![TensorType::new(q.dtype, shape)], weights: Vec::new(), buffers: Vec::new(), macs })
}

/// LSTM (4 gates) and GRU (3 gates), batch-first, as torch.nn.LSTM / torch.nn.GRU.
fn recurrent(args: &Args, gates: i128) -> OpOutcome {
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

fn cross_entropy(args: &Args) -> OpOutcome {
    let logits = args.tensor("logits")?;
    let target = args.tensor("target")?;
    if logits.rank() < 1 {
        return Err(error("cross_entropy needs logits of shape [N, C]").blame("logits", format!("{logits}")));
    }
    let expected_batch: Vec<Dim> = if logits.rank() == 1 {
        Vec::new()
    } else {
        std::iter::once(&logits.shape[0]).chain(&logits.shape[2..]).cloned().collect()
    };
    let class_indices = !target.dtype.is_float();
    let ok = if class_indices {
        target.rank() == expected_batch.len()
            && !target.shape.iter().zip(&expected_batch).any(|(a, b)| a.certainly_differs(b))
    } else {
        target.rank() == logits.rank() && !target.shape.iter().zip(&logits.shape).any(|(a, b)| a.certainly_differs(b))
    };
    if !ok {
        return Err(error(format!("cross_entropy of {logits} needs class indices of shape {} or probabilities like the logits, found {target}", fmt_dims(&expected_batch)))
            .blame("logits", format!("{logits}"))
            .blame("target", format!("{target}")));
    }
    Ok(OpResult::one(TensorType::new(logits.dtype, Vec::new())))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(shape: &[i128]) -> ArgValue {
        ArgValue::Tensor(Arc::new(TensorType::new(DType::F32, shape.iter().map(|&d| k(d)).collect())))
    }

    fn args(pairs: &[(&str, ArgValue)]) -> Args {
        Args { values: pairs.iter().map(|(n, v)| (*n, v.clone())).collect() }
    }

    fn conv2d(x: &[i128], out: i128, kernel: i128, stride: i128, pad: i128, groups: i128, bias: bool) -> OpResult {
        apply(
            Op::Conv2d,
            &args(&[
                ("x", t(x)),
                ("out_channels", ArgValue::Int(k(out))),
                ("k", ArgValue::Int(k(kernel))),
                ("stride", ArgValue::Int(k(stride))),
                ("pad", ArgValue::Int(k(pad))),
                ("dilation", ArgValue::Int(k(1))),
                ("groups", ArgValue::Int(k(groups))),
                ("bias", ArgValue::Bool(bias)),
            ]),
        )
        .unwrap()
    }

    #[test]
    fn conv_params_match_the_articles() {
        // DIGEST.md, article 000: 3x3 3->64: 1,728; 3x3 256->256: 589,824; 7x7 64->64: 200,704.
        assert_eq!(conv2d(&[1, 3, 224, 224], 64, 3, 1, 1, 1, false).params(), Some(k(1728)));
        assert_eq!(conv2d(&[1, 256, 56, 56], 256, 3, 1, 1, 1, false).params(), Some(k(589_824)));
        assert_eq!(conv2d(&[1, 64, 56, 56], 64, 7, 1, 3, 1, false).params(), Some(k(200_704)));
        // Article 001: 3x3 64->128 with bias: 73,856; depthwise-separable 576 + 8,192 = 8,768.
        let c = conv2d(&[1, 64, 224, 224], 128, 3, 2, 1, 1, true);
        assert_eq!(c.params(), Some(k(73_856)));
        assert_eq!(c.outputs[0].shape, vec![k(1), k(128), k(112), k(112)]);
        let dw = conv2d(&[1, 64, 56, 56], 64, 3, 1, 1, 64, false).params().unwrap();
        let pw = conv2d(&[1, 64, 56, 56], 128, 1, 1, 0, 1, false).params().unwrap();
        assert_eq!(dw.add(&pw), Some(k(8_768)));
    }

    #[test]
    fn pooling_uses_pytorch_ceil_mode_rule() {
        let pool = |len: i128, kernel: i128, stride: i128, pad: i128, ceil: bool| {
            let r = apply(
                Op::MaxPool2d,
                &args(&[
                    ("x", t(&[1, 1, len, len])),
                    ("k", ArgValue::Int(k(kernel))),
                    ("stride", ArgValue::Int(k(stride))),
                    ("pad", ArgValue::Int(k(pad))),
                    ("dilation", ArgValue::Int(k(1))),
                    ("ceil_mode", ArgValue::Bool(ceil)),
                ]),
            )
            .unwrap();
            r.outputs[0].shape[2].known().unwrap()
        };
        assert_eq!(pool(112, 3, 2, 1, false), 56); // ResNet stem
        assert_eq!(pool(55, 3, 2, 0, false), 27); // AlexNet
        assert_eq!(pool(112, 3, 2, 0, true), 56); // GoogLeNet-style ceil mode
        assert_eq!(pool(5, 2, 2, 0, true), 3);
    }

    #[test]
    fn broadcast_and_matmul() {
        let a = TensorType::new(DType::F32, vec![k(8), k(1), k(6)]);
        let b = TensorType::new(DType::F32, vec![k(7), k(1)]);
        assert_eq!(broadcast(&a, &b).unwrap().shape, vec![k(8), k(7), k(6)]);
        let bad = TensorType::new(DType::F32, vec![k(5)]);
        assert!(broadcast(&a, &bad).is_err());
        let q = TensorType::new(DType::F32, vec![k(2), k(12), k(512), k(64)]);
        let kt = TensorType::new(DType::F32, vec![k(2), k(12), k(64), k(512)]);
        let r = matmul(&q, &kt).unwrap();
        assert_eq!(r.outputs[0].shape, vec![k(2), k(12), k(512), k(512)]);
        assert_eq!(r.macs, k(2 * 12 * 512 * 64 * 512));
    }

    #[test]
    fn reshape_infers_one_dimension_and_checks_the_count() {
        let r =
            apply(Op::Reshape, &args(&[("x", t(&[2, 3, 4])), ("shape", ArgValue::Ints(vec![k(2), k(-1)]))])).unwrap();
        assert_eq!(r.outputs[0].shape, vec![k(2), k(12)]);
        let e = apply(Op::Reshape, &args(&[("x", t(&[2, 3, 4])), ("shape", ArgValue::Ints(vec![k(5), k(5)]))]))
            .unwrap_err();
        assert!(e.message.contains("changes the element count from 24 to 25"), "{}", e.message);
    }

    #[test]
    fn every_op_declared_in_the_stdlib_has_semantics() {
        let text = include_str!("../../../stdlib/std/nn.net");
        for line in text.lines() {
            if let Some(rest) = line.strip_prefix("op ") {
                let name = rest.split('(').next().unwrap();
                assert!(Op::from_name(name).is_some(), "op `{name}` has no semantics");
            }
        }
    }

    #[test]
    fn every_op_but_the_operators_is_declared_in_the_stdlib() {
        let text = include_str!("../../../stdlib/std/nn.net");
        for op in Op::ALL {
            let declared =
                text.lines().any(|l| l.strip_prefix("op ").is_some_and(|r| r.split('(').next() == Some(op.name())));
            assert_eq!(declared, !matches!(op, Op::Sub | Op::Div), "op `{op}`");
        }
    }
}
