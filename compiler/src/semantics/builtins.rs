//! The language's built-in functions: `min` and `max` over numbers and `len` of a list, as
//! Python's builtins, for the arithmetic a model's code does beside its operators
//! (`min(4, depth)`, `max(8, width // 4)`, `for i in 0..len(stages)`), and the marks of a
//! call: `checkpoint(call)`, an activation-checkpointing segment (`torch.utils.checkpoint`
//! around a module call), `frozen(call)`, frozen parameters (`requires_grad_(False)`),
//! `fp32(call)`, parameters kept in float32 whatever the precision (`module.float()`), and
//! `routed(call, k, of)`, one of `of` experts a token is routed to `k` of; and `listed(item,
//! items)`, whether a name is one of a comma-separated list (peft's `target_modules`).
//! Like Python's, they are found after every definition: a file's own item, an import or the
//! prelude of the same name shadows them.

/// A built-in function.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Builtin {
    /// `min(a, b, ...)` or `min(list)`: the smallest value.
    Min,
    /// `max(a, b, ...)` or `max(list)`: the largest value.
    Max,
    /// `len(list)`: how many elements a list has.
    Len,
    /// `checkpoint(f(x))`: the call is a checkpoint segment when the scenario sets
    /// `checkpoint`; its value is the call's.
    Checkpoint,
    /// `frozen(f(x))`: the parameters the call creates are frozen (`requires_grad_(False)`);
    /// its value is the call's. Like `checkpoint` and `fp32`, it takes an optional `when=`
    /// condition: the call is marked where it holds.
    Frozen,
    /// `fp32(f(x))`: the parameters the call creates are float32 whatever the precision
    /// policy (`module.float()` after `model.bfloat16()`, as peft keeps LoRA adapters); its
    /// value is the call's.
    Fp32,
    /// `no_autocast(f(x))`: the call runs outside autocast (`torch.autocast(enabled=False)`):
    /// its ops compute in their inputs' dtypes; its value is the call's.
    NoAutocast,
    /// `routed(f(x), k, of)`: the call is one of `of` alternatives (the experts of a mixture)
    /// of which a token runs `k`: `k / of` of the parameters it creates are active per token;
    /// its value is the call's.
    Routed,
    /// `past_seen_tokens()`: the tokens the run's KV cache holds before this forward pass
    /// (the scenario's `context`; 0 without a cache), as transformers'
    /// `past_key_values.get_seq_length()`.
    PastSeenTokens,
    /// Whether the forward pass is a step of `generate()` (a scenario with `new_tokens`).
    Generating,
    /// Whether the run checkpoints activations (a `train` scenario with `checkpoint`).
    Checkpointing,
    /// Whether the modules run in training mode (`self.training`): not under `eval`.
    Training,
    /// `autocast_dtype()`: the dtype autocast casts to in the run (`"f16"` or `"bf16"`), or
    /// `""` where autocast is off (`torch.get_autocast_dtype` where `torch.is_autocast_enabled()`).
    AutocastDtype,
    /// `ceil(x)`: the smallest integer at least `x` (Python's `math.ceil`).
    Ceil,
    /// `listed(item, items)`: whether the string `item` is one of the comma-separated
    /// `items` (Python's `item in items.split(",")`).
    Listed,
}

impl Builtin {
    /// Every built-in function.
    pub const ALL: [Builtin; 15] = [
        Builtin::Min,
        Builtin::Max,
        Builtin::Len,
        Builtin::Checkpoint,
        Builtin::Frozen,
        Builtin::Fp32,
        Builtin::NoAutocast,
        Builtin::Routed,
        Builtin::PastSeenTokens,
        Builtin::Generating,
        Builtin::Checkpointing,
        Builtin::Training,
        Builtin::AutocastDtype,
        Builtin::Ceil,
        Builtin::Listed,
    ];

    /// The built-in function called `name`, if any.
    pub fn from_name(name: &str) -> Option<Builtin> {
        Builtin::ALL.into_iter().find(|b| b.name() == name)
    }

