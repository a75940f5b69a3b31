//! The built-in ops as a type: the table of every op netc has semantics for, with its name
//! (as `stdlib/std/nn.net` declares it), its family (what lints and reports ask about) and
//! its autocast class (what `torch.autocast` does to it).
//!
//! A leaf module. What an op computes lives beside the layer that computes it, each an
//! exhaustive `match` over [`Op`]: the shape, parameter and MAC rule in
//! `shapes::ops::apply`, what it does to memory (views, what autograd saves, how gradients
//! flow) in `costs::autograd::memory`. Adding a variant here makes the compiler list both.

use crate::knobs::keyword_enum;

keyword_enum! {
    /// A built-in op. `sub` has no stdlib declaration: it is the operator `-` on tensors (and
    /// `+`, `*`, `/`, `//`, `@` are `add`, `mul`, `div`, `floor_divide`, `matmul`).
    pub enum Op {
        /// `nn.Conv1d`.
        Conv1d = "conv1d",
        /// `nn.Conv2d`.
        Conv2d = "conv2d",
        /// `nn.Conv3d`.
        Conv3d = "conv3d",
        /// `nn.ConvTranspose2d`.
        ConvTranspose2d = "conv_transpose2d",
        /// `nn.Linear`.
        Linear = "linear",
        /// bitsandbytes' `Linear4bit`: a linear layer whose weight is stored in 4 bits (NF4 or
        /// FP4, block scales, optionally double-quantized) and dequantized to multiply.
        Linear4bit = "linear4bit",
        /// bitsandbytes' `Linear8bitLt` (LLM.int8()): a linear layer whose weight is stored in
        /// int8 with a float32 scale a row, multiplied in int8 against a per-row int8 copy of
        /// the input.
        Linear8bit = "linear8bit",
        /// A GPTQ or AWQ linear layer (gptqmodel's `TorchLinear`, `AwqTorchLinear` and the GPU
        /// kernels that repack them): 4-bit weights packed in int32 with a float16 scale and a
        /// 4-bit zero point per group of input features.
        LinearInt4 = "linear_int4",
        /// transformers' `FP8Linear` (`FineGrainedFP8Config`): a float8 (e4m3) weight with a
        /// float32 scale per block (or per tensor), multiplied against a float8 copy of the
        /// input.
        LinearFp8 = "linear_fp8",
        /// `Tensor.requires_grad_()` on a tensor autograd did not record (a leaf), as
        /// transformers' `enable_input_require_grads()` does to the input embeddings' output.
        RequiresGrad = "requires_grad",
        /// `torch.argmax(x, dim)`.
        Argmax = "argmax",
        /// `torch.any(x, dim)`.
        Any = "any",
        /// `torch.full(shape, value)`.
        Full = "full",
        /// `torch.full_like(x, value)`.
        FullLike = "full_like",
        /// `torch.stack(xs, dim)`.
        Stack = "stack",
        /// `Tensor.scatter_(dim, index, src)` (integer tensors).
        Scatter = "scatter",
        /// `torch.index_select(x, dim, index)`.
        IndexSelect = "index_select",
        /// `torch.clamp(x, min=...)`.
        Clamp = "clamp",
        /// `torch.minimum(a, b)` (`torch.min` of two tensors).
        Minimum = "minimum",
        /// `torch.maximum(a, b)` (`torch.max` of two tensors).
        Maximum = "maximum",
        /// `torch.expm1`: `exp(x) - 1`.
        Expm1 = "expm1",
        /// `F.softplus`: `log(1 + exp(beta x)) / beta`, linear above `threshold`.
        Softplus = "softplus",
        /// `torch.logsumexp`: `log(sum(exp(x)))` over dimensions, computed stably.
        Logsumexp = "logsumexp",
        /// `torch.tile`, `Tensor.repeat`: the tensor tiled along each dimension.
        Tile = "tile",
        /// `torch.abs`.
        Abs = "abs",
        /// `torch.tril`: the lower triangle of the last two dimensions, the rest zeros.
        Tril = "tril",
        /// `torch.triu`: the upper triangle of the last two dimensions, the rest zeros.
        Triu = "triu",
        /// `F.pad` with a constant: the last dimensions padded (or cropped) at both ends.
        Pad = "pad",
        /// `torch.log1p`: `log(1 + x)`.
        Log1p = "log1p",
        /// `torch.linalg.vector_norm`, `Tensor.norm(p, dim)`: the p-norm over dimensions.
        Norm = "norm",
        /// `Tensor.detach()`: the same storage, outside autograd.
        Detach = "detach",
        /// `Tensor.unsqueeze(dim)`: a view with a dimension of size 1 inserted.
        Unsqueeze = "unsqueeze",
        /// `Tensor.squeeze(dim)`: a view without a dimension of size 1.
        Squeeze = "squeeze",
        /// `torch.bitwise_or`, `|` on tensors (the logical or of two masks).
        BitwiseOr = "bitwise_or",
        /// `torch.bitwise_not`, `~` on tensors (a mask inverted).
        BitwiseNot = "bitwise_not",
        /// `torch.logical_and`: whether both elements are nonzero, as bool.
        LogicalAnd = "logical_and",
        /// `torch.logical_or`: whether either element is nonzero, as bool.
        LogicalOr = "logical_or",
        /// `torch.logical_not`: whether the element is zero, as bool.
        LogicalNot = "logical_not",
        /// `torch.matmul` (`@`).
        Matmul = "matmul",
        /// `torch.bmm`.
        Bmm = "bmm",
        /// `torch.baddbmm(x, batch1, batch2, beta=, alpha=)`: `beta x + alpha (batch1 @ batch2)`.
        Baddbmm = "baddbmm",
        /// `torch.einsum` of one or two operands.
        Einsum = "einsum",
        /// `Tensor.to(dtype)` (`.float()`, `.half()`): a cast.
        To = "to",
        /// `Tensor.type_as(other)`, `x.to(other.dtype)`: a cast to another tensor's dtype.
        TypeAs = "type_as",
        /// `nn.Embedding`.
        Embedding = "embedding",
        /// `nn.BatchNorm2d`.
        BatchNorm = "batchnorm",
        /// `nn.BatchNorm1d`.
        BatchNorm1d = "batchnorm1d",
        /// `nn.LayerNorm`.
        LayerNorm = "layernorm",
        /// `F.layer_norm` with the weight and bias it is given (tensors made in the forward
        /// pass, as Nemotron's `weight + 1`): no parameters of its own.
        LayerNormWith = "layer_norm",
        /// `nn.GroupNorm`.
        GroupNorm = "groupnorm",
        /// `nn.RMSNorm`.
        RmsNorm = "rmsnorm",
        /// `nn.ReLU`.
        Relu = "relu",
        /// `nn.ReLU6`.
        Relu6 = "relu6",
        /// `nn.LeakyReLU`.
        LeakyRelu = "leaky_relu",
        /// `nn.GELU`.
        Gelu = "gelu",
        /// `nn.SiLU`.
        Silu = "silu",
        /// `nn.Sigmoid`.
        Sigmoid = "sigmoid",
        /// `nn.Tanh`.
        Tanh = "tanh",
        /// `nn.Hardswish`.
        Hardswish = "hardswish",
        /// `nn.Hardsigmoid`.
        Hardsigmoid = "hardsigmoid",
        /// `nn.Dropout`.
        Dropout = "dropout",
        /// `nn.Softmax`.
        Softmax = "softmax",
        /// `nn.LogSoftmax`.
        LogSoftmax = "log_softmax",
        /// `nn.MaxPool2d`.
        MaxPool2d = "maxpool2d",
        /// `nn.AvgPool2d`.
        AvgPool2d = "avgpool2d",
        /// `nn.AdaptiveAvgPool2d`.
        AdaptiveAvgPool2d = "adaptive_avgpool2d",
        /// `nn.AdaptiveMaxPool2d`.
        AdaptiveMaxPool2d = "adaptive_maxpool2d",
        /// `torch.flatten`.
        Flatten = "flatten",
        /// `Tensor.reshape`.
        Reshape = "reshape",
        /// `Tensor.permute`.
        Permute = "permute",
        /// `Tensor.transpose`.
        Transpose = "transpose",
        /// `torch.cat`.
        Concat = "concat",
        /// One of transformers' `Cache.update` appends (`torch.cat([self.keys, key_states],
        /// dim=-2)`): the layer's cache with `x` appended, or `x` when the run has no cache.
        KvCache = "kv_cache",
        /// `torch.split`.
        Split = "split",
        /// `torch.split` with a list of sizes (`split_with_sizes`).
        SplitSizes = "split_sizes",
        /// Slicing along one dimension.
        Slice = "slice",
        /// `nn.Parameter`.
        Parameter = "parameter",
        /// `Module.register_buffer`.
        Buffer = "buffer",
        /// `Tensor.mean` over dimensions.
        Mean = "mean",
        /// `+` on tensors.
        Add = "add",
        /// `*` on tensors.
        Mul = "mul",
        /// `-` on tensors.
        Sub = "sub",
        /// `/` on tensors.
        Div = "div",
        /// `nn.Upsample`.
        Upsample = "upsample",
        /// `F.interpolate`.
        Interpolate = "interpolate",
        /// `nn.MultiheadAttention`.
        Attention = "attention",
        /// `F.scaled_dot_product_attention`.
        Sdpa = "sdpa",
        /// `nn.LSTM`.
        Lstm = "lstm",
        /// `nn.GRU`.
        Gru = "gru",
        /// `nn.CrossEntropyLoss`.
        CrossEntropy = "cross_entropy",
        /// `nn.MSELoss`.
        Mse = "mse",
        /// `Tensor.sum` over dimensions.
        Sum = "sum",
        /// `Tensor.amax` over dimensions.
        Amax = "amax",
        /// `Tensor.cumsum` along a dimension.
        Cumsum = "cumsum",
        /// `Tensor.expand` (a view with stride-0 dimensions).
        Expand = "expand",
        /// `Tensor.select`, `x[:, i]` (a view).
        Select = "select",
        /// `Tensor.narrow` (a view).
        Narrow = "narrow",
        /// `torch.view_as_complex`: float pairs seen as complex numbers (a view).
        ViewAsComplex = "view_as_complex",
        /// `torch.view_as_real`: complex numbers seen as float pairs (a view).
        ViewAsReal = "view_as_real",
        /// `torch.polar(abs, angle)`: complex numbers from magnitudes and angles.
        Polar = "polar",
        /// torchvision's `stochastic_depth`, timm's `DropPath`.
        DropPath = "drop_path",
        /// `Tensor.masked_fill`.
        MaskedFill = "masked_fill",
        /// `torch.where`.
        Where = "where",
        /// `torch.exp`.
        Exp = "exp",
        /// `torch.log`.
        Log = "log",
        /// `torch.sin`.
        Sin = "sin",
        /// `torch.cos`.
        Cos = "cos",
        /// `torch.sqrt`.
        Sqrt = "sqrt",
        /// `torch.rsqrt`.
        Rsqrt = "rsqrt",
        /// `torch.neg`, unary `-`.
        Neg = "neg",
        /// `torch.floor`.
        Floor = "floor",
        /// `torch.pow` with a number exponent.
        Pow = "pow",
        /// `torch.topk`.
        Topk = "topk",
        /// `torch.gather`.
        Gather = "gather",
        /// `F.one_hot`.
        OneHot = "one_hot",
        /// `torch.sort`: the values in order and their int64 indices.
        Sort = "sort",
        /// `x[indices]` with one integer tensor (`aten.index`): rows of `x` picked by index.
        Index = "index",
        /// `x[indices] = values` (`Tensor.index_put_`, `torch.index_put`).
        IndexPut = "index_put",
        /// `torch.histc`: a histogram of equal-width bins.
        Histc = "histc",
        /// `torch.empty_like`: an uninitialized tensor of another's type.
        EmptyLike = "empty_like",
        /// `F.grouped_mm` (`torch._grouped_mm`): one matrix product per group of rows, each
        /// group with its own matrix of a stack.
        GroupedMm = "grouped_mm",
        /// `torch.floor_divide`, `//` on tensors.
        FloorDivide = "floor_divide",
        /// `torch.lt`, `<` on tensors.
        Lt = "lt",
        /// `torch.le`, `<=` on tensors.
        Le = "le",
        /// `torch.gt`, `>` on tensors.
        Gt = "gt",
        /// `torch.ge`, `>=` on tensors.
        Ge = "ge",
        /// `torch.eq`, `==` on tensors.
        Eq = "eq",
        /// `torch.ne`, `!=` on tensors.
        Ne = "ne",
        /// `torch.bitwise_and`, `&` on tensors (the logical and of two masks).
        BitwiseAnd = "bitwise_and",
        /// `Tensor.new_zeros`: zeros of a given shape in another tensor's dtype (or a given one).
        NewZeros = "new_zeros",
        /// `Tensor.new_ones`: ones of a given shape in another tensor's dtype (or a given one).
        NewOnes = "new_ones",
        /// `torch.arange`.
        Arange = "arange",
        /// `torch.outer`.
        Outer = "outer",
        /// `Tensor.contiguous`.
        Contiguous = "contiguous",
        /// `Tensor.clone`: a copy.
        Clone = "clone",
        /// A kernel the model declares by what it costs (a custom CUDA kernel, an op netc has
        /// no rule for): its output, parameters, MACs, saved inputs and workspace as given.
        Kernel = "kernel",
    }
}

