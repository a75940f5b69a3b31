//! The accuracy driver: runs every calibration case (8 models x 6 scenarios x 2 batch sizes)
//! on a device preset and compares netc's simulation with the figures PyTorch measured in
//! that device's semantics. Shared by the accuracy tests (tests/it/memory.rs) and the accuracy
//! benchmark (tests/benches/accuracy.rs), which prints [`table`] and [`summary`].
//!
//! The fixtures are in tests/fixtures/calibration/ (see the README there): `memory.json` from
//! the calibration harness's results.json (CPU tensors), `memory_cuda.json` from its
//! results_cuda.json (fake CUDA tensors: a bool dropout mask, foreach optimizers by default,
//! and `peak_alloc512_bytes`, the peak with the caching allocator's 512-byte rounding). Both
//! are PyTorch 2.15.0, exact live storage bytes, fp32.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use netc::costs::scenario_costs;
use netc::diagnostics::{FileName, Severity};
use netc::host::{Database, file_diagnostics};
use netc::semantics::files::{ItemLoc, syntax_tree};
use netc::syntax::Item;
use serde_json::Value;

/// The CPU figures (results.json).
pub const CPU_FIXTURE: &str = include_str!("../../fixtures/calibration/memory.json");
/// The CUDA figures (results_cuda.json), with `peak_alloc512_bytes`.
pub const CUDA_FIXTURE: &str = include_str!("../../fixtures/calibration/memory_cuda.json");
/// The precision set's figures (results_precision.json: half models, autocast, bf16
/// training, accumulation, checkpointing), CUDA semantics, with `peak_alloc512_bytes`.
pub const PRECISION_FIXTURE: &str = include_str!("../../fixtures/calibration/memory_precision.json");

/// Autocast training with gradient accumulation (memory_amp_accum.json, measured by
/// measure_amp_accum.py with the harness's own code).
pub const AMP_ACCUM_FIXTURE: &str = include_str!("../../fixtures/calibration/memory_amp_accum.json");

/// The zoo set's CPU figures: the harness run for the torchvision models the zoo has, against
/// the zoo's own models.
pub const ZOO_CPU_FIXTURE: &str = include_str!("../../fixtures/calibration/memory_zoo.json");
/// The zoo set's CUDA figures (fake CUDA tensors), with `peak_alloc512_bytes`.
pub const ZOO_CUDA_FIXTURE: &str = include_str!("../../fixtures/calibration/memory_zoo_cuda.json");

/// Relative error of the peaks allowed.
pub const PEAK_BAR: f64 = 0.05;
/// Difference allowed in each category of the breakdown, as a fraction of the peak.
pub const CATEGORY_BAR: f64 = 0.10;

