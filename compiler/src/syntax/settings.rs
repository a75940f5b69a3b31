//! The catalogue of scenario settings: each key and the form its value takes.
//!
//! The parser needs the forms (a flag takes no value, `dim` takes `NAME = value`, ...), and
//! the semantic checks, the spec and completion need the keys; all read this one table.

/// The form a setting's value takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SettingForm {
    /// No value: `no_grad`.
    Flag,
    /// One value: `batch 64`.
    Value,
    /// `dim NAME = value`.
    Dim,
    /// Keyword arguments in parentheses: `dataloader(workers=8)`.
    Args,
}

/// One entry of the catalogue.
#[derive(Debug, Clone, Copy)]
pub struct SettingSpec {
    /// The keyword.
    pub key: &'static str,
    /// The form of its value.
    pub form: SettingForm,
    /// Which scenarios accept it: `None` for both, or `"train"` / `"infer"`.
    pub only: Option<&'static str>,
    /// What it sets, one line (shown by hover and completion).
    pub doc: &'static str,
}

const fn spec(key: &'static str, form: SettingForm, only: Option<&'static str>, doc: &'static str) -> SettingSpec {
    SettingSpec { key, form, only, doc }
}

use SettingForm::*;

/// Every scenario setting.
pub const SETTINGS: &[SettingSpec] = &[
    spec("model", Value, None, "the model run, called with its arguments: `model resnet18(classes=10)`"),
    spec("batch", Value, None, "the batch size, bound to the dimension `N`"),
    spec("seq", Value, None, "the sequence length, bound to the dimension `S`"),
    spec("dim", Dim, None, "binds any other symbolic dimension: `dim H = 512`"),
    spec("precision", Value, None, "fp32 (default), fp16, bf16, amp, amp_bf16 or int8 (int8 weights, fp32 compute)"),
    spec(
        "optimizer",
        Value,
        Some("train"),
        "sgd (default), momentum, adam, adamw, adagrad, rmsprop, adafactor, adam8bit, paged_adam8bit or paged_adam32bit (bitsandbytes'); options in parentheses: `adam(foreach=false)`",
    ),
    spec(
        "loss",
        Value,
        Some("train"),
        "cross_entropy (default: labels an input, in the output's dtype) or causal_lm (transformers' `labels=input_ids`: shifted labels, logits upcast to float32)",
    ),
    spec(
        "cache",
        Value,
        Some("infer"),
        "the key/value cache each `kv_cache(...)` call appends to: dynamic (transformers' `DynamicCache`, `use_cache=True`) or paged (vLLM's blocks)",
    ),
    spec(
        "context",
        Value,
        Some("infer"),
        "tokens already in the cache before this forward (a decode step of `seq` new tokens); none: a prefill",
    ),
    spec(
        "new_tokens",
        Value,
        Some("infer"),
        "`model.generate(ids, max_new_tokens=...)`: a prefill of the `seq`-token prompt, then a decode step a token; the peak is the largest step's",
    ),
    spec("cache_block", Value, Some("infer"), "tokens per block of a `paged` cache (16 unless set, as vLLM)"),
    spec(
        "cache_dtype",
        Value,
        Some("infer"),
        "auto (default: the keys' dtype) or fp8 (vLLM's `kv_cache_dtype=\"fp8\"`, one byte an element) for a `paged` cache",
    ),
    spec("no_grad", Flag, Some("infer"), "runs under `torch.no_grad()`: nothing is saved for backward"),
    spec("eval", Flag, Some("infer"), "runs in `model.eval()` mode: BatchNorm uses running stats, Dropout is off"),
    spec(
        "checkpoint",
        Flag,
        Some("train"),
        "activation checkpointing: each call marked `checkpoint(...)` is a segment, recomputed in backward (in a model that marks none, each block call in the model's body)",
    ),
    spec(
        "reentrant",
        Flag,
        Some("train"),
        "with `checkpoint`: torch's reentrant variant (`use_reentrant=True`, what peft's `prepare_model_for_kbit_training` enables by default): each segment saves its inputs and recomputes whole in its backward",
    ),
    spec(
        "prepare_kbit",
        Flag,
        Some("train"),
        "peft's `prepare_model_for_kbit_training`: every float parameter outside a quantized layer (the embedding, the norms, the head) cast to float32; its default checkpointing is `checkpoint reentrant`",
    ),
    spec(
        "grad_accum",
        Value,
        Some("train"),
        "gradient accumulation steps: the batch is split into this many micro-batches",
    ),
    spec("data_parallel", Value, Some("train"), "number of data-parallel devices D; figures are per device"),
    spec("zero", Value, Some("train"), "ZeRO stage 1, 2 or 3 over the data-parallel devices"),
    spec(
        "fsdp",
        Flag,
        Some("train"),
        "fully sharded data parallel (parameters, gradients and optimizer state sharded)",
    ),
    spec("device", Value, None, "the device preset: `cpu`, `a100_40gb`, `h100_80gb`, ..."),
    spec("overhead", Value, None, "runtime overhead to add, overriding the device preset's (`300 MiB`)"),
    spec(
        "dataloader",
        Args,
        None,
        "host-side data loading: `dataloader(workers=8, prefetch=2, sample=602 KB, pin_memory=true)`",
    ),
    spec("budget", Value, None, "the memory budget per device (`8 GiB`, `512 MiB`; MB and MiB differ)"),
    spec("margin", Value, None, "safety margin: predicted peak x margin must fit the budget (default 1.5)"),
    spec("host_budget", Value, None, "the host (CPU) memory budget for the dataloader"),
    spec(
        "cudnn_benchmark",
        Flag,
        None,
        "`torch.backends.cudnn.benchmark = True`: a workspace spike on the first iteration",
    ),
    spec("conv_algorithm", Value, None, "the convolution algorithm: auto (default), direct, im2col, winograd or fft"),
];

/// The catalogue entry of `key`, if it is a setting.
pub fn setting(key: &str) -> Option<&'static SettingSpec> {
    SETTINGS.iter().find(|s| s.key == key)
}
