//! The scenario vocabulary as types: precision policies, optimizers, convolution algorithms
//! and device presets. A leaf module: the checks validate a scenario's words against these
//! enums, completion lists them, and the cost model matches on them, so a new value is added
//! here once and the compiler lists every place that must handle it.

/// Declares a `Copy` enum whose variants are written as keywords in `.net` files: its
/// `ALL` variants in declaration order, `name` and `from_name`, and `Display` as the name.
macro_rules! keyword_enum {
    (
        $(#[$meta:meta])*
        pub enum $enum:ident {
            $( $(#[$variant_meta:meta])* $variant:ident = $name:literal, )*
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum $enum {
            $( $(#[$variant_meta])* $variant, )*
        }

        impl $enum {
            /// Every value, in declaration order (the order documentation and completion show).
            pub const ALL: &'static [$enum] = &[$($enum::$variant),*];
            /// Every value's name, in the order of `ALL`.
            pub const NAMES: &'static [&'static str] = &[$($name),*];

            /// The name written in a `.net` file.
            pub const fn name(self) -> &'static str {
                match self {
                    $($enum::$variant => $name,)*
                }
            }

            /// The value written `name`, if there is one.
            pub fn from_name(name: &str) -> Option<Self> {
                match name {
                    $($name => Some($enum::$variant),)*
                    _ => None,
                }
            }
        }

        impl std::fmt::Display for $enum {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.name())
            }
        }
    };
}
pub(crate) use keyword_enum;

keyword_enum! {
    /// Precision policies (`precision ...`).
    pub enum Precision {
        /// Everything in float32.
        Fp32 = "fp32",
        /// Everything (parameters, activations, gradients, optimizer state) in float16.
        Fp16 = "fp16",
        /// Everything in bfloat16.
        Bf16 = "bf16",
        /// Automatic mixed precision: float32 parameters, gradients and optimizer state;
        /// convolutions, linear layers and matrix products run in float16 on float16 copies.
        Amp = "amp",
        /// As `Amp`, in bfloat16.
        AmpBf16 = "amp_bf16",
        /// Weights stored in int8 and dequantized per op; activations in float32.
        Int8 = "int8",
    }
}

impl Precision {
    /// Whether autocast runs (the mixed policies).
    pub fn mixed(self) -> bool {
        matches!(self, Precision::Amp | Precision::AmpBf16)
    }

    /// Bytes per parameter element as stored.
    pub fn param_bytes(self) -> i128 {
        match self {
            Precision::Fp16 | Precision::Bf16 => 2,
            Precision::Int8 => 1,
            Precision::Fp32 | Precision::Amp | Precision::AmpBf16 => 4,
        }
    }

    /// Bytes per gradient and optimizer-state element.
    pub fn state_bytes(self) -> i128 {
        match self {
            Precision::Fp16 | Precision::Bf16 => 2,
            Precision::Fp32 | Precision::Amp | Precision::AmpBf16 | Precision::Int8 => 4,
        }
    }
}

keyword_enum! {
    /// The optimizers (`optimizer ...`), each with its own state per parameter element.
    pub enum Optimizer {
        /// Plain SGD: no state.
        Sgd = "sgd",
        /// SGD with momentum: one buffer.
        Momentum = "momentum",
        /// Adam: two moments.
        Adam = "adam",
        /// AdamW: as Adam.
        AdamW = "adamw",
        /// Adagrad: one sum.
        Adagrad = "adagrad",
        /// RMSprop: one square average.
        RmsProp = "rmsprop",
        /// Adafactor: factored second moments.
        Adafactor = "adafactor",
        /// 8-bit Adam (bitsandbytes `Adam8bit`, `AdamW8bit`): one-byte moments with block scales.
        Adam8bit = "adam8bit",
        /// bitsandbytes' paged 8-bit Adam (`PagedAdam8bit`, `PagedAdamW8bit`, transformers'
        /// `optim="paged_adamw_8bit"`): 8-bit Adam's state, the moments of large tensors in
        /// CUDA unified memory.
        PagedAdam8bit = "paged_adam8bit",
        /// bitsandbytes' paged 32-bit Adam (`PagedAdam`, `PagedAdamW`, `PagedAdamW32bit`,
        /// `optim="paged_adamw_32bit"`): float32 moments, those of large tensors in CUDA
        /// unified memory, updated by one fused kernel.
        PagedAdam32bit = "paged_adam32bit",
    }
}

impl Optimizer {
    /// Whether the optimizer is one of bitsandbytes' paged ones.
    pub fn paged(self) -> bool {
        matches!(self, Optimizer::PagedAdam8bit | Optimizer::PagedAdam32bit)
    }

    /// Whether the optimizer keeps bitsandbytes' 8-bit Adam state.
    pub fn eight_bit(self) -> bool {
        matches!(self, Optimizer::Adam8bit | Optimizer::PagedAdam8bit)
    }
}

keyword_enum! {
    /// The loss a training step computes from the model's output (`loss ...`).
    pub enum Loss {
        /// `F.cross_entropy(output, labels)` in the output's dtype, with the labels a separate
        /// integer input (one class per position).
        CrossEntropy = "cross_entropy",
        /// transformers' causal-LM loss, as `model(input_ids, labels=input_ids)` computes it
        /// (`ForCausalLMLoss`): the labels are the input ids, padded and shifted by one
        /// position (a copy, which `nll_loss` keeps), and the logits are upcast to float32
        /// before `cross_entropy` (a copy that lives until the loss returns).
        CausalLm = "causal_lm",
    }
}

keyword_enum! {
    /// The key/value cache an inference scenario runs with (`cache ...`): what a
    /// `kv_cache(...)` call of the model does.
    pub enum CacheKind {
        /// transformers' `DynamicCache` (`use_cache=True`, what `generate()` makes): each layer
        /// holds its keys and its values, and every step appends to them with `torch.cat`,
        /// which copies the cache into a new tensor and frees the old one.
        Dynamic = "dynamic",
        /// vLLM's paged cache: blocks of `cache_block` tokens allocated before the step for
        /// each sequence's whole context, written in place (`reshape_and_cache`); attention
        /// reads the blocks where they are.
        Paged = "paged",
    }
}

keyword_enum! {
    /// The dtype a paged cache stores its keys and values in (`cache_dtype ...`).
    pub enum CacheDtype {
        /// The keys' and values' own dtype (the model's).
        Auto = "auto",
        /// vLLM's `kv_cache_dtype="fp8"` (`float8_e4m3fn`, one byte an element, scaled per
        /// tensor); its attention kernels read the blocks in fp8 and convert in registers.
        Fp8 = "fp8",
    }
}

impl CacheDtype {
    /// Bytes per element, if not the keys' own.
    pub fn element_bytes(self) -> Option<i128> {
        match self {
            CacheDtype::Auto => None,
            CacheDtype::Fp8 => Some(1),
        }
    }
}

keyword_enum! {
    /// Convolution algorithms (`conv_algorithm ...`): what workspace a convolution needs.
    pub enum ConvAlgorithm {
        /// The library picks (as `direct` for the workspace).
        Auto = "auto",
        /// Direct convolution: no workspace.
        Direct = "direct",
        /// im2col: the unfolded input of one sample.
        Im2col = "im2col",
        /// Winograd: transformed tiles.
        Winograd = "winograd",
        /// FFT: padded transforms of input and filters.
        Fft = "fft",
    }
}

keyword_enum! {
    /// Device presets (`device ...`); their capacities and behaviours are the cost model's
    /// (`costs::devices`). Variants are spelled as the names, which carry memory sizes.
    #[allow(non_camel_case_types)]
    pub enum DeviceModel {
        /// The host CPU.
        Cpu = "cpu",
        /// NVIDIA A100 40 GB.
        A100_40gb = "a100_40gb",
        /// NVIDIA A100 80 GB.
        A100_80gb = "a100_80gb",
        /// NVIDIA H100 80 GB.
        H100_80gb = "h100_80gb",
        /// NVIDIA H200.
        H200 = "h200",
        /// NVIDIA L4.
        L4 = "l4",
        /// NVIDIA T4.
        T4 = "t4",
        /// NVIDIA V100 16 GB.
        V100_16gb = "v100_16gb",
        /// NVIDIA V100 32 GB.
        V100_32gb = "v100_32gb",
        /// NVIDIA GeForce RTX 3090.
        Rtx3090 = "rtx3090",
        /// NVIDIA GeForce RTX 4090.
        Rtx4090 = "rtx4090",
        /// NVIDIA Jetson AGX Orin.
        JetsonOrin = "jetson_orin",
        /// NVIDIA Jetson Nano.
        JetsonNano = "jetson_nano",
        /// Apple M2 (MPS).
        AppleM2 = "apple_m2",
        /// Apple M3 (MPS).
        AppleM3 = "apple_m3",
    }
}