    /// Its name in `.net` files.
    pub fn name(self) -> &'static str {
        match self {
            Builtin::Min => "min",
            Builtin::Max => "max",
            Builtin::Len => "len",
            Builtin::Checkpoint => "checkpoint",
            Builtin::Frozen => "frozen",
            Builtin::Fp32 => "fp32",
            Builtin::NoAutocast => "no_autocast",
            Builtin::Routed => "routed",
            Builtin::PastSeenTokens => "past_seen_tokens",
            Builtin::Generating => "generating",
            Builtin::Checkpointing => "checkpointing",
            Builtin::Training => "training",
            Builtin::AutocastDtype => "autocast_dtype",
            Builtin::Ceil => "ceil",
            Builtin::Listed => "listed",
        }
    }

    /// How it is called, for hovers and completion.
    pub fn signature(self) -> &'static str {
        match self {
            Builtin::Min => "min(a, b, ...) or min(list)",
            Builtin::Max => "max(a, b, ...) or max(list)",
            Builtin::Len => "len(list)",
            Builtin::Checkpoint => "checkpoint(block(x, ...), when=true)",
            Builtin::Frozen => "frozen(block(x, ...), when=true)",
            Builtin::Fp32 => "fp32(block(x, ...), when=true)",
            Builtin::NoAutocast => "no_autocast(block(x, ...), when=true)",
            Builtin::Routed => "routed(block(x, ...), k, of)",
            Builtin::PastSeenTokens => "past_seen_tokens()",
            Builtin::Generating => "generating()",
            Builtin::Checkpointing => "checkpointing()",
            Builtin::Training => "training()",
            Builtin::AutocastDtype => "autocast_dtype()",
            Builtin::Ceil => "ceil(x)",
            Builtin::Listed => "listed(item, items)",
        }
    }

    /// What it does, for hovers and completion.
    pub fn doc(self) -> &'static str {
        match self {
            Builtin::Min => {
                "The smallest of two or more numbers, or of a list of integers, as Python's `min`: an integer when every argument is one, else a float."
            }
            Builtin::Max => {
                "The largest of two or more numbers, or of a list of integers, as Python's `max`: an integer when every argument is one, else a float."
            }
            Builtin::Len => "The number of elements of a list (of integers or of tensors), as Python's `len`.",
            Builtin::Frozen => {
                "Freezes the parameters a call (of a block, an op or a `repeat`) creates, as `for p in module.parameters(): p.requires_grad_(False)`: in training they get no gradient and no optimizer state, and autograd keeps only what the gradients still computed need (nothing before the first trained layer). Its value is the call's. With `when=cond`, only where `cond` holds: `frozen(linear(h, vocab), when=lora_r > 0)` freezes the head under LoRA alone."
            }
            Builtin::Fp32 => {
                "Keeps the parameters a call (of a block, an op or a `repeat`) creates in float32 whatever the scenario's precision, as `module.float()` after `model.bfloat16()`: peft's LoRA adapters on a half base (`autocast_adapter_dtype=True`), transformers' `_keep_in_fp32_modules`. Their gradients and optimizer state are float32 too; the ops that read them need float32 inputs, as in PyTorch (cast with `to(x, \"f32\")`). Its value is the call's. With `when=cond`, only where `cond` holds."
            }
            Builtin::NoAutocast => {
                "Runs a call (of a block, an op or a `repeat`) outside autocast, as `with torch.autocast(device, enabled=False):` does: under `precision amp`/`amp_bf16` its ops compute in their inputs' dtypes, neither cast to half nor to float32 (transformers' Nemotron runs its layer norm so, on inputs it cast itself). Elsewhere it changes nothing. Its value is the call's. With `when=cond`, only where `cond` holds."
            }
            Builtin::AutocastDtype => {
                "The dtype autocast casts to in this run, `\"f16\"` under `precision amp` and `\"bf16\"` under `amp_bf16`, and `\"\"` where autocast is off (any other precision, or inside `no_autocast(...)`): `torch.get_autocast_dtype(device)` where `torch.is_autocast_enabled()`. A model that casts its own inputs under autocast (transformers' `_cast_if_autocast_enabled`) writes `if autocast_dtype() != \"\" { x = to(x, autocast_dtype()) }`."
            }
            Builtin::Routed => {
                "Marks a call (of a block, an op or a `repeat`) as one of `of` routed alternatives of which each token runs `k`, as one expert of a mixture of experts that are separate modules (DeepSpeed's `Experts`): `k / of` of the parameters it creates count as active per token, as \"active parameters\" are quoted. Memory and MACs are the call's as written. Its value is the call's."
            }
            Builtin::PastSeenTokens => {
                "The tokens the run's KV cache holds before this forward pass, as transformers' `past_key_values.get_seq_length()`: the scenario's `context` when it sets a `cache`, else 0. A model written from transformers makes its positions (`arange(S) + past_seen_tokens()`) and its masks' key/value lengths from it."
            }
            Builtin::Generating => {
                "Whether this forward pass is a step of `generate()` (the scenario sets `new_tokens`): true in its prefill and decode steps, false in any other run. transformers' `generate()` passes the model its own `position_ids` (`[N, S]`, which it holds), so a model written from transformers makes none of its own then, and its rotary tables are made per row."
            }
            Builtin::Ceil => {
                "The smallest integer at least `x`, as Python's `math.ceil`: an integer from a number (DeepSpeed's expert capacity, `ceil(tokens / experts * capacity_factor)`)."
            }
            Builtin::Listed => {
                "Whether the string `item` is one of the comma-separated `items` (surrounding spaces ignored), as Python's `item in [t.strip() for t in items.split(\",\")]`: how a model written from transformers decides which of its projections peft's `target_modules` (`lora_targets=\"q_proj,v_proj\"`) wraps, by the module's name."
            }
            Builtin::Checkpointing => {
                "Whether the run checkpoints activations (a `train` scenario that sets `checkpoint`): false in any other run. Under `gradient_checkpointing_enable()` a model with peft adapters has `enable_input_require_grads()` called on it (by transformers, by peft's `get_peft_model` and by `prepare_model_for_kbit_training`), so a model written from transformers marks its input embeddings' output `requires_grad(...)` then."
            }
            Builtin::Training => {
                "Whether the modules run in training mode, as a module's `self.training`: false in a scenario that sets `eval` (`model.eval()`), true otherwise (a `train` scenario, and an `infer` one without `eval`, as a module starts out). A model written from PyTorch branches on it where its code does (`if self.training:`), as Phi-3.5-MoE's router samples its experts only in training."
            }
            Builtin::Checkpoint => {
                "Marks a call (of a block, an op or a `repeat`) as an activation-checkpointing segment, as `torch.utils.checkpoint.checkpoint(module, x, use_reentrant=False)` or a layer of a Hugging Face model under `gradient_checkpointing_enable()`: when the scenario sets `checkpoint`, the segment keeps only its inputs in forward and runs again in backward. Its value is the call's. With `when=cond`, only where `cond` holds."
            }
        }
    }

    /// Whether it marks a call (`checkpoint`, `frozen`, `fp32`, `no_autocast`, `routed`) rather than
    /// computing a number.
    pub fn marks_a_call(self) -> bool {
        matches!(self, Builtin::Checkpoint | Builtin::Frozen | Builtin::Fp32 | Builtin::NoAutocast | Builtin::Routed)
    }

    /// Whether it takes a `when=` condition (`checkpoint`, `frozen`, `fp32`, `no_autocast`).
    pub fn takes_a_condition(self) -> bool {
        matches!(self, Builtin::Checkpoint | Builtin::Frozen | Builtin::Fp32 | Builtin::NoAutocast)
    }

    /// For `min` and `max`, whether the value kept so far, `a`, stays when `ordering` is `a`
    /// compared with the next value (Python keeps the first of equal values).
    pub fn keeps_first(self, ordering: std::cmp::Ordering) -> bool {
        match self {
            Builtin::Min => ordering != std::cmp::Ordering::Greater,
            Builtin::Max
            | Builtin::Len
            | Builtin::Checkpoint
            | Builtin::Frozen
            | Builtin::Fp32
            | Builtin::NoAutocast
            | Builtin::Routed
            | Builtin::PastSeenTokens
            | Builtin::Generating
            | Builtin::Checkpointing
            | Builtin::Training
            | Builtin::AutocastDtype
            | Builtin::Ceil
            | Builtin::Listed => ordering != std::cmp::Ordering::Less,
        }
    }
}