/// What kind of op it is, for the lints and reports that ask about a kind rather than one op.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Family {
    /// Convolutions (they take a cuDNN workspace).
    Conv,
    /// A fully connected layer.
    Linear,
    /// Matrix products of two activations.
    Matmul,
    /// A lookup table.
    Embedding,
    /// Batch normalization: batch statistics in training mode, running ones in `eval()`.
    BatchNorm,
    /// Normalizations over features (layer, group, RMS).
    Norm,
    /// Pointwise activations.
    Activation,
    /// Dropout: active in training mode only.
    Dropout,
    /// Softmax and log-softmax.
    Softmax,
    /// Pooling.
    Pool,
    /// Views and copies that only rearrange elements (flatten, reshape, permute, transpose,
    /// concat, split, slice, expand, select, narrow, and the complex views of float pairs).
    Layout,
    /// A free-standing parameter or buffer: module state, not computed by the run.
    Parameter,
    /// Elementwise arithmetic between tensors, and choosing between them by a mask
    /// (`masked_fill`, `where`).
    Arithmetic,
    /// Elementwise comparisons and the logical operations on their masks: bool results,
    /// no gradient.
    Compare,
    /// Reductions over dimensions, scans along one (`cumsum`) and histograms (`histc`).
    Reduce,
    /// Elementwise math (exponentials, logarithms, trigonometry, powers, complex numbers from
    /// polar coordinates).
    Math,
    /// Selecting, ranking and encoding elements by index (`topk`, `sort`, `gather`,
    /// `index`, `index_put`, `one_hot`).
    Index,
    /// Tensors made from sizes alone (`arange`, `full`, `empty_like`, `full_like`, `new_zeros`,
    /// `new_ones`).
    Factory,
    /// Upsampling and interpolation.
    Resize,
    /// Attention over a sequence.
    Attention,
    /// Recurrent layers.
    Recurrent,
    /// Losses.
    Loss,
    /// A kernel declared by its costs (`kernel`).
    Declared,
}

