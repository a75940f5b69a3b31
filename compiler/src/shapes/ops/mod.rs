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

mod dense;
pub mod einsum;
mod index;
mod layout;
mod math;
mod norm;
mod reduce;
mod sequence;
mod spatial;

use self::dense::*;
pub use self::dense::{broadcast, matmul};
use self::einsum::einsum;
use self::index::*;
use self::layout::*;
pub use self::layout::{CACHED_TOKENS, cache_length, cache_window, cached_tokens};
use self::math::*;
use self::norm::*;
use self::reduce::*;
pub use self::sequence::SDPA_BACKENDS;
use self::sequence::*;
use self::spatial::*;

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
    /// The rule needs an integer known where the argument is symbolic (a `split` count of
    /// `S`): not a mistake while dimensions are unbound; a scenario binds it.
    pub symbolic: bool,
}

type OpOutcome = Result<OpResult, OpError>;

fn error(message: impl Into<String>) -> OpError {
    OpError { message: message.into(), blame: Vec::new(), help: None, symbolic: false }
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
    pub(super) fn get(&self, name: &str) -> Result<&ArgValue, OpError> {
        self.values.get(name).ok_or_else(|| error(format!("missing argument `{name}`")))
    }

    /// An optional tensor argument (`tensor_or_float` whose 0.0, the default, is none: sdpa's
    /// `mask`, layer_norm's `weight` and `bias`): the tensor, or `None`; anything else is an
    /// error whose help says how to give none.
    pub(super) fn optional_tensor(&self, name: &str, what: &str) -> Result<Option<&TensorType>, OpError> {
        match self.values.get(name) {
            None => Ok(None),
            Some(ArgValue::Tensor(t)) => Ok(Some(t)),
            Some(ArgValue::Float(f)) if *f == 0.0 => Ok(None),
            Some(ArgValue::Int(d)) if *d == k(0) => Ok(None),
            Some(_) => Err(error(format!("{what} is a tensor"))
                .blame(name, "not a tensor")
                .help(format!("leave `{name}` out (or 0.0) for none"))),
        }
    }

    /// The tensor argument `name`.
    pub fn tensor(&self, name: &str) -> Result<&TensorType, OpError> {
        match self.get(name)? {
            ArgValue::Tensor(t) => Ok(t),
            _ => Err(error(format!("`{name}` must be a tensor")).blame(name, "not a tensor")),
        }
    }

    pub(super) fn tensors(&self, name: &str) -> Result<&[TensorType], OpError> {
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
        self.int(name)?.known().ok_or_else(|| OpError {
            symbolic: true,
            ..error(format!("`{name}` must be a known integer, not a symbolic one"))
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

    pub(super) fn str(&self, name: &str) -> Result<&str, OpError> {
        match self.get(name)? {
            ArgValue::Str(s) => Ok(s),
            _ => Err(error(format!("`{name}` must be a string")).blame(name, "not a string")),
        }
    }

    /// The dimensions of a tensor to make (`shape=[...]`): none negative.
    fn sizes(&self, name: &str) -> Result<Vec<Dim>, OpError> {
        let shape = self.ints(name)?;
        if let Some(bad) = shape.iter().filter_map(|d| d.known()).find(|&d| d < 0) {
            return Err(error(format!("a tensor's dimensions must not be negative, found {bad}")).blame(name, "here"));
        }
        Ok(shape)
    }

    /// The dtype named by `name`, or `like`'s when the name is empty (`new_zeros`,
    /// `full_like`: another tensor's dtype unless one is given).
    fn dtype_or(&self, name: &str, like: DType) -> Result<DType, OpError> {
        if self.str(name)?.is_empty() { Ok(like) } else { self.dtype(name) }
    }

    /// The tensor `name`, which must be floating-point (`what` is the error's message).
    fn float_tensor(&self, name: &str, what: &str) -> Result<&TensorType, OpError> {
        let x = self.tensor(name)?;
        if !x.dtype.is_float() {
            return Err(error(format!("{what}, found {x}")).blame(name, format!("{x}")));
        }
        Ok(x)
    }

    /// A dtype given by name (`dtype="i64"`).
    fn dtype(&self, name: &str) -> Result<DType, OpError> {
        let text = self.str(name)?;
        DType::from_name(text).ok_or_else(|| {
            error(format!("unknown dtype `{text}`")).blame(name, format!("one of {}", DType::NAMES.join(", ")))
        })
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
        Baddbmm => baddbmm(args),
        Embedding => embedding(args),
        BatchNorm => batchnorm(args, &[4], "[N, C, H, W]"),
        BatchNorm1d => batchnorm(args, &[2, 3], "[N, C] or [N, C, L]"),
        LayerNorm => layernorm(args),
        LayerNormWith => layer_norm_with(args),
        GroupNorm => groupnorm(args),
        RmsNorm => rmsnorm(args),
        Relu | Relu6 | LeakyRelu | Gelu | Silu | Sigmoid | Tanh | Hardswish | Hardsigmoid | Dropout => {
            elementwise_unary(args)
        }
        Softplus => {
            Ok(OpResult::one(args.float_tensor("x", "softplus is defined for floating-point tensors")?.clone()))
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
        KvCache => kv_cache(args),
        Split => split(args),
        SplitSizes => split_sizes(args),
        Slice => slice(args),
        Parameter => parameter(args),
        Buffer => buffer(args),
        Mean => reduce(args, Reduction::Mean),
        Sum => reduce(args, Reduction::Sum),
        Amax => reduce(args, Reduction::Amax),
        Logsumexp => reduce(args, Reduction::Logsumexp),
        Norm => reduce(args, Reduction::Norm),
        Tril | Triu => triangle(op, args),
        Pad => pad(args),
        Tile => tile(args),
        Cumsum => cumsum(args),
        Expand => expand(args),
        Select => select(args),
        Narrow => narrow(args),
        ViewAsComplex => view_as_complex(args),
        ViewAsReal => view_as_real(args),
        Polar => polar(args),
        DropPath => drop_path(args),
        MaskedFill => masked_fill(args),
        Where => where_(args),
        Lt | Le | Gt | Ge | Eq | Ne | BitwiseAnd | BitwiseOr | LogicalAnd | LogicalOr => compare(op, args),
        BitwiseNot | LogicalNot => negate_mask(op, args),
        Unsqueeze => unsqueeze(args),
        Squeeze => squeeze(args),
        NewZeros | NewOnes => new_filled(args),
        Exp | Expm1 | Log | Log1p | Sin | Cos | Sqrt | Rsqrt | Neg | Floor | Abs => elementwise_math(op, args),
        Minimum | Maximum => {
            let (a, b) = (args.tensor("a")?, args.tensor("b")?);
            let out = broadcast(a, b).map_err(|e| e.blame("a", format!("{a}")).blame("b", format!("{b}")))?;
            Ok(OpResult::one(out))
        }
        Pow => pow(args),
        Topk => topk(args),
        Sort => sort(args),
        Gather => gather(args),
        Index => index(args),
        IndexPut => index_put(args),
        EmptyLike => empty_like(args),
        Histc => histc(args),
        GroupedMm => grouped_mm(args),
        OneHot => one_hot(args),
        Arange => arange(args),
        Kernel => kernel(args),
        Contiguous | Clone | Detach => Ok(OpResult::one(args.tensor("x")?.clone())),
        RequiresGrad => {
            Ok(OpResult::one(args.float_tensor("x", "only floating-point tensors can require gradients")?.clone()))
        }
        Linear4bit => linear4bit(args),
        Linear8bit => linear8bit(args),
        LinearInt4 => linear_int4(args),
        Argmax => argmax(args),
        Any => any(args),
        Full => full(args),
        FullLike => full_like(args),
        Stack => stack(args),
        Scatter => scatter(args),
        IndexSelect => index_select(args),
        Clamp => {
            let x = args.float_tensor("x", "clamp is modelled for floating-point tensors")?;
            args.float("min")?;
            args.float("max")?;
            Ok(OpResult::one(x.clone()))
        }
        LinearFp8 => linear_fp8(args),
        Outer => outer(args),
        Einsum => einsum(args),
        To => Ok(OpResult::one(args.tensor("x")?.with_dtype(args.dtype("dtype")?))),
        TypeAs => Ok(OpResult::one(args.tensor("x")?.with_dtype(args.tensor("other")?.dtype))),
        Add | Mul | Sub | Div | FloorDivide => {
            let (a, b) = (args.tensor("a")?, args.tensor("b")?);
            let mut out = broadcast(a, b).map_err(|e| e.blame("a", format!("{a}")).blame("b", format!("{b}")))?;
            if op == Div && !out.dtype.is_float() && !out.dtype.is_complex() {
                // True division: integers (and bools) divide in the default float dtype.
                out = out.with_dtype(DType::F32);
            }
            if args.bool("inplace").unwrap_or(false) {
                if out.shape != a.shape {
                    return Err(error(format!("in-place {op} would change the shape of `a` from {a} to {out}"))
                        .blame("a", format!("{a}")));
                }
                // Written into `a`: its dtype, whatever the operands promote to.
                return Ok(OpResult::one(a.clone()));
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

fn elementwise_unary(args: &Args) -> OpOutcome {
    let x = args.tensor("x")?;
    if let Ok(p) = args.float("p")
        && !(0.0..=1.0).contains(&p)
    {
        return Err(error(format!("dropout probability must be between 0 and 1, found {p}")).blame("p", "here"));
    }
    Ok(OpResult::one(x.clone()))
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

    /// `baddbmm`: `bmm`'s shape and MACs; the added tensor broadcasts to the product (BLOOM's
    /// ALiBi `[B, 1, M]`) but may not grow it, and the batches must agree.
    #[test]
    fn baddbmm_adds_a_tensor_that_broadcasts_to_the_product() {
        let call = |x: &[i128], a: &[i128], b: &[i128]| {
            apply(Op::Baddbmm, &args(&[("x", t(x)), ("batch1", t(a)), ("batch2", t(b))]))
        };
        let r = call(&[64, 1, 512], &[64, 512, 64], &[64, 64, 512]).unwrap();
        assert_eq!(r.outputs[0].shape, vec![k(64), k(512), k(512)]);
        assert_eq!(r.macs, k(64 * 512 * 64 * 512));
        let grows = call(&[2, 64, 1, 512], &[64, 512, 64], &[64, 64, 512]).unwrap_err();
        assert!(grows.message.contains("would grow the product"), "{}", grows.message);
        let batches = call(&[1, 1, 512], &[64, 512, 64], &[32, 64, 512]).unwrap_err();
        assert!(batches.message.contains("baddbmm batch sizes differ"), "{}", batches.message);
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
            assert_eq!(declared, !matches!(op, Op::Sub), "op `{op}`");
        }
    }
}