/// A measured model: its name in the fixture, the `.net` text that defines or imports it, and
/// the model its scenarios run.
pub type Model = (&'static str, &'static str, &'static str);

/// The calibration fixtures, written after the harness's models (tests/fixtures/calibration).
pub const CALIBRATION: &[Model] = &[
    ("simple_cnn", include_str!("../../fixtures/calibration/simple_cnn.net"), "simple_cnn"),
    ("simple_cnn_relu", include_str!("../../fixtures/calibration/simple_cnn_relu.net"), "simple_cnn_relu"),
    ("mlp", include_str!("../../fixtures/calibration/mlp.net"), "mlp"),
    ("resnet18", include_str!("../../fixtures/calibration/resnet18.net"), "resnet18"),
    ("vgg16", include_str!("../../fixtures/calibration/vgg16.net"), "vgg16"),
    ("mobilenet_v2", include_str!("../../fixtures/calibration/mobilenet_v2.net"), "mobilenet_v2"),
    ("alexnet", include_str!("../../fixtures/calibration/alexnet.net"), "alexnet"),
    ("gpt2_small", include_str!("../../fixtures/calibration/gpt2_small.net"), "gpt2_small"),
];

/// The zoo's own models (stdlib/std/models), run against the zoo set's figures: each is
/// written as its torchvision reference runs, and held to issue 16's bar.
pub const ZOO: &[Model] = &[
    ("densenet121", "use std.models.densenet\n", "densenet121"),
    ("resnet50", "use std.models.resnet\n", "resnet50"),
    ("vgg16", "use std.models.vgg\n", "vgg16"),
    ("alexnet", "use std.models.alexnet\n", "alexnet"),
    ("mobilenet_v2", "use std.models.mobilenet\n", "mobilenet_v2"),
    ("efficientnet_b0", "use std.models.efficientnet\n", "efficientnet_b0"),
    ("convnext_tiny", "use std.models.convnext\n", "convnext_tiny"),
    ("vit_b_16", "use std.models.vit\n", "vit_b_16"),
];

/// A measured scenario: its name in the fixture, `infer` or `train`, and its `.net` settings
/// (the device is added).
pub type Scenario = (&'static str, &'static str, &'static str);

/// The fp32 scenarios of memory.json and memory_cuda.json.
pub const SCENARIOS: &[Scenario] = &[
    ("infer_nograd", "infer", "no_grad  eval"),
    ("infer_grad_eval", "infer", "eval"),
    ("train_sgd", "train", "optimizer sgd"),
    ("train_sgd_momentum", "train", "optimizer momentum"),
    // The harness's `train_adam` is `torch.optim.Adam` with its defaults: the for-loop on
    // CPU, foreach on CUDA. netc's `adam` follows the device the same way.
    ("train_adam", "train", "optimizer adam"),
    ("train_adam_foreach", "train", "optimizer adam(foreach=true)"),
];

/// The precision set of memory_precision.json (its README says what PyTorch ran for each).
pub const PRECISION_SCENARIOS: &[Scenario] = &[
    ("infer_nograd_fp16", "infer", "no_grad  eval  precision fp16"),
    ("infer_nograd_bf16", "infer", "no_grad  eval  precision bf16"),
    ("infer_nograd_amp", "infer", "no_grad  eval  precision amp"),
    ("train_adam_amp", "train", "optimizer adam  precision amp"),
    ("train_adam_amp_bf16", "train", "optimizer adam  precision amp_bf16"),
    ("train_adam_bf16", "train", "optimizer adam  precision bf16"),
    ("train_adam_accum2", "train", "optimizer adam  grad_accum 2"),
    ("train_adam_ckpt", "train", "optimizer adam  checkpoint"),
];

/// The scenarios of memory_amp_accum.json.
pub const AMP_ACCUM_SCENARIOS: &[Scenario] = &[
    ("train_adam_amp_accum2", "train", "optimizer adam  precision amp  grad_accum 2"),
    ("train_adam_amp_bf16_accum2", "train", "optimizer adam  precision amp_bf16  grad_accum 2"),
];

/// The LLM set's figures (results_llm.json: Hugging Face transformers models, CUDA semantics).
pub const LLM_FIXTURE: &str = include_str!("../../fixtures/calibration/memory_llm.json");

/// More transformers families measured by the same harness (measure_llm.py with Gemma 2,
/// Phi-3 and Mistral configs added, and its `qwen_small`; see the fixture README).
pub const LLM_FAMILIES_FIXTURE: &str = include_str!("../../fixtures/calibration/memory_llm_families.json");

/// memory_llm_padded.json: the LLM set's `llama_small` with a left-padded batch (64 padding
/// tokens a row in its `attention_mask`), training, prefill and decode.
pub const LLM_PADDED_FIXTURE: &str = include_str!("../../fixtures/calibration/memory_llm_padded.json");

/// memory_llm_gpt_neox_lora.json: the families' `gpt_neox_small` under peft's LoRA on its
/// attention projections (`query_key_value` and `dense`), with and without checkpointing.
pub const LLM_GPT_NEOX_LORA_FIXTURE: &str = include_str!("../../fixtures/calibration/memory_llm_gpt_neox_lora.json");

/// The LoRA scenarios of memory_llm_gpt_neox_lora.json: the set's LoRA (r 16, alpha 32,
/// dropout 0.05) on GPT-NeoX's attention projections.
pub const GPT_NEOX_LORA_SCENARIOS: &[LlmScenario] = &[
    (
        "train_lora_bf16",
        "train",
        ", lora_r=16, lora_alpha=32, lora_dropout=0.05, lora_targets=\"query_key_value,dense\"",
        "batch {batch}  seq {seq}  precision bf16  optimizer adamw  loss causal_lm",
    ),
    (
        "train_lora_bf16_ckpt",
        "train",
        ", lora_r=16, lora_alpha=32, lora_dropout=0.05, lora_targets=\"query_key_value,dense\"",
        "batch {batch}  seq {seq}  precision bf16  optimizer adamw  loss causal_lm  checkpoint",
    ),
];

/// memory_llm_int8.json: the LLM set's `llama_small` with its decoder projections in LLM.int8()
/// (bitsandbytes 0.50's `Linear8bitLt`, `load_in_8bit`), measured by
/// tests/fixtures/calibration/measure_int8.py: prefill, decode, and peft's LoRA with and without
/// checkpointing.
pub const LLM_INT8_FIXTURE: &str = include_str!("../../fixtures/calibration/memory_llm_int8.json");
/// The checkpointed LoRA case of [`LLM_INT8_FIXTURE`] with `use_reentrant=True`
/// (measure_int8.py `--reentrant`).
pub const LLM_INT8_REENTRANT_FIXTURE: &str = include_str!("../../fixtures/calibration/memory_llm_int8_reentrant.json");

/// The int8 set's models: the zoo's Llama with `quant="int8"` at `llama_small`'s sizes, and at
/// `llama_wide`'s (a vocabulary of 256, a feed-forward width of 8192, 2 layers: the peaks fall
/// inside the 8-bit layers).
/// memory_llm_int4_train.json: peft's LoRA over the LLM set's `llama_small` (and `llama_wide`)
/// with its decoder projections GPTQ or AWQ 4-bit layers as gptqmodel 7.7 trains them on CUDA
/// (`TritonV2Linear`, `AwqGEMMLinear`), measured by
/// tests/fixtures/calibration/measure_int4_train.py, with and without checkpointing.
pub const LLM_INT4_TRAIN_FIXTURE: &str = include_str!("../../fixtures/calibration/memory_llm_int4_train.json");

/// The int4 training set's models: the zoo's Llama with `quant="gptq"` and `quant="awq"` at
/// `llama_small`'s and `llama_wide`'s sizes.
pub const LLM_INT4: &[LlmModel] = &[
    (
        "llama_small_gptq",
        "use std.models.llama\n",
        "llama(vocab=32000, d=2048, layers=8, heads=32, kv_heads=8, ffn=5632, quant=\"gptq\"",
    ),
    (
        "llama_small_awq",
        "use std.models.llama\n",
        "llama(vocab=32000, d=2048, layers=8, heads=32, kv_heads=8, ffn=5632, quant=\"awq\"",
    ),
    (
        "llama_wide_gptq",
        "use std.models.llama\n",
        "llama(vocab=256, d=2048, layers=2, heads=32, kv_heads=8, ffn=8192, quant=\"gptq\"",
    ),
    (
        "llama_wide_awq",
        "use std.models.llama\n",
        "llama(vocab=256, d=2048, layers=2, heads=32, kv_heads=8, ffn=8192, quant=\"awq\"",
    ),
];

pub const LLM_INT8: &[LlmModel] = &[
    (
        "llama_small",
        "use std.models.llama\n",
        "llama(vocab=32000, d=2048, layers=8, heads=32, kv_heads=8, ffn=5632, quant=\"int8\"",
    ),
    (
        "llama_wide",
        "use std.models.llama\n",
        "llama(vocab=256, d=2048, layers=2, heads=32, kv_heads=8, ffn=8192, quant=\"int8\"",
    ),
];

/// The padded set's model and the zoo call that builds it.
pub const LLM_PADDED: &[LlmModel] = &[(
    "llama_small",
    "use std.models.llama\n",
    "llama_padded(vocab=32000, d=2048, layers=8, heads=32, kv_heads=8, ffn=5632",
)];

/// The families of memory_llm_families.json and the zoo calls that build them.
pub const LLM_FAMILIES: &[LlmModel] = &[
    (
        "gemma2_small",
        "use std.models.gemma2\n",
        "gemma2(vocab=32000, d=1152, layers=4, heads=8, kv_heads=4, head_dim=128, ffn=4608, window=512, scaling=0.08838834764831845",
    ),
    (
        "qwen_small",
        "use std.models.qwen2\n",
        "qwen2(vocab=151936, d=1536, layers=8, heads=12, kv_heads=2, ffn=8960, tied=true",
    ),
    // Qwen3 0.6B's sizes with 8 of its 28 layers: a head size (128) that is not d / heads,
    // and RMS norms over the queries' and keys' heads.
    (
        "qwen3_small",
        "use std.models.qwen3\n",
        "qwen3(vocab=151936, d=1024, layers=8, heads=16, kv_heads=8, head_dim=128, ffn=3072, tied=true",
    ),
    // Pythia 410M's sizes with 8 of its 24 layers: a fused, biased projection chunked into
    // heads, a partial rotary embedding, LayerNorms, GELU, the parallel residual (no LoRA:
    // peft's q/k/v/o targets are no GPT-NeoX module).
    ("gpt_neox_small", "use std.models.gpt_neox\n", "gpt_neox(vocab=50304, d=1024, layers=8, heads=16, ffn=4096"),
    ("phi3_small", "use std.models.phi3\n", "phi3(vocab=32064, d=2048, layers=8, heads=32, kv_heads=8, ffn=5632"),
    (
        "mistral_small",
        "use std.models.mistral\n",
        "mistral(vocab=32768, d=2048, layers=8, heads=32, kv_heads=8, ffn=5632",
    ),
    // Mistral with a sliding window of 1,024 tokens (Mistral v0.1's kind of config): past the
    // window transformers passes SDPA a mask (keys and values repeated, the memory-efficient
    // kernel, the additive mask saved).
    (
        "mistral_swa_small",
        "use std.models.mistral\n",
        "mistral(vocab=32768, d=2048, layers=8, heads=32, kv_heads=8, ffn=5632, window=1024",
    ),
    // Gemma 3 1B's sizes with 6 of its 26 layers (five sliding-window layers of 512 tokens,
    // then a global one) and a vocabulary of 32,000: Gemma 2's sandwich norms, SDPA, RMS norms
    // over the queries' and keys' heads after the transpose, a rotary table per layer kind.
    (
        "gemma3_small",
        "use std.models.gemma3\n",
        "gemma3(vocab=32000, d=1152, layers=6, heads=4, kv_heads=1, head_dim=256, ffn=6912, window=512",
    ),
    // OLMo 2 1B's sizes with 8 of its 16 layers: norms after the attention and the MLP, RMS
    // norms over the whole query and key projections, float32 rotary tables.
    ("olmo2_small", "use std.models.olmo2\n", "olmo2(d=2048, layers=8, heads=16, kv_heads=16, ffn=8192"),
    // StableLM (3B-4E1T's kind) with 6 layers: LayerNorms with biases, a quarter of each head
    // rotated, both rotated parts held until the attention returns.
    (
        "stablelm_small",
        "use std.models.stablelm\n",
        "stablelm(vocab=32000, d=1024, layers=6, heads=16, kv_heads=16, ffn=2816",
    ),
    // Granite: Llama's layers tied to the embedding, with the embedding, each block's output
    // and the logits multiplied (divided) by the config's multipliers, each a tensor.
    (
        "granite_small",
        "use std.models.granite\n",
        "granite(vocab=32000, d=1024, layers=6, heads=16, kv_heads=4, ffn=2816, logits_scaling=8.0",
    ),
    // StarCoder2: Mistral's sliding window with LayerNorms, biased projections and a GELU MLP.
    (
        "starcoder2_small",
        "use std.models.starcoder2\n",
        "starcoder2(vocab=32000, d=1024, layers=6, heads=16, kv_heads=4, ffn=4096",
    ),
    // Phi (Phi-2's structure): one LayerNorm feeding the attention and the MLP in parallel,
    // a partial rotary embedding, `gelu_new` written out in Python, residual dropout 0.1.
    (
        "phi_small",
        "use std.models.phi\n",
        "phi(vocab=32000, d=1280, layers=6, heads=16, kv_heads=16, ffn=5120, rotary_factor=0.4, resid_pdrop=0.1",
    ),
    // GPT-J: Phi's parallel layer with unbiased attention projections and GPT-J's own rotary
    // embedding (a gathered float32 table, every two channels rotated before the transpose).
    (
        "gptj_small",
        "use std.models.gptj\n",
        "gptj(vocab=32000, d=1024, layers=6, heads=8, rotary=32, ffn=4096, positions=16384",
    ),
    // GPT-2 (transformers' GPT2LMHeadModel): `Conv1D` projections, the fused `c_attn` split
    // into views, learned positions, `gelu_new` in Python, embedding and residual dropout, a
    // head tied to the embedding; LoRA on `c_attn` ([`peft_targets`]).
    (
        "gpt2_small",
        "use std.models.gpt2\n",
        "gpt2_lm(vocab=32000, d=1024, layers=6, heads=16, ffn=4096, positions=16384",
    ),
    // MPT: ALiBi over `max_seq_len` keys in float32 (the scores promote), eager attention
    // under a bool mask, LayerNorms without biases, no biases.
    (
        "mpt_small",
        "use std.models.mpt\n",
        "mpt(vocab=32000, d=1024, layers=6, heads=16, max_seq_len=16384, softmax_scale=0.125",
    ),
    // Gemma (the first generation): Llama's attention with one key/value head of 256, Gemma 2's
    // float32 `1 + weight` RMS norms and tanh-GELU MLP, the embedding scaled by a buffer.
    (
        "gemma_small",
        "use std.models.gemma\n",
        "gemma(vocab=32000, d=1024, layers=6, heads=8, kv_heads=1, head_dim=256, ffn=4096",
    ),
    // OLMo (the first generation): Llama's layer with parameter-free float32 LayerNorms and
    // float32 rotary tables (OLMo 2's).
    ("olmo_small", "use std.models.olmo\n", "olmo(vocab=32000, d=1024, layers=6, heads=16, kv_heads=16, ffn=4096"),
    // Apertus: Llama's attention with RMS norms over the transposed query and key heads, and
    // an MLP of `up_proj`, xIELU in Python (softplus, expm1 of a minimum, where) and
    // `down_proj`.
    (
        "apertus_small",
        "use std.models.apertus\n",
        "apertus(vocab=32000, d=1024, layers=6, heads=16, kv_heads=4, ffn=4096",
    ),
    // OLMo 3: OLMo 2's layer with three sliding-window layers of four, a mask and a float32
    // rotary table per layer kind.
    (
        "olmo3_small",
        "use std.models.olmo3\n",
        "olmo3(vocab=32000, d=1024, layers=8, heads=16, kv_heads=16, ffn=2816, window=1024",
    ),
    // EXAONE 4.0: head norms after the transpose, three sliding-window layers of four rotated
    // and the fourth global without rotary embeddings, norms after the attention and the MLP.
    (
        "exaone4_small",
        "use std.models.exaone4\n",
        "exaone4(vocab=32000, d=1024, layers=8, heads=16, kv_heads=4, ffn=2816, window=1024",
    ),
    // OLMo with `clip_qkv` 8 (OLMo 7B April 2024's): each projection clamped in place, which
    // keeps autograd's copy of it made before the clamp.
    (
        "olmo_clip_small",
        "use std.models.olmo\n",
        "olmo(vocab=32000, d=1024, layers=6, heads=16, kv_heads=16, ffn=4096, clip_qkv=8.0",
    ),
    // Nemotron: Llama's attention on half-rotated heads, LayerNorm1P (`F.layer_norm` with
    // `weight + 1`, cast by the model and run outside autocast), a squared-ReLU MLP.
    (
        "nemotron_small",
        "use std.models.nemotron\n",
        "nemotron(vocab=32000, d=1024, layers=6, heads=16, kv_heads=4, ffn=4096",
    ),
    // GPT-BigCode: GPT-2's skeleton with multi-query attention split out of one `c_attn`
    // (SDPA over one key head with `enable_gqa`), tanh GELU and the `n_positions^2` bool
    // buffer; and its `multi_query=False` kind (every head its own keys and values).
    // GPT-Neo with 6 layers: eager attention on float32 queries and keys, unscaled, masked by
    // a per-layer `n_positions^2` bool buffer, the attention weights held past each block.
    (
        "gpt_neo_small",
        "use std.models.gpt_neo\n",
        "gpt_neo(vocab=32000, d=1024, layers=6, heads=16, ffn=4096, positions=16384",
    ),
    (
        "gpt_bigcode_small",
        "use std.models.gpt_bigcode\n",
        "gpt_bigcode(vocab=32000, d=1024, layers=6, heads=16, ffn=4096, positions=16384",
    ),
    (
        "gpt_bigcode_mha_small",
        "use std.models.gpt_bigcode\n",
        "gpt_bigcode(vocab=32000, d=1024, layers=6, heads=16, ffn=4096, positions=16384, multi_query=false",
    ),
    // OPT: learned positions read at a float32 mask's cumulative sum, scaled queries, a ReLU
    // MLP over flattened hidden states, dropout 0.1; pre-norm, and OPT-350m's kind (norms
    // after the residual sums, the embedding projected in and out).
    ("opt_small", "use std.models.opt\n", "opt(vocab=32000, d=1024, layers=6, heads=16, ffn=4096, positions=16384"),
    (
        "opt_350m_small",
        "use std.models.opt\n",
        "opt(vocab=32000, d=1024, layers=6, heads=16, ffn=4096, positions=16384, word_dim=512, pre_norm=false",
    ),
    // Falcon: its own attention code (SDPA called directly, the mask always made), parallel
    // attention and MLP; Falcon-7B's multi-query kind (math SDPA over one key head) and
    // Falcon-40B's new decoder architecture (grouped keys broadcast to every head).
    ("falcon_small", "use std.models.falcon\n", "falcon(vocab=32000, d=1024, layers=6, heads=16"),
    (
        "falcon_40b_small",
        "use std.models.falcon\n",
        "falcon(vocab=32000, d=1024, layers=6, heads=16, kv_heads=4, new_arch=true",
    ),
    // BLOOM: ALiBi added by `baddbmm`, eager attention with a float32 softmax, its own GELU
    // autograd function, a LayerNorm on the embeddings.
    ("bloom_small", "use std.models.bloom\n", "bloom(vocab=32000, d=1024, layers=6, heads=16"),
    // GPT-OSS: eager attention with a sink per head on alternating sliding-window layers,
    // experts with biases and a clamped gate, stored transposed.
    (
        "gpt_oss_small",
        "use std.models.gpt_oss\n",
        "gpt_oss(vocab=32000, d=1024, layers=4, heads=16, kv_heads=4, experts=8, top_k=2, ffn=1024",
    ),
    // OLMoE with 4 layers of 16 experts (4 a token): RMS norms over the whole query and key
    // projections, Qwen3-MoE's router without renormalization.
    (
        "olmoe_small",
        "use std.models.olmoe\n",
        "olmoe(vocab=32000, d=1024, layers=4, heads=16, kv_heads=16, experts=16, top_k=4, ffn=512",
    ),
    // DeepSeek-V3 with 4 layers (1 dense): multi-head latent attention caching the latent,
    // group-limited sigmoid routing in float32, a shared expert.
    (
        "deepseek_v3_small",
        "use std.models.deepseek_v3\n",
        "deepseek_v3(vocab=32000, d=1024, layers=4, dense_layers=1, heads=16, q_rank=384, kv_rank=256, nope=64, rope=32, v_dim=64, dense_ffn=2816, experts=16, top_k=4, ffn=512, n_group=4, topk_group=2",
    ),
    // DeepSeek-V2 with 4 layers (1 dense): rotary embeddings as complex numbers, latent
    // attention without a query rank, group-limited softmax routing in float32, 2 shared
    // experts.
    (
        "deepseek_v2_small",
        "use std.models.deepseek_v2\n",
        "deepseek_v2(vocab=32000, d=1024, layers=4, dense_layers=1, heads=16, q_rank=0, kv_rank=256, nope=64, rope=32, v_dim=64, dense_ffn=2816, experts=16, top_k=4, ffn=512, n_shared=2, n_group=4, topk_group=2, scaling=2.5",
    ),
    // GLM-4.5 with 4 layers (1 dense): biased q/k/v, per-head RMS norms, half of each head
    // rotated, DeepSeek-V3's router and experts.
    (
        "glm4_moe_small",
        "use std.models.glm4_moe\n",
        "glm4_moe(vocab=32000, d=1024, layers=4, dense_layers=1, heads=16, kv_heads=4, head_dim=128, qk_norm=true, dense_ffn=2816, experts=16, top_k=4, ffn=512, n_group=4, topk_group=2, scaling=2.5",
    ),
    // GLM-4 with 6 layers: biased q/k/v, half of each head rotated on interleaved pairs, a
    // fused gate-and-up projection; GLM-4-0414 adds a norm after the attention and the MLP.
    (
        "glm_small",
        "use std.models.glm\n",
        "glm(vocab=32000, d=1024, layers=6, heads=16, kv_heads=4, head_dim=64, ffn=2816",
    ),
    (
        "glm4_small",
        "use std.models.glm4\n",
        "glm4(vocab=32000, d=1024, layers=6, heads=16, kv_heads=4, head_dim=64, ffn=2816",
    ),
    // SmolLM3 with 8 layers: Llama's, every fourth layer without rotary embeddings (NoPE),
    // the head tied.
    (
        "smollm3_small",
        "use std.models.smollm3\n",
        "smollm3(vocab=32000, d=1024, layers=8, heads=16, kv_heads=4, ffn=2816",
    ),
    // ERNIE 4.5 with 6 layers: Llama's decoder with float32 rotary tables, interleaved and
    // applied in float32, the head tied.
    (
        "ernie4_5_small",
        "use std.models.ernie4_5\n",
        "ernie4_5(vocab=32000, d=1024, layers=6, heads=16, kv_heads=4, head_dim=64, ffn=2816",
    ),
    // Seed-OSS with 6 layers: Llama's decoder with biased q/k/v, heads of 128 (16 of them
    // over d 1024), dropout 0.1 on the attention's and the MLP's outputs.
    (
        "seed_oss_small",
        "use std.models.seed_oss\n",
        "seed_oss(vocab=32000, d=1024, layers=6, heads=16, kv_heads=4, head_dim=128, ffn=2816",
    ),
    // Helium with 6 layers: Llama's decoder with GLM's interleaved rotation over the whole
    // head and norms that cast their weight to float32.
    (
        "helium_small",
        "use std.models.helium\n",
        "helium(vocab=32000, d=1024, layers=6, heads=16, kv_heads=4, head_dim=64, ffn=2816",
    ),
    // AFM (Arcee) with 6 layers: Llama's decoder with Nemotron's ungated `relu2` MLP, YaRN
    // RoPE.
    (
        "arcee_small",
        "use std.models.arcee\n",
        "arcee(vocab=32000, d=1024, layers=6, heads=16, kv_heads=4, head_dim=64, ffn=4096",
    ),
    // Jais 2 with 6 layers: Llama's decoder with LayerNorms, every attention projection
    // biased, Nemotron's `relu2` MLP with biases.
    ("jais2_small", "use std.models.jais2\n", "jais2(vocab=32000, d=1024, layers=6, heads=16, kv_heads=4, ffn=4096"),
    // VaultGemma with 4 layers: Gemma 2 without the norms after the attention and the MLP
    // (eager, softcapped attention; alternating sliding-window and global layers).
    (
        "vaultgemma_small",
        "use std.models.vaultgemma\n",
        "vaultgemma(vocab=32000, d=1152, layers=4, heads=8, kv_heads=4, head_dim=128, ffn=4608, window=512, scaling=0.08838834764831845",
    ),
    // Hunyuan (dense) with 6 layers: Llama's decoder with the queries and keys normed over
    // each head after the rotation, the head tied.
    (
        "hunyuan_v1_dense_small",
        "use std.models.hunyuan_v1_dense\n",
        "hunyuan_v1_dense(vocab=32000, d=1024, layers=6, heads=16, kv_heads=4, head_dim=64, ffn=2816",
    ),
    // Ministral 3 with 6 layers: Mistral's decoder with the rotated queries scaled by Llama
    // 4's position-dependent factor (over 1,024 positions here, so that it changes).
    (
        "ministral3_small",
        "use std.models.ministral3\n",
        "ministral3(vocab=32000, d=1024, layers=6, heads=16, kv_heads=4, head_dim=64, ffn=2816, original_max=1024",
    ),
    // CWM with 8 layers: Llama's decoder, every fourth layer from the first full and the rest
    // over a window of 1,024 tokens, both masks made every forward.
    (
        "cwm_small",
        "use std.models.cwm\n",
        "cwm(vocab=32000, d=1024, layers=8, heads=16, kv_heads=4, head_dim=64, ffn=2816, window=1024",
    ),
    // nanochat with 6 layers: weightless float32 norms (one more before the layers), head
    // norms after the rotation, a `relu2` MLP, softcapped logits.
    (
        "nanochat_small",
        "use std.models.nanochat\n",
        "nanochat(vocab=32000, d=1024, layers=6, heads=8, kv_heads=8, ffn=4096",
    ),
    // HyperCLOVA X with 6 layers: Granite's model with norms after the attention and the MLP,
    // an untied head whose logits are multiplied by `logits_scaling`.
    (
        "hyperclovax_small",
        "use std.models.hyperclovax\n",
        "hyperclovax(vocab=32000, d=1024, layers=6, heads=16, kv_heads=4, head_dim=64, ffn=2816, embedding_multiplier=12.0, residual_multiplier=0.22, logits_scaling=8.0",
    ),
    // Youtu-LLM with 6 layers: DeepSeek-V3's latent attention in Llama's layer, every layer
    // dense, the head tied.
    (
        "youtu_small",
        "use std.models.youtu\n",
        "youtu(vocab=32000, d=1024, layers=6, heads=16, q_rank=384, kv_rank=256, nope=64, rope=32, v_dim=64, ffn=2816",
    ),
    // MiniCPM3 with 6 layers: DeepSeek's latent attention rotated as Llama's, a scaled
    // embedding, residual and logit scales, the head tied.
    (
        "minicpm3_small",
        "use std.models.minicpm3\n",
        "minicpm3(vocab=32000, d=1024, layers=6, heads=16, q_rank=384, kv_rank=256, nope=64, rope=32, v_dim=64, ffn=2816, residual_scale=0.5715476066494083",
    ),
    // Ministral with 6 layers alternating full and a window of 1,024 tokens: CWM's model (both
    // masks every forward) over Llama's layers.
    (
        "ministral_small",
        "use std.models.ministral\n",
        "ministral(d=1024, layers=6, heads=16, kv_heads=4, ffn=2816, window=1024, full_every=2",
    ),
    // Cohere 2 (Command R7B) with 8 layers: Cohere's parallel layer without query and key
    // norms, three of four layers over a window of 1,024 tokens and rotated, the fourth
    // global and without rotary embeddings.
    (
        "cohere2_small",
        "use std.models.cohere2\n",
        "cohere2(vocab=32000, d=1024, layers=8, heads=16, kv_heads=4, ffn=2816, window=1024",
    ),
    // Cohere (Command R) with 6 layers: float32 LayerNorms without bias feeding the attention
    // and the MLP in parallel, interleaved rotary tables applied in float32, scaled logits.
    (
        "cohere_small",
        "use std.models.cohere\n",
        "cohere(vocab=32000, d=1024, layers=6, heads=16, kv_heads=4, ffn=2816, logit_scale=0.0625",
    ),
    // Qwen2-MoE with 4 layers of 16 experts (4 a token) and a shared expert: Qwen2's
    // attention, a router without renormalization, the shared expert's sigmoid gate.
    (
        "qwen2_moe_small",
        "use std.models.qwen2_moe\n",
        "qwen2_moe(vocab=32000, d=1024, layers=4, heads=16, kv_heads=16, ffn=704, shared_ffn=2816, experts=16, top_k=4",
    ),
    // Qwen3-MoE with 4 layers of 16 experts (4 a token): Qwen3's attention, Mixtral's grouped
    // experts, a router whose weights are cast to bf16.
    (
        "qwen3_moe_small",
        "use std.models.qwen3_moe\n",
        "qwen3_moe(vocab=32000, d=1024, layers=4, heads=16, kv_heads=4, ffn=768, experts=16, top_k=4",
    ),
    // Persimmon with 6 layers: StableLM's half-rotated heads over a fused projection whose
    // views the queries, keys and values are, LayerNorms over the queries' and keys' heads,
    // a biased relu2 MLP.
    ("persimmon_small", "use std.models.persimmon\n", "persimmon(vocab=32000, d=1024, layers=6, heads=16, ffn=4096"),
    // CodeGen with 6 layers: GPT-J's parallel block over one fused projection split in four
    // model-parallel groups (each part copied into heads), float32 rotary tables that make
    // the rotated queries and keys float32, a biased head.
    (
        "codegen_small",
        "use std.models.codegen\n",
        "codegen(vocab=32000, d=1024, layers=6, heads=16, rotary=32, ffn=4096, positions=16384",
    ),
    // BioGPT with 6 layers: OPT's pre-norm decoder with a scaled embedding, a float32
    // all-ones mask held through the forward, residual dropout, a GELU MLP, the head tied.
    ("biogpt_small", "use std.models.biogpt\n", "biogpt(vocab=32000, layers=6, positions=16384"),
    // Granite SWA with 8 layers: Granite's multipliers, three of four layers over a window of
    // 512 tokens, eager attention whose per-head sinks scale the output through `logsumexp`.
    (
        "granite_swa_small",
        "use std.models.granite_swa\n",
        "granite_swa(vocab=32000, d=1024, layers=8, heads=16, kv_heads=4, ffn=2816, embedding_multiplier=12.0, residual_multiplier=0.22, logits_scaling=8.0, scaling=0.125, window=512",
    ),
    // DiffLlama with 6 layers: Llama's skeleton with differential attention (two SDPA calls
    // over the tiled halves of the values, a weightless RMSNorm over pairs of heads).
    ("diffllama_small", "use std.models.diffllama\n", "diffllama(d=1024, layers=6, heads=16, kv_heads=4, ffn=2816"),
    // Granite MoE with 4 layers of 16 experts (4 a token): Granite's multipliers, a router that
    // softmaxes its top 4 float32 logits, Mixtral's experts; and its kind with a shared MLP.
    (
        "granitemoe_small",
        "use std.models.granitemoe\n",
        "granitemoe(vocab=32000, d=1024, layers=4, heads=16, kv_heads=4, experts=16, top_k=4, ffn=512, embedding_multiplier=12.0, residual_multiplier=0.22, logits_scaling=6.0, tied=true",
    ),
    (
        "granitemoeshared_small",
        "use std.models.granitemoe\n",
        "granitemoe(vocab=32000, d=1024, layers=4, heads=16, kv_heads=4, experts=16, top_k=4, ffn=512, shared_ffn=1024, embedding_multiplier=12.0, residual_multiplier=0.22, logits_scaling=6.0, tied=true",
    ),
    // Phi-3.5-MoE with 4 layers of 16 experts (2 a token): LayerNorms, biased projections and
    // head, `sparsemixer` routing (sampled in training through a custom autograd function).
    (
        "phimoe_small",
        "use std.models.phimoe\n",
        "phimoe(vocab=32000, d=1024, layers=4, heads=16, kv_heads=4, experts=16, ffn=512, bias=true",
    ),
    // BitNet (unpacked) with 6 layers: Llama's decoder with an RMS norm over the merged heads
    // before `o_proj` and one over the gated `relu2` product before `down_proj`.
    ("bitnet_small", "use std.models.bitnet\n", "bitnet(vocab=32000, d=1024, layers=6, heads=16, kv_heads=4, ffn=2816"),
    // Hunyuan MoE with 4 layers of 16 experts (4 a token): a shared MLP first, a float32 gate
    // over a float32 copy of the states, float32 expert weights.
    (
        "hunyuan_v1_moe_small",
        "use std.models.hunyuan_v1_moe\n",
        "hunyuan_v1_moe(vocab=32000, d=1024, layers=4, heads=16, kv_heads=4, head_dim=64, experts=16, top_k=4, ffn=512",
    ),
    // ERNIE 4.5 MoE with 4 layers (the first dense) of 16 experts (4 a token): a float32 router
    // outside autocast with a frozen correction bias, a shared expert first, the head tied.
    (
        "ernie4_5_moe_small",
        "use std.models.ernie4_5_moe\n",
        "ernie4_5_moe(vocab=32000, d=1024, layers=4, heads=16, kv_heads=4, head_dim=64, dense_ffn=2816, experts=16, top_k=4, ffn=512, shared_ffn=512",
    ),
];

/// A measured language model: its name in memory_llm.json, the `.net` text that imports it and
/// the model call its scenarios run, without the parentheses' end (`llama(vocab=32000, ...`),
/// so that a scenario can add its arguments.
pub type LlmModel = (&'static str, &'static str, &'static str);

/// The LLM set's models, the zoo's own written from transformers' modeling files.
pub const LLM_MODELS: &[LlmModel] = &[
    ("llama_small", "use std.models.llama\n", "llama(vocab=32000, d=2048, layers=8, heads=32, kv_heads=8, ffn=5632"),
    (
        "mixtral_small",
        "use std.models.mixtral\n",
        "mixtral(vocab=32000, d=1024, layers=4, heads=16, kv_heads=8, ffn=3584, experts=8, top_k=2",
    ),
];

/// A measured LLM scenario: its name in memory_llm.json, `infer` or `train`, the model
/// arguments it adds, and its settings, where `{batch}` and `{seq}` are the size's (the
/// device is added).
pub type LlmScenario = (&'static str, &'static str, &'static str, &'static str);

/// peft's `LoraConfig(r=16, lora_alpha=32, lora_dropout=0.05, target_modules=...)`, where
/// [`llm_cases`] puts the model's [`peft_targets`] in place of `{targets}`.
const LORA: &str = ", lora_r=16, lora_alpha=32, lora_dropout=0.05, lora_targets=\"{targets}\"";

/// The modules the harness's LoRA targets in `model`: q/k/v/o_proj, or what
/// measure_llm_families.py's `LORA_TARGETS` names for a family without them.
fn peft_targets(model: &str) -> &'static str {
    match model {
        "gpt2_small" | "gpt_bigcode_small" | "gpt_bigcode_mha_small" => "c_attn",
        "falcon_small" | "falcon_40b_small" | "bloom_small" => "query_key_value",
        "mpt_small" => "Wqkv",
        "persimmon_small" => "query_key_value,dense",
        "codegen_small" => "qkv_proj",
        "biogpt_small" => "q_proj,k_proj,v_proj,out_proj",
        _ => "q_proj,k_proj,v_proj,o_proj",
    }
}

/// The LLM set's scenarios (memory_llm.json; the fixture README says what PyTorch ran).
pub const LLM_SCENARIOS: &[LlmScenario] = &[
    ("train_full_bf16_adamw", "train", "", "batch {batch}  seq {seq}  precision bf16  optimizer adamw  loss causal_lm"),
    (
        "train_full_amp_bf16_adamw",
        "train",
        "",
        "batch {batch}  seq {seq}  precision amp_bf16  optimizer adamw  loss causal_lm",
    ),
    (
        "train_full_bf16_adamw_ckpt",
        "train",
        "",
        "batch {batch}  seq {seq}  precision bf16  optimizer adamw  loss causal_lm  checkpoint",
    ),
    ("train_lora_bf16", "train", LORA, "batch {batch}  seq {seq}  precision bf16  optimizer adamw  loss causal_lm"),
    (
        "train_lora_bf16_ckpt",
        "train",
        LORA,
        "batch {batch}  seq {seq}  precision bf16  optimizer adamw  loss causal_lm  checkpoint",
    ),
    // torch's reentrant checkpointing (`use_reentrant=True`), where it was measured.
    (
        "train_lora_bf16_ckpt_reentrant",
        "train",
        LORA,
        "batch {batch}  seq {seq}  precision bf16  optimizer adamw  loss causal_lm  checkpoint  reentrant",
    ),
    ("infer_prefill_bf16", "infer", "", "batch {batch}  seq {seq}  precision bf16  no_grad  eval  cache dynamic"),
    // One decode step after a prefill of the size's `seq` tokens.
    (
        "infer_decode_bf16",
        "infer",
        "",
        "batch {batch}  seq 1  context {seq}  precision bf16  no_grad  eval  cache dynamic",
    ),
];

/// Runs every case of the LLM set that `scenarios` names, on `a100_80gb` (the harness's
/// emulated sm80 rules), as [`cases_of`] does; a size is `b<batch>_s<seq>`.
pub fn llm_cases(fixture: &str, models: &[LlmModel], scenarios: &[LlmScenario]) -> Vec<Case> {
    let fixture: Value = serde_json::from_str(fixture).expect("the fixture parses");
    let mut out = Vec::new();
    for (model, text, call) in models {
        for (size, figures) in fixture["models"][model]["sizes"].as_object().expect("sizes") {
            let (batch, seq) = size.trim_start_matches('b').split_once("_s").expect("b<batch>_s<seq>");
            let measured: Vec<&LlmScenario> = scenarios.iter().filter(|(s, ..)| figures.get(*s).is_some()).collect();
            let mut source = text.to_string();
            for (scenario, kind, args, settings) in &measured {
                let settings = settings.replace("{batch}", batch).replace("{seq}", seq);
                let args = args.replace("{targets}", peft_targets(model));
                let _ =
                    write!(source, "\n{kind} c_{scenario} {{ model {call}{args})  {settings}  device a100_80gb }}\n");
            }
            let (db, file, items) = load(&format!("{model}.net"), source);
            for (scenario, ..) in measured {
                let m = &figures[*scenario];
                let loc = ItemLoc::new(&db, file, items[&format!("c_{scenario}")]);
                let costs = scenario_costs(&db, loc).as_ref().expect("simulates");
                let mut c = case("a100_80gb", model, size.clone(), scenario, &costs.simulation, m);
                // The harness names the forward pass of a cached inference `prefill` or
                // `decode`; netc's is the forward pass.
                if matches!(c.measured_phase.as_str(), "prefill" | "decode") {
                    c.measured_phase = "forward".into();
                }
                if let Some(kv) = m.get("kv_cache_bytes").and_then(Value::as_i64) {
                    c.kv_cache = Some((costs.simulation.kv_cache_bytes(), kv as i128));
                }
                out.push(c);
            }
        }
    }
    out
}

/// One case: the simulation's peak against the measured figures `m` (memory.json's fields).
fn case(
    device: &'static str,
    model: &'static str,
    batch: String,
    scenario: &'static str,
    simulation: &netc::costs::simulate::Simulation,
    m: &Value,
) -> Case {
    let peak = &simulation.peak;
    let measured = m["peak_bytes"].as_i64().expect("peak") as i128;
    let breakdown = serde_json::to_value(peak.breakdown).expect("serializes");
    let mut worst = (String::new(), 0.0f64);
    for (category, value) in m["breakdown"].as_object().expect("breakdown") {
        let predicted = breakdown.get(category).and_then(Value::as_i64).unwrap_or(0);
        let diff = (predicted - value.as_i64().unwrap_or(0)).abs() as f64 / measured as f64;
        if diff > worst.1 {
            worst = (category.clone(), diff);
        }
    }
    let rounded = m["peak_alloc512_bytes"].as_i64().map(|r| (simulation.rounded_peak, r as i128));
    Case {
        device,
        model,
        batch,
        scenario,
        predicted: peak.bytes,
        measured,
        rounded,
        predicted_phase: peak.phase.name().to_string(),
        measured_phase: m["phase"].as_str().unwrap_or("").to_string(),
        worst_category: worst,
        kv_cache: None,
    }
}

/// One predicted-vs-measured comparison.
pub struct Case {
    /// The device preset simulated.
    pub device: &'static str,
    pub model: &'static str,
    /// `bs1`, `bs32`, ...
    pub batch: String,
    pub scenario: &'static str,
    /// The allocated peak.
    pub predicted: i128,
    pub measured: i128,
    /// The peak with the allocator's rounding (`rounded_peak` against `peak_alloc512_bytes`),
    /// when the fixture has it.
    pub rounded: Option<(i128, i128)>,
    pub predicted_phase: String,
    pub measured_phase: String,
    /// Worst category difference at the peak, as a fraction of the measured peak.
    pub worst_category: (String, f64),
    /// The key/value cache after the run, predicted and measured, when the fixture has it.
    pub kv_cache: Option<(i128, i128)>,
}

impl Case {
    /// Relative error of the allocated peak.
    pub fn error(&self) -> f64 {
        relative(self.predicted, self.measured)
    }

    /// Relative error of the rounded peak, when measured.
    pub fn rounded_error(&self) -> Option<f64> {
        self.rounded.map(|(p, m)| relative(p, m))
    }

    /// What is outside the bar (empty when the case passes).
    pub fn misses(&self) -> Vec<String> {
        let mut misses = Vec::new();
        if self.error().abs() > PEAK_BAR {
            misses.push(format!("peak {:+.2}%", 100.0 * self.error()));
        }
        if let Some(e) = self.rounded_error().filter(|e| e.abs() > PEAK_BAR) {
            misses.push(format!("rounded peak {:+.2}%", 100.0 * e));
        }
        if self.predicted_phase != self.measured_phase {
            misses.push(format!("phase {} instead of {}", self.predicted_phase, self.measured_phase));
        }
        if self.worst_category.1 > CATEGORY_BAR {
            misses.push(format!("{} off by {:.1}% of the peak", self.worst_category.0, 100.0 * self.worst_category.1));
        }
        misses
    }
}

fn relative(predicted: i128, measured: i128) -> f64 {
    (predicted - measured) as f64 / measured as f64
}

/// `text` with one scenario per measured scenario, named `c_<scenario>`, running `name`.
fn with_scenarios(model: &str, text: &str, name: &str, batch: &str, device: &str, scenarios: &[Scenario]) -> String {
    let seq = if model == "gpt2_small" { "  seq 512" } else { "" };
    let mut source = text.to_string();
    for (scenario, kind, settings) in scenarios {
        let _ = write!(
            source,
            "\n{kind} c_{scenario} {{ model {name}()  batch {batch}{seq}  {settings}  device {device} }}\n"
        );
    }
    source
}

/// Checks `source` (it must have no error; lints such as `missing-no-grad` are expected: the
/// calibration runs inference with gradients on purpose) and returns the database, the file
/// and its scenarios' item indices by name.
pub fn load(name: &str, source: String) -> (Database, netc::db::SourceFile, BTreeMap<String, u32>) {
    let mut db = Database::new();
    let file = db.set_file(FileName::new(name.to_string()), source);
    let errors: Vec<_> = file_diagnostics(&db, file).iter().filter(|d| d.severity == Severity::Error).collect();
    assert!(errors.is_empty(), "{name}: {errors:?}");
    let scenarios = syntax_tree(&db, file)
        .iter()
        .enumerate()
        .filter_map(|(i, item)| match item {
            Item::Scenario(s) => Some((s.name.text.to_string(), i as u32)),
            _ => None,
        })
        .collect();
    (db, file, scenarios)
}

/// Runs every calibration case of `scenarios` on `device` against `fixture` (memory.json's
/// structure; a case the harness skipped is left out).
pub fn cases(device: &'static str, fixture: &str, scenarios: &[Scenario]) -> Vec<Case> {
    cases_of(CALIBRATION, device, fixture, scenarios)
}

/// The cases of memory_amp_accum.json: the calibration models it measured, in
/// [`AMP_ACCUM_SCENARIOS`] on `a100_80gb`.
pub fn amp_accum_cases() -> Vec<Case> {
    let fixture: Value = serde_json::from_str(AMP_ACCUM_FIXTURE).expect("the fixture parses");
    let models: Vec<Model> =
        CALIBRATION.iter().filter(|(name, ..)| fixture["models"].get(*name).is_some()).copied().collect();
    cases_of(&models, "a100_80gb", AMP_ACCUM_FIXTURE, AMP_ACCUM_SCENARIOS)
}

/// Runs every case of `models` that `fixture` measured, as [`cases`] does.
pub fn cases_of(models: &[Model], device: &'static str, fixture: &str, scenarios: &[Scenario]) -> Vec<Case> {
    let fixture: Value = serde_json::from_str(fixture).expect("the fixture parses");
    let mut out = Vec::new();
    for (model, text, name) in models {
        for (batch, figures) in fixture["models"][model].as_object().expect("batches") {
            let measured: Vec<Scenario> =
                scenarios.iter().filter(|(s, _, _)| figures[*s].get("skipped").is_none()).copied().collect();
            let source = with_scenarios(model, text, name, batch.trim_start_matches("bs"), device, &measured);
            let (db, file, items) = load(&format!("{model}.net"), source);
            for (scenario, _, _) in &measured {
                let m = &figures[*scenario];
                let index = items[&format!("c_{scenario}")];
                let costs = scenario_costs(&db, ItemLoc::new(&db, file, index)).as_ref().expect("simulates");
                out.push(case(device, model, batch.clone(), scenario, &costs.simulation, m));
            }
        }
    }
    out
}

/// One line per case: predicted and measured peaks, the error, the phases, the worst category.
pub fn table(cases: &[Case]) -> String {
    let mut out = String::new();
    for c in cases {
        let _ = write!(
            out,
            "{:<10} {:<16} {:>5} {:<19} predicted {:>14} measured {:>14} {:>+7.2}%",
            c.device,
            c.model,
            c.batch,
            c.scenario,
            c.predicted,
            c.measured,
            100.0 * c.error()
        );
        if let (Some((p, m)), Some(e)) = (c.rounded, c.rounded_error()) {
            let _ = write!(out, "  rounded {p:>14} vs {m:>14} {:>+7.2}%", 100.0 * e);
        }
        let _ = write!(
            out,
            "  phase {:<9} vs {:<9} worst {} {:.1}%",
            c.predicted_phase,
            c.measured_phase,
            c.worst_category.0,
            100.0 * c.worst_category.1
        );
        if let Some((p, m)) = c.kv_cache {
            let _ = write!(out, "  kv cache {p} vs {m}");
        }
        let misses = c.misses();
        if !misses.is_empty() {
            let _ = write!(out, "  OFF: {}", misses.join(", "));
        }
        out.push('\n');
    }
    out
}

/// The relative error of a peak of a case, if the case has that peak.
type Metric = fn(&Case) -> Option<f64>;

/// Mean absolute error and the worst case, of the allocated peak and of the rounded one.
pub fn summary(cases: &[Case]) -> String {
    let mut out = String::new();
    let metrics: [(&str, Metric); 2] = [("allocated peak", |c| Some(c.error())), ("rounded peak", Case::rounded_error)];
    for (what, error) in metrics {
        let errors: Vec<(f64, &Case)> = cases.iter().filter_map(|c| error(c).map(|e| (e, c))).collect();
        let Some(&(worst, w)) = errors.iter().max_by(|a, b| a.0.abs().total_cmp(&b.0.abs())) else { continue };
        let mean = errors.iter().map(|(e, _)| e.abs()).sum::<f64>() / errors.len() as f64;
        let _ = writeln!(
            out,
            "{:<10} {what:<14} {} cases, mean |error| {:.3}%, worst {:+.3}% ({} {} {})",
            w.device,
            errors.len(),
            100.0 * mean,
            100.0 * worst,
            w.model,
            w.batch,
            w.scenario
        );
    }
    let off = cases.iter().filter(|c| !c.misses().is_empty()).count();
    if let Some(c) = cases.first() {
        let _ = writeln!(out, "{:<10} outside the bar: {off} of {}", c.device, cases.len());
    }
    out
}