/// What `torch.autocast` does to an op (PyTorch's autocast op lists for CUDA).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Autocast {
    /// Runs in the autocast dtype (float16 or bfloat16) on casts of its float32 inputs and
    /// weights: the lower-precision list (convolutions, matrix products, attention, RNNs).
    Half,
    /// Runs in float32: the float32 list (softmax, norms, losses).
    Float,
    /// Not listed: runs in the widest float type of its inputs (type promotion).
    Promote,
}

impl Op {
    /// The op's family.
    pub fn family(self) -> Family {
        use Op::*;
        match self {
            Conv1d | Conv2d | Conv3d | ConvTranspose2d => Family::Conv,
            Linear | Linear4bit | Linear8bit | LinearInt4 | LinearFp8 => Family::Linear,
            Matmul | Bmm | Baddbmm | Einsum | GroupedMm => Family::Matmul,
            Embedding => Family::Embedding,
            BatchNorm | BatchNorm1d => Family::BatchNorm,
            LayerNorm | LayerNormWith | GroupNorm | RmsNorm => Family::Norm,
            Relu | Relu6 | LeakyRelu | Gelu | Silu | Sigmoid | Tanh | Hardswish | Hardsigmoid | Softplus => {
                Family::Activation
            }
            Dropout | DropPath => Family::Dropout,
            Softmax | LogSoftmax => Family::Softmax,
            MaxPool2d | AvgPool2d | AdaptiveAvgPool2d | AdaptiveMaxPool2d => Family::Pool,
            Flatten | Reshape | Permute | Transpose | Concat | KvCache | Split | SplitSizes | Slice | Expand
            | Select | Narrow | Contiguous | Clone | RequiresGrad | Stack | ViewAsComplex | ViewAsReal | Tile
            | Unsqueeze | Squeeze | Detach | Pad | Tril | Triu => Family::Layout,
            Parameter | Buffer => Family::Parameter,
            Add | Mul | Sub | Div | FloorDivide | MaskedFill | Where | Outer | Minimum | Maximum => Family::Arithmetic,
            Lt | Le | Gt | Ge | Eq | Ne | BitwiseAnd | BitwiseOr | BitwiseNot | LogicalAnd | LogicalOr | LogicalNot => {
                Family::Compare
            }
            Mean | Sum | Amax | Cumsum | Histc | Any | Logsumexp | Norm => Family::Reduce,
            Exp | Expm1 | Log | Log1p | Sin | Cos | Sqrt | Rsqrt | Neg | Floor | Abs | Pow | To | TypeAs | Clamp
            | Polar => Family::Math,
            Topk | Sort | Gather | Index | IndexPut | OneHot | Argmax | Scatter | IndexSelect => Family::Index,
            Arange | EmptyLike | NewZeros | NewOnes | Full | FullLike => Family::Factory,
            Kernel => Family::Declared,
            Upsample | Interpolate => Family::Resize,
            Attention | Sdpa => Family::Attention,
            Lstm | Gru => Family::Recurrent,
            CrossEntropy | Mse => Family::Loss,
        }
    }

    /// Whether the op stores its weight quantized (bitsandbytes' 4-bit and 8-bit layers, GPTQ,
    /// AWQ and float8 ones):
    /// the weight is never trained and its storage is the format's, not the precision
    /// policy's.
    pub fn quantizes_weight(self) -> bool {
        matches!(self, Op::Linear4bit | Op::Linear8bit | Op::LinearInt4 | Op::LinearFp8)
    }

    /// Whether the module keeps its weights as buffers rather than parameters: gptqmodel's and
    /// AWQ's layers (`linear_int4`) register their packed weights, scales, zeros and bias with
    /// `register_buffer`, so PyTorch lists them among `model.buffers()` (bitsandbytes' and FP8
    /// weights are `nn.Parameter`s).
    pub fn weights_are_buffers(self) -> bool {
        matches!(self, Op::LinearInt4)
    }

    /// Whether autocast casts the op's half inputs to float32 before running it (its `fp32`
    /// policy: a float32 copy per input, which the op saves when it saves that input), rather
    /// than letting the kernel compute in float32 from them (`fp32_set_opt_dtype`: softmax,
    /// log_softmax, sum, cumsum; cross_entropy runs log_softmax first). Only float-class ops.
    pub fn autocast_casts_inputs(self) -> bool {
        use Op::*;
        matches!(
            self,
            LayerNorm
                | LayerNormWith
                | GroupNorm
                | RmsNorm
                | Mse
                | Exp
                | Expm1
                | Log
                | Rsqrt
                | Pow
                | Softplus
                | Logsumexp
                | Log1p
                | Norm
        )
    }

    /// The op's autocast class.
    pub fn autocast(self) -> Autocast {
        use Op::*;
        match self {
            Conv1d | Conv2d | Conv3d | ConvTranspose2d | Linear | Linear4bit | Matmul | Bmm | Baddbmm | Einsum
            | Sdpa | Attention | Lstm | Gru => Autocast::Half,
            Softmax | LogSoftmax | LayerNorm | LayerNormWith | GroupNorm | RmsNorm | CrossEntropy | Mse | Sum
            | Cumsum | Exp | Expm1 | Log | Rsqrt | Pow | Softplus | Logsumexp | Log1p | Norm => Autocast::Float,
            Embedding | BatchNorm | BatchNorm1d | Relu | Relu6 | LeakyRelu | Gelu | Silu | Sigmoid | Tanh
            | Hardswish | Hardsigmoid | Dropout | MaxPool2d | AvgPool2d | AdaptiveAvgPool2d | AdaptiveMaxPool2d
            | Flatten | Reshape | Permute | Transpose | Concat | KvCache | Split | SplitSizes | Slice | Parameter
            | Buffer | Add | Mul | Sub | Div | Upsample | Interpolate | Mean | Amax | Expand | Select | Narrow
            | DropPath | MaskedFill | Where | Sin | Cos | Sqrt | Neg | Floor | Topk | Gather | OneHot | Arange
            | Contiguous | Kernel | Outer | To | TypeAs | Sort | Index | IndexPut | Histc | EmptyLike | FloorDivide
            | Lt | Le | Gt | Ge | Eq | Ne | BitwiseAnd | NewZeros | NewOnes | RequiresGrad | Argmax | Any | Full
            | FullLike | Stack | Scatter | IndexSelect | Clamp | Minimum | Maximum | Tile | Abs | Unsqueeze
            | Squeeze | BitwiseOr | BitwiseNot | LogicalAnd | LogicalOr | LogicalNot | Detach | Pad | Tril | Triu => {
                Autocast::Promote
            }
            // Autocast leaves complex tensors alone.
            ViewAsComplex | ViewAsReal | Polar => Autocast::Promote,
            // Not on autocast's lists (transformers casts the input to the weights' dtype
            // itself): it runs in its operands' dtype.
            GroupedMm | Clone => Autocast::Promote,
            // Custom autograd functions and kernels autocast does not see (bitsandbytes'
            // `MatMul8bitLt`, gptqmodel's kernels, transformers' `FP8LinearFunction`): they
            // take the input as it comes and return its dtype.
            Linear8bit | LinearInt4 | LinearFp8 => Autocast::Promote,
        }
    }
}
