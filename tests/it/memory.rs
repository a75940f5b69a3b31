//! Accuracy of the memory simulation against PyTorch, and the articles' worked example.
//!
//! Every calibration model, every measured scenario (inference with and without no_grad, SGD,
//! momentum, Adam with the device's default implementation and with foreach), both batch
//! sizes, on two devices: `cpu` against memory.json (CPU semantics), and `a100_80gb` against
//! memory_cuda.json (CUDA semantics, measured with fake CUDA tensors). The driver is
//! [`accuracy`], shared with the accuracy benchmark. The bar: allocated peak within 5 %, the
//! peak's phase right, each category of the breakdown at the peak within 10 % of the peak,
//! and on CUDA the peak with the allocator's 512-byte rounding within 5 % of
//! `peak_alloc512_bytes` (what `torch.cuda.max_memory_allocated` reports).

pub mod accuracy;

use std::collections::BTreeMap;

use netc::report::{ScenarioReport, bytes, scenario_report};

use self::accuracy::{
    CATEGORY_BAR, CPU_FIXTURE, CUDA_FIXTURE, Case, GPT_NEOX_LORA_SCENARIOS, LLM_FAMILIES, LLM_FAMILIES_FIXTURE,
    LLM_FIXTURE, LLM_GPT_NEOX_LORA_FIXTURE, LLM_INT4, LLM_INT4_TRAIN_FIXTURE, LLM_INT8, LLM_INT8_FIXTURE,
    LLM_INT8_REENTRANT_FIXTURE, LLM_MODELS, LLM_PADDED, LLM_PADDED_FIXTURE, LLM_SCENARIOS, PRECISION_FIXTURE,
    PRECISION_SCENARIOS, SCENARIOS, ZOO, ZOO_CPU_FIXTURE, ZOO_CUDA_FIXTURE, amp_accum_cases, cases, cases_of,
    llm_cases, load, summary, table,
};

/// Asserts that every case is within the bar; prints the table either way.
fn assert_within_bar(cases: &[Case]) {
    let report = format!("{}{}", table(cases), summary(cases));
    println!("{report}");
    let off = cases.iter().filter(|c| !c.misses().is_empty()).count();
    assert!(off == 0, "{off} of {} cases off:\n{report}", cases.len());
}

#[test]
fn cpu_peaks_match_pytorch() {
    let cases = cases("cpu", CPU_FIXTURE, SCENARIOS);
    assert_eq!(cases.len(), 96);
    assert_within_bar(&cases);
}

#[test]
fn cuda_peaks_match_pytorch() {
    let cases = cases("a100_80gb", CUDA_FIXTURE, SCENARIOS);
    assert_eq!(cases.len(), 96);
    assert!(cases.iter().all(|c| c.rounded.is_some()), "memory_cuda.json has peak_alloc512_bytes everywhere");
    assert_within_bar(&cases);
}

/// Issue 16's bar for models written from their PyTorch source: every case within 2 % and
/// the mean under 0.5 %.
fn assert_faithful(cases: &[Case]) {
    let report = format!("{}{}", table(cases), summary(cases));
    println!("{report}");
    let off: Vec<String> = cases
        .iter()
        .filter(|c| c.error().abs() > 0.02 || c.predicted_phase != c.measured_phase)
        .map(|c| format!("{} {} {}: {:+.2}%", c.model, c.batch, c.scenario, 100.0 * c.error()))
        .collect();
    assert!(off.is_empty(), "outside 2 %:\n{}\n{report}", off.join("\n"));
    let mean = cases.iter().map(|c| c.error().abs()).sum::<f64>() / cases.len() as f64;
    assert!(mean < 0.005, "mean |error| {:.3}% (bar 0.5 %)\n{report}", 100.0 * mean);
}

/// The zoo's own models, against the harness's figures for the torchvision models they name
/// (memory_zoo.json, CPU semantics): the zoo is written as its reference code runs, so its
/// peaks are PyTorch's.
#[test]
fn zoo_cpu_peaks_match_pytorch() {
    let cases = cases_of(ZOO, "cpu", ZOO_CPU_FIXTURE, SCENARIOS);
    assert_eq!(cases.len(), 12 * ZOO.len());
    assert_faithful(&cases);
}

/// The same in CUDA semantics (memory_zoo_cuda.json, fake CUDA tensors), with the rounded peak.
#[test]
fn zoo_cuda_peaks_match_pytorch() {
    let cases = cases_of(ZOO, "a100_80gb", ZOO_CUDA_FIXTURE, SCENARIOS);
    assert_eq!(cases.len(), 12 * ZOO.len());
    assert_faithful(&cases);
}

/// Prints the cases and holds each to issue 17's bar ([`precision_misses`]).
fn assert_within_precision_bar(cases: &[Case]) {
    println!("{}{}", table(cases), summary(cases));
    let wrong: Vec<String> = cases
        .iter()
        .filter_map(|c| {
            let misses = precision_misses(c);
            (!misses.is_empty()).then(|| format!("{} {} {}: {}", c.model, c.batch, c.scenario, misses.join(", ")))
        })
        .collect();
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// Issue 17's bar for the precision set: the peak and the 512-byte-rounded peak within 1 %,
/// never under by more than 0.5 %, and the peak's phase the measured one.
fn precision_misses(c: &Case) -> Vec<String> {
    let mut misses = Vec::new();
    for (what, error) in [("peak", Some(c.error())), ("rounded peak", c.rounded_error())] {
        if let Some(e) = error.filter(|e| !(-0.005..=0.01).contains(e)) {
            misses.push(format!("{what} {:+.2}%", 100.0 * e));
        }
    }
    if c.predicted_phase != c.measured_phase {
        misses.push(format!("phase {} instead of {}", c.predicted_phase, c.measured_phase));
    }
    misses
}

/// Every case of the precision set (memory_precision.json: half models, autocast, bf16
/// training, accumulation, checkpointing) within issue 17's bar.
#[test]
fn precision_peaks_match_pytorch() {
    let cases = cases("a100_80gb", PRECISION_FIXTURE, PRECISION_SCENARIOS);
    assert_eq!(cases.len(), 114);
    assert_within_precision_bar(&cases);
}

/// Autocast training with gradient accumulation over 2 micro-batches (memory_amp_accum.json,
/// float16 and bfloat16, four models at their larger batch): within the precision bar.
#[test]
fn autocast_with_accumulation_matches_pytorch() {
    let cases = amp_accum_cases();
    assert_eq!(cases.len(), 8);
    assert_within_precision_bar(&cases);
}

/// Issue 18's bar for the LLM set: every peak within 1 %, in the measured phase.
const LLM_BAR: f64 = 0.01;

/// Asserts issue 18's bar on LLM cases: each peak within [`LLM_BAR`], in the measured phase,
/// the KV cache after the step exact; and, as the other sets' bar asks, each category at the
/// peak within [`CATEGORY_BAR`] of it (what a checkpointed layer recomputes counts as backward
/// temporaries, GPTQ's and AWQ's packed weights as buffers, as the harness counts them).
/// Prints the table either way.
fn assert_within_llm_bar(cases: &[Case]) {
    let report = format!("{}{}", table(cases), summary(cases));
    println!("{report}");
    let off: Vec<_> = cases
        .iter()
        .filter(|c| {
            c.error().abs() > LLM_BAR
                || c.predicted_phase != c.measured_phase
                || c.kv_cache.is_some_and(|(predicted, measured)| predicted != measured)
                || c.worst_category.1 > CATEGORY_BAR
        })
        .map(|c| format!("{} {} {}", c.model, c.batch, c.scenario))
        .collect();
    assert!(off.is_empty(), "off: {off:?}\n{report}");
}

/// Asserts an LLM set: `count` cases, each within issue 18's bar, and every peak to the byte.
fn assert_llm_set_exact(cases: &[Case], count: usize) {
    assert_eq!(cases.len(), count);
    assert_within_llm_bar(cases);
    assert_llm_peaks_exact(cases);
}

/// Asserts what netc does better than the bar on the LLM cases: every allocated peak to the
/// byte.
fn assert_llm_peaks_exact(cases: &[Case]) {
    let off: Vec<_> = cases
        .iter()
        .filter(|c| c.predicted != c.measured)
        .map(|c| format!("{} {} {}: {:+} B", c.model, c.batch, c.scenario, c.predicted - c.measured))
        .collect();
    assert!(off.is_empty(), "not exact: {off:?}");
}

/// The zoo's Llama (stdlib/std/models/llama.net, written from transformers 5.24's
/// modeling_llama.py) at the LLM set's `llama_small` sizes against Hugging Face's own model:
/// full bf16 and autocast fine-tuning with AdamW, per-layer checkpointing, and peft LoRA (r 16
/// on q/k/v/o, fp32 adapters over a frozen bf16 base) with and without checkpointing, at
/// (batch, seq) (1, 512) and (4, 2048), in the measured phase. Inference: prefill with a
/// `DynamicCache` (the full logits kept) and one decode step at a context of the size's `seq`
/// and of 8192, in the forward pass, and the key/value cache after the step exact. Issue 18's
/// bar is 1 %: every peak is exact.
#[test]
fn llm_peaks_match_transformers() {
    let cases = llm_cases(LLM_FIXTURE, LLM_MODELS, LLM_SCENARIOS);
    assert_llm_set_exact(&cases, 30);
}

/// Gemma 2 (std.models.gemma2: eager attention, sliding-window layers of 512 tokens), Qwen2
/// (std.models.qwen2: biased q/k/v, the head tied), Qwen3 (std.models.qwen3: a head size of
/// its own, RMS norms over the queries' and keys' heads), GPT-NeoX (std.models.gpt_neox:
/// Pythia's fused projection chunked into heads, partial rotary embedding, LayerNorms, GELU,
/// parallel residual; training and inference), Phi-3 (std.models.phi3: fused
/// projections; peft's q/k/v/o targets adapt its `o_proj` alone) and Mistral
/// (std.models.mistral), without a window and with one of 1,024 tokens (past it, at (4, 2048)
/// and in the 8,192-token decode, SDPA with a mask), and Gemma 3 (std.models.gemma3: SDPA,
/// five sliding layers of 512 tokens to one global, `q_norm`/`k_norm`, a rotary table per
/// layer kind) and OLMo 2 (std.models.olmo2: norms after the attention and the MLP,
/// `q_norm`/`k_norm` over the whole projections, float32 rotary tables and norm products) and
/// Qwen3-MoE (std.models.qwen3_moe: Qwen3's attention, Mixtral's grouped experts, a router
/// whose weights are cast to bf16) and Qwen2-MoE (std.models.qwen2_moe: a shared expert and
/// its sigmoid gate, a router without renormalization, the all-false sliding-window mask its
/// model makes), Cohere (std.models.cohere: float32 LayerNorms, a parallel block,
/// interleaved rotary tables, scaled logits) and DeepSeek-V3 (std.models.deepseek_v3:
/// multi-head latent attention caching the latent, group-limited float32 routing, shared
/// experts) and DeepSeek-V2 (std.models.deepseek_v2: V3's attention with rotary embeddings as
/// complex numbers and no query rank, a group-limited softmax router) and GLM-4.5
/// (std.models.glm4_moe: biased query, key and value projections, per-head norms, half of
/// each head rotated, DeepSeek-V3's router and experts) and GLM-4 and GLM-4-0414
/// (std.models.glm, std.models.glm4: biased query, key and value projections, half of each
/// head rotated on interleaved pairs, a fused gate-and-up projection, and in GLM-4-0414 norms
/// after the attention and the MLP) and GPT-Neo (std.models.gpt_neo: eager attention on
/// float32 queries and keys under a per-layer bool buffer, the attention weights held by the
/// model's loop) and Cohere 2 (std.models.cohere2: Cohere's layer, three of four over a
/// sliding window and rotated, the fourth global and unrotated) and ERNIE 4.5
/// (std.models.ernie4_5: float32 rotary tables, interleaved, applied in float32) and Seed-OSS
/// (std.models.seed_oss: biased q/k/v, heads of 128, residual dropout) and Helium
/// (std.models.helium: GLM's interleaved rotation, norms with float32 weight copies) and SmolLM3 (std.models.smollm3:
/// Llama's with every fourth layer's rotary embedding skipped, which changes no peak here:
/// the rotation saves nothing and its temporaries are not live at a peak), OLMoE (std.models.olmoe: norms over the whole query and key projections,
/// Qwen3-MoE's router), StableLM (std.models.stablelm: LayerNorms with biases, a partial
/// rotary embedding), Granite (std.models.granite: the embedding, residual and logit
/// multipliers), StarCoder2 (std.models.starcoder2: Mistral's window with LayerNorms,
/// biases and a GELU MLP), Phi (std.models.phi: a parallel block, `gelu_new` in Python,
/// residual dropout), GPT-J (std.models.gptj: Phi's block with GPT-J's own rotary
/// embedding), GPT-OSS (std.models.gpt_oss: eager attention with sinks, biased experts)
/// GPT-2 (std.models.gpt2's `gpt2_lm`: `Conv1D` projections, learned positions, LoRA on
/// `c_attn`), OPT (std.models.opt: learned positions at a float32 mask's cumulative sum,
/// pre- and post-norm), Falcon (std.models.falcon: SDPA's math path over one broadcast
/// key head, and the new decoder architecture), BLOOM (std.models.bloom: ALiBi by
/// `baddbmm`, its GELU a declared kernel) and GPT-BigCode (std.models.gpt_bigcode:
/// multi-query attention out of one `c_attn`, the model's bool buffer) and MPT
/// (std.models.mpt: float32 ALiBi over `max_seq_len` keys promoting the scores) and Gemma
/// (std.models.gemma: Llama's attention with heads of 256, Gemma 2's norms and MLP, the
/// embedding scaled through a buffer) and OLMo (std.models.olmo: parameter-free float32
/// LayerNorms, float32 rotary tables; the last four written after the rest; and with
/// `clip_qkv`, its projections clamped in place, which keeps autograd's copies) and Apertus
/// (std.models.apertus: head norms on transposed heads, xIELU in Python) and OLMo 3
/// (std.models.olmo3: OLMo 2's layer, three sliding-window layers of four) and EXAONE 4.0
/// (std.models.exaone4: head norms after the transpose, post norms, unrotated global layers)
/// and AFM (std.models.arcee: Nemotron's `relu2` MLP in Llama's layer) and Jais 2
/// (std.models.jais2: LayerNorms, biased projections, a biased `relu2` MLP) and VaultGemma
/// (std.models.vaultgemma: Gemma 2 without post norms) and Hunyuan (std.models.hunyuan_v1_dense:
/// head norms after the rotation) and Ministral 3 (std.models.ministral3: Llama 4's query
/// scaling) and CWM (std.models.cwm: three sliding-window layers of four) and nanochat
/// (std.models.nanochat: weightless norms, softcapped logits) and HyperCLOVA X
/// (std.models.hyperclovax: Granite's multipliers with post norms) and Youtu-LLM
/// (std.models.youtu: dense latent attention, tied) and MiniCPM3 (std.models.minicpm3: latent
/// attention rotated as Llama's, an int64 embedding scale, the held model output) and Ministral
/// (std.models.ministral: CWM's model, its windows per layer) and Persimmon
/// (std.models.persimmon: LayerNorms over the heads of a fused projection's views) and CodeGen
/// (std.models.codegen: GPT-J's block over a fused projection, float32 rotary tables) and
/// BioGPT (std.models.biogpt: a scaled embedding, a held float32 all-ones mask) and Granite SWA
/// (std.models.granite_swa: eager attention's sinks through `logsumexp`, sliding windows) and
/// DiffLlama (std.models.diffllama: differential attention, a weightless RMSNorm) and Granite
/// MoE (std.models.granitemoe: a softmax over the top-k float32 logits, Granite's multipliers;
/// and with a shared MLP) and Phi-3.5-MoE (std.models.phimoe: `sparsemixer` routing through a
/// custom autograd function in training) and BitNet (std.models.bitnet: RMS norms before
/// `o_proj` and `down_proj`) and Hunyuan MoE (std.models.hunyuan_v1_moe: a float32 gate in a
/// bf16 model) and ERNIE 4.5 MoE (std.models.ernie4_5_moe: a float32 router outside autocast),
/// against their transformers code in the
/// LLM set's harness (CUDA semantics, the same scenarios and sizes): issue 18's bar, and
/// every peak exact.
#[test]
fn more_llm_families_match_transformers() {
    let cases = llm_cases(LLM_FAMILIES_FIXTURE, LLM_FAMILIES, LLM_SCENARIOS);
    assert_llm_set_exact(&cases, 1016);
}

/// GPT-NeoX under peft's LoRA on its attention projections (`query_key_value` and `dense`,
/// 786,432 trainable parameters; the set's q/k/v/o names match no GPT-NeoX module), with and
/// without checkpointing, at the families' `gpt_neox_small` sizes: every peak exact.
#[test]
fn gpt_neox_lora_matches_transformers() {
    let neox = LLM_FAMILIES.iter().filter(|(name, ..)| *name == "gpt_neox_small").copied().collect::<Vec<_>>();
    let cases = llm_cases(LLM_GPT_NEOX_LORA_FIXTURE, &neox, GPT_NEOX_LORA_SCENARIOS);
    assert_llm_set_exact(&cases, 4);
}

/// LLM.int8() weights (`quant="int8"`: bitsandbytes 0.50's `Linear8bitLt` in every decoder
/// projection, `linear8bit`, and peft's `lora.bnb.Linear8bitLt`, `lora_linear_8bit`) at the LLM
/// set's `llama_small` sizes and at `llama_wide`'s (whose peaks fall inside the 8-bit layers:
/// the forward's int8 product, the backward's dequantized weight, a checkpointed layer's
/// recomputation), against the set's harness running bitsandbytes' CUDA path
/// (tests/fixtures/calibration/measure_int8.py): prefill, one decode step at a context of the
/// size's `seq` and of 8192, and LoRA (r 16 on q/k/v/o) with and without checkpointing. Every
/// peak exact.
#[test]
fn int8_weights_match_bitsandbytes() {
    let cases = llm_cases(LLM_INT8_FIXTURE, LLM_INT8, LLM_SCENARIOS);
    assert_llm_set_exact(&cases, 18);
}

/// LoRA over LLM.int8() weights with reentrant checkpointing (`checkpoint  reentrant`, torch's
/// `use_reentrant=True`) at both sizes of the two models, against the same harness
/// (measure_int8.py `--reentrant`): a reentrant segment's forward runs under `no_grad`, so
/// no 8-bit layer keeps its input on `ctx` (1.5 GB less than non-reentrant at llama_small's
/// (4, 2048)). Every peak exact.
#[test]
fn int8_reentrant_checkpointing_matches_bitsandbytes() {
    let cases = llm_cases(LLM_INT8_REENTRANT_FIXTURE, LLM_INT8, LLM_SCENARIOS);
    assert_llm_set_exact(&cases, 4);
}

/// LoRA over GPTQ and AWQ weights (`quant="gptq"` and `quant="awq"`: gptqmodel 7.7's layers as
/// `backend="auto_trainable"` selects them on CUDA, `linear_int4`, under peft's
/// `GPTQLoraLinear` and `AwqLoraLinear`) at the LLM set's `llama_small` sizes and at
/// `llama_wide`'s, with and without checkpointing, against the set's harness with the
/// compiled and native kernels replaced by their allocations
/// (tests/fixtures/calibration/measure_int4_train.py). GPTQ's training forward saves the
/// weight it dequantized (a bf16 copy of every adapted layer's weight until backward); AWQ's
/// dequantizes it again in backward. Every peak exact.
#[test]
fn int4_training_matches_gptqmodel() {
    let cases = llm_cases(LLM_INT4_TRAIN_FIXTURE, LLM_INT4, LLM_SCENARIOS);
    assert_llm_set_exact(&cases, 16);
}

/// A padded batch (`model(input_ids, attention_mask=mask)` with zeros in the mask, 64 a row):
/// transformers makes the mask whatever the sizes, so SDPA attends under it over repeated keys
/// and values (the efficient kernel, which keeps both and the mask), 671,154,112 B more than the
/// unpadded batch at (4, 2048) in training. std.models.llama's `llama_padded` at the LLM set's
/// `llama_small` sizes against the set's harness with `--pad 64`
/// (tests/fixtures/calibration/memory_llm_padded.json): training, prefill and one decode step
/// (the mask extended by a column, as `generate()` does), 15 cases, every peak and cache
/// exact, in the measured phase.
#[test]
fn padded_batches_match_transformers() {
    let cases = llm_cases(LLM_PADDED_FIXTURE, LLM_PADDED, LLM_SCENARIOS);
    assert_llm_set_exact(&cases, 15);
}

/// The zoo's models that the precision set measured (its torchvision ResNet-18, VGG-16,
/// MobileNetV2 and AlexNet), against that set: half models, autocast, bf16 training,
/// accumulation, and checkpointing with the segments the harness names (layer1..layer4, each
/// child of `features` with parameters), which the zoo marks `checkpoint(...)`.
#[test]
fn zoo_precision_and_checkpoint_peaks_match_pytorch() {
    const MEASURED: &[accuracy::Model] = &[
        ("resnet18", "use std.models.resnet\n", "resnet18"),
        ("vgg16", "use std.models.vgg\n", "vgg16"),
        ("mobilenet_v2", "use std.models.mobilenet\n", "mobilenet_v2"),
        ("alexnet", "use std.models.alexnet\n", "alexnet"),
    ];
    let cases = cases_of(MEASURED, "a100_80gb", PRECISION_FIXTURE, PRECISION_SCENARIOS);
    // Each model: 7 scenarios at 2 batch sizes and accumulation at one.
    assert_eq!(cases.len(), 4 * 15);
    assert_within_precision_bar(&cases);
}

/// The per-line figures from the parameter set-up and the first forward pass alone (what an
/// editor's hints wait for: `scenario_lines`) are the whole simulation's, for every scenario
/// of every zoo model, as written and with the knobs that make the first step differ from
/// the others (several micro-batches; `cudnn.benchmark`, which tries every convolution
/// algorithm on the first iteration only).
#[test]
fn line_figures_of_the_first_forward_pass_are_the_whole_runs() {
    use netc::costs::simulate::{line_figures, simulate};
    use netc::costs::{config, scenario_costs, scenario_lines};
    use netc::db::Db as _;
    use netc::db::STDLIB_SOURCES;
    use netc::elaborate::scenario_graph;
    use netc::host::Database;
    use netc::knobs::ConvAlgorithm;
    use netc::semantics::files::{ItemLoc, syntax_tree};
    use netc::semantics::setup::scenario_setup;
    use netc::syntax::Item;

    let db = Database::new();
    let modules = db.stdlib().modules(&db).clone();
    let mut scenarios = 0;
    for (module, _) in STDLIB_SOURCES.iter().filter(|(m, _)| m.starts_with("std.models.")) {
        let file = modules[*module];
        for (index, item) in syntax_tree(&db, file).iter().enumerate() {
            let Item::Scenario(s) = item else { continue };
            let what = format!("{module}: scenario `{}`", s.name.text);
            let loc = ItemLoc::new(&db, file, index as u32);
            let costs = scenario_costs(&db, loc).as_ref().unwrap_or_else(|| panic!("{what} simulates"));
            let whole = &costs.simulation;
            let lines = scenario_lines(&db, loc).clone().unwrap_or_else(|| panic!("{what} has line figures"));
            assert!(!whole.lines.is_empty(), "{what}: no lines");
            // A generate() run's line figures are its prefill's; its figures, the largest
            // step's, are another graph's when that is a decode step.
            if costs.generate.is_none_or(|step| step.step == 0) {
                assert_eq!(lines.by_site(), whole.lines, "{what}");
            }
            let graph = scenario_graph(&db, loc).as_ref().expect("a graph");
            let (base, _) = config(&scenario_setup(&db, loc).as_ref().expect("a setup").run);
            let mut accumulating = base;
            accumulating.micro_batches = 3;
            let mut benchmarking = base;
            (benchmarking.cudnn_benchmark, benchmarking.conv_algorithm) = (true, ConvAlgorithm::Im2col);
            for variant in [accumulating, benchmarking] {
                assert_eq!(
                    line_figures(graph, &variant).by_site(),
                    simulate(graph, &variant).lines,
                    "{what}: {variant:?}"
                );
            }
            scenarios += 1;
        }
    }
    assert!(scenarios >= 20, "{scenarios} zoo scenarios");
}

/// The worked example of the articles netc grew from (article 001, section 6): three
/// biased 3x3 convolutions, global average pooling, a linear head; 627,816 parameters. Its
/// inference peak and the im2col workspace of its convolutions are tested below.
const EXAMPLE: &str = include_str!("../../examples/articles_cnn.net");

/// The example's scenarios, plus `serve` again with `conv_algorithm im2col`; their reports
/// by name.
fn article_reports() -> BTreeMap<String, ScenarioReport> {
    let source = format!(
        "{EXAMPLE}\ninfer serve_im2col {{ model articles_cnn()  batch 1  no_grad  eval  conv_algorithm im2col  budget 64 MiB }}\n"
    );
    let (db, file, scenarios) = load("articles_cnn.net", source);
    scenarios
        .into_iter()
        .map(|(name, index)| {
            let report = scenario_report(&db, file, index).expect("reports");
            (name, report)
        })
        .collect()
}

/// The line numbers of the example's three convolutions.
fn conv_lines() -> Vec<u32> {
    let lines = EXAMPLE.lines().enumerate();
    lines.filter(|(_, l)| l.trim_start().starts_with("y = conv2d(")).map(|(i, _)| i as u32 + 1).collect()
}

/// The design's mock-up: `[peak 21.3 MiB / 64 MiB · 33 % · at conv2 (forward)]`, the
/// calibration's simple_cnn infer_nograd figure at batch 1 (22,380,960 B: weights, the
/// input, and the outputs of conv1 and conv2 while conv2 runs).
#[test]
fn inference_peak_is_the_calibrated_21_3_mib() {
    let reports = article_reports();
    let serve = &reports["serve"];
    assert_eq!(serve.batch, Some(1));
    assert_eq!(serve.peak_bytes, 22_380_960);
    assert_eq!(bytes(serve.peak_bytes), "21.3 MiB");
    assert_eq!(serve.budget_bytes, Some(64 << 20));
    assert_eq!((100.0 * serve.total_bytes as f64 / (64 << 20) as f64).round(), 33.0);
    assert_eq!(serve.peak_phase, "forward");
    assert_eq!(serve.peak_op, "conv2d");
    let conv2 = conv_lines()[1];
    assert_eq!(serve.peak_line.as_deref(), Some(format!("articles_cnn.net:{conv2}").as_str()));
    let b = serve.breakdown;
    assert_eq!((b.parameters, b.inputs, b.activations, b.workspace), (2_511_264, 602_112, 19_267_584, 0));
}

/// im2col's column buffer per sample is Cin x K x K x Hout x Wout x 4 bytes: 5,419,008 /
/// 28,901,376 / 14,450,688 for conv1 / conv2 / conv3 (the article prints 1.8 MB for conv1;
/// the formula wins). It lives only while its convolution runs, so the peak grows by the
/// workspace live at the peak (conv2's) and every phase ends as without it.
#[test]
fn im2col_workspace_is_per_line_and_transient_at_the_peak() {
    let reports = article_reports();
    let (direct, im2col) = (&reports["serve"], &reports["serve_im2col"]);
    let lines = conv_lines();
    let workspace: Vec<i128> = lines
        .iter()
        .map(|&n| im2col.lines.iter().find(|l| l.line == n).expect("a conv line").workspace_bytes)
        .collect();
    assert_eq!(workspace, [5_419_008, 28_901_376, 14_450_688]);
    for &n in &lines {
        assert_eq!(direct.lines.iter().find(|l| l.line == n).expect("a conv line").workspace_bytes, 0);
    }
    // The rest of each line's ledger does not move.
    for (d, i) in direct.lines.iter().zip(&im2col.lines) {
        assert_eq!((d.line, d.activation_bytes, d.weight_bytes), (i.line, i.activation_bytes, i.weight_bytes));
    }

    let largest = *workspace.iter().max().expect("three convs");
    assert_eq!(im2col.breakdown.workspace, largest);
    assert_eq!(im2col.ledgers.workspace, largest);
    assert_eq!(im2col.peak_bytes - direct.peak_bytes, im2col.breakdown.workspace);
    assert_eq!(im2col.peak_line, direct.peak_line, "both peak at conv2");
    assert_eq!(bytes(largest), "27.6 MiB");
    // Transient: freed when its op returns.
    let ends = |r: &ScenarioReport| r.phases.iter().map(|p| (p.start, p.end)).collect::<Vec<_>>();
    assert_eq!(ends(direct), ends(im2col));
}

/// The simulated peak of each scenario of `text` (a fixture with scenarios appended), by name
/// in order; the file must have no errors.
fn peaks_of_scenarios(text: String) -> Vec<(String, i128)> {
    use netc::costs::scenario_costs;
    use netc::host::{Database, file_diagnostics};
    use netc::semantics::files::{ItemLoc, syntax_tree};
    use netc::syntax::Item;

    let mut db = Database::new();
    let file = db.set_file(netc::diagnostics::FileName::new("main.net"), text);
    let errors: Vec<_> =
        file_diagnostics(&db, file).iter().filter(|d| d.code.info().code.starts_with('E')).cloned().collect();
    assert!(errors.is_empty(), "{errors:?}");
    let mut peaks = Vec::new();
    for (index, item) in syntax_tree(&db, file).iter().enumerate() {
        let Item::Scenario(s) = item else { continue };
        let costs = scenario_costs(&db, ItemLoc::new(&db, file, index as u32)).as_ref().expect("simulates");
        peaks.push((s.name.text.to_string(), costs.simulation.peak.bytes));
    }
    peaks
}

/// Python's `q, k = relu(q), relu(k)` builds a tuple of both results before it rebinds
/// either name, so the old `q` lives through the second `relu`: one `[N, 1024]` float32 tensor
/// more at the peak than two statements in a row (which free the old `q` first), and exactly
/// what a block returning both does. Unpacking a list binds its items (`b, d, _ = x.shape`
/// reads the dimensions; `_` may repeat, as in Python).
#[test]
fn a_tuple_assignment_holds_the_old_values_until_every_value_is_made() {
    let models = "model tuple() {\n    input x: f32[N, 1024]\n    q = x * 2\n    k = x * 3\n    q, k = relu(q), relu(k)\n    return q + k\n}\n\
                  model in_a_row() {\n    input x: f32[N, 1024]\n    q = x * 2\n    k = x * 3\n    q = relu(q)\n    k = relu(k)\n    return q + k\n}\n\
                  block both(q, k) {\n    return relu(q), relu(k)\n}\n\
                  model by_block() {\n    input x: f32[N, 1024]\n    q = x * 2\n    k = x * 3\n    q, k = both(q, k)\n    return q + k\n}\n\
                  model unpacked() {\n    input x: f32[N, 4, 256]\n    b, _, _ = x.shape\n    h, w = [x.shape[1], x.shape[2]]\n    y, z = [x, relu(x)]\n    return reshape(y + z, [b, h * w])\n}\n";
    let mut text = models.to_string();
    for model in ["tuple", "in_a_row", "by_block", "unpacked"] {
        text.push_str(&format!("infer {model}_serve {{ model {model}()  batch 8  no_grad  device cpu }}\n"));
    }
    let peaks: std::collections::BTreeMap<String, i128> = peaks_of_scenarios(text).into_iter().collect();
    let tensor = 8 * 1024 * 4;
    // The input, the old q and k, the new q and k.
    assert_eq!(peaks["tuple_serve"], 5 * tensor);
    assert_eq!(peaks["in_a_row_serve"], 4 * tensor);
    assert_eq!(peaks["by_block_serve"], peaks["tuple_serve"]);
    // The input, relu(x), their sum, and its reshape is a view.
    assert_eq!(peaks["unpacked_serve"], 3 * tensor);
}

/// A tuple assignment's count must match its names, as Python's unpacking must (E0217), and a
/// list unpacked into the wrong number of names is E0217 once the list is made.
#[test]
fn a_tuple_assignment_with_the_wrong_count_is_e0217() {
    for (body, want) in [
        ("    a, b = x, x, x\n    return a + b\n", vec!["E0217"]),
        ("    a, b, c = x, x\n    return a + b + c\n", vec!["E0217"]),
        ("    a = x, x\n    return a\n", vec!["E0217"]),
        ("    a, b = lstm(x, 4), x\n    return b\n", vec!["E0217"]),
        ("    a, b = x, x\n    a, a = x, x\n    return a + b\n", vec!["E0205"]),
    ] {
        let src = format!("model m() {{\n    input x: f32[N, 4, 4]\n{body}}}\n");
        assert_eq!(crate::support::codes(&src), want, "{body}");
    }
    let src =
        "model m() {\n    input x: f32[N, 4, 4]\n    a, b = x.shape\n    return x\n}\ninfer s { model m()  batch 2 }\n";
    assert_eq!(crate::support::codes(src), ["E0217"]);
}

/// Ops added after the calibration, held to PyTorch's peaks: the models of
/// `tests/fixtures/ops/mean.net`, measured by `tests/fixtures/ops/measure.py` (live storage
/// bytes, CPU semantics, fp32; the script first reproduces the calibration's simple_cnn) into
/// `tests/fixtures/ops/measurements.json`. `mean` saves nothing for backward: were it to keep
/// its input, `channel_mean_cnn`'s forward with grad would hold the last convolution's output
/// (3.2 MB at batch 1) through its fourth convolution. Inference is exact; training is 4 bytes
/// under PyTorch's peak, as on the calibration's simple_cnn itself (a scalar of backward netc
/// does not book), and the three ways of pooling have netc's figure for simple_cnn: PyTorch
/// measured them equal.
#[test]
fn ops_after_the_calibration_match_pytorchs_peaks() {
    let measured: serde_json::Value =
        serde_json::from_str(include_str!("../fixtures/ops/measurements.json")).expect("valid JSON");
    let models = include_str!("../fixtures/ops/mean.net");
    let scenarios = [
        ("infer_nograd", "infer", "no_grad  eval", 0),
        ("infer_grad_eval", "infer", "eval", 0),
        ("train_sgd", "train", "optimizer sgd", 4),
    ];
    let mut predicted = std::collections::BTreeMap::new();
    for (model, batches) in measured["models"].as_object().expect("models") {
        for (batch, figures) in batches.as_object().expect("batches") {
            let n = batch.trim_start_matches("bs");
            let mut text = models.to_string();
            for (name, kind, settings, _) in scenarios {
                text.push_str(&format!("{kind} {name} {{ model {model}()  batch {n}  device cpu  {settings} }}\n"));
            }
            for (name, peak) in peaks_of_scenarios(text) {
                let expected = figures[&name].as_i64().expect("a measured peak") as i128;
                let gap = scenarios.iter().find(|s| s.0 == name).expect("a measured scenario").3;
                assert!(
                    expected - gap <= peak && peak <= expected,
                    "{model} {batch} {name}: netc {peak}, PyTorch {expected}"
                );
                predicted.insert((model.clone(), batch.clone(), name), peak);
            }
        }
    }
    assert_eq!(predicted.len(), 24);
    for ((model, batch, name), peak) in predicted.iter().filter(|((m, ..), _)| m != "channel_mean_cnn") {
        assert_eq!(
            peak,
            &predicted[&("simple_cnn".to_string(), batch.clone(), name.clone())],
            "{model} {batch} {name}"
        );
    }
}

/// The ops added after the calibration (`sum`, `amax`, `cumsum`, `expand`, `select`,
/// `narrow`, `drop_path`, `masked_fill`, `where`, `exp`, `log`, `sin`, `cos`, `sqrt`,
/// `rsqrt`, `neg`, `pow`, `topk`, `gather`, `one_hot`, `arange`), each used once in one
/// model (tests/fixtures/ops/ops_probe.net), against PyTorch 2.15's peaks measured by
/// tests/fixtures/ops/measure_ops.py (CPU float32, batches 2 and 8, inference with and
/// without gradients, two SGD steps): every case exact.
#[test]
fn added_ops_match_pytorchs_peaks() {
    let cases = three_scenario_cases(
        include_str!("../fixtures/ops/ops_probe.net"),
        include_str!("../fixtures/ops/measurements_ops.json"),
        "ops_probe",
    );
    for (batch, run, peak, expected) in &cases {
        assert_eq!(peak, expected, "{batch} {run}");
    }
    assert_eq!(cases.len(), 6);
}

/// The peaks of `model()` (of the fixture `text`) in [`THREE_SCENARIOS`] on the CPU at each
/// batch `measurements` has for it (`bs<n>`), beside the measured ones: (batch, run, netc,
/// measured).
fn three_scenario_cases(text: &str, measurements: &str, model: &str) -> Vec<(String, String, i128, i128)> {
    let measured: serde_json::Value = serde_json::from_str(measurements).expect("valid JSON");
    let mut text = text.to_string();
    for (batch, _) in measured[model].as_object().expect("batches") {
        let n = batch.trim_start_matches("bs");
        for (name, kind, settings) in THREE_SCENARIOS {
            text.push_str(&format!(
                "{kind} {batch}__{name} {{ model {model}()  batch {n}  device cpu  {settings} }}\n"
            ));
        }
    }
    let peaks = peaks_of_scenarios(text);
    peaks
        .into_iter()
        .map(|(name, peak)| {
            let (batch, run) = name.split_once("__").expect("batch__run");
            let expected = measured[model][batch][run].as_i64().expect("a measured peak") as i128;
            (batch.to_string(), run.to_string(), peak, expected)
        })
        .collect()
}

/// A sparse mixture-of-experts layer (`moe_sparse_block`: the router's f32 softmax, `topk`
/// and in-place renormalization, `sort`, `index`, `histc`, two `grouped_mm`, the f32 routing
/// product, `index_put` and the inverse permutation) in a small classifier
/// (tests/fixtures/ops/moe.net), against transformers 5.24's own `MixtralSparseMoeBlock`
/// measured by tests/fixtures/ops/measure_moe.py (CPU float32, batches 2 and 8, inference
/// with and without gradients, two SGD steps). Exact, but where the measuring tool changes
/// what PyTorch runs: under a dispatch mode (the tracker's, as FakeTensorMode's) the backward
/// of `x[indices]` writes its gradient out of place (`index_put`, one more tensor of `x`'s
/// size), where a plain run writes it into the zeros in place (`_index_put_impl_`; the
/// fixture's `index_backward` lists both, from the profiler). netc follows the plain run, so a
/// training peak at that op may be under the measured one by at most that tensor: 1,024 B at
/// batch 8.
#[test]
fn a_mixture_of_experts_matches_transformers() {
    let measurements = include_str!("../fixtures/ops/measurements_moe.json");
    let cases = three_scenario_cases(include_str!("../fixtures/ops/moe.net"), measurements, "moe_probe");
    let report: Vec<String> = cases
        .iter()
        .map(|(batch, run, peak, expected)| {
            format!("{batch} {run}: netc {peak}, transformers {expected} ({:+})", peak - expected)
        })
        .collect();
    println!("{}", report.join("\n"));
    let measured: serde_json::Value = serde_json::from_str(measurements).expect("valid JSON");
    let paths = &measured["index_backward"];
    assert_eq!(paths["without_mode"], serde_json::json!(["aten::_index_put_impl_"]));
    assert!(paths["with_dispatch_mode"].as_array().expect("ops").contains(&serde_json::json!("aten::index_put")));
    for (batch, run, peak, expected) in &cases {
        // The routed rows' f32 `[N * 16 * 2, 64]` gradient of `weighted_out[inv_perm]`.
        let n: i128 = batch.trim_start_matches("bs").parse().expect("a batch");
        let copy = if run == "train_sgd" { n * 16 * 2 * 64 * 4 } else { 0 };
        assert!(expected - copy <= *peak && peak <= expected, "{}", report.join("\n"));
    }
    assert_eq!(cases.len(), 6);
}

/// A capacity-factor mixture of experts (`moe_capacity_block`: DeepSpeed 0.19.8's `MoE`, top-2
/// GShard gating with tokens dropped past each expert's capacity and the rest padded into an
/// `[E, C, d]` buffer by `scatter` and `index_select`, the experts over its chunks, the rows
/// gathered back and weighted in float32) in a small classifier (tests/fixtures/ops/
/// moe_capacity.net) at capacity factors 1 and 2, against DeepSpeed's own layer measured by
/// tests/fixtures/ops/measure_moe_capacity.py (CPU float32, batches 2 and 8, inference with and
/// without gradients, two SGD steps). Exact, but that DeepSpeed keeps the last call's loss and
/// counts on the module (`self.l_aux`, 4 B with the 16 B its graph saves, and
/// `self.exp_counts`, 32 B) into the next step, where the block frees them on return: 52 B
/// under when the peak is in the second step.
#[test]
fn a_capacity_factor_mixture_of_experts_matches_deepspeed() {
    let measurements = include_str!("../fixtures/ops/measurements_moe_capacity.json");
    let text = include_str!("../fixtures/ops/moe_capacity.net");
    let mut report = Vec::new();
    let mut cases = Vec::new();
    for model in ["moe_capacity_cf1", "moe_capacity_cf2"] {
        for (batch, run, peak, expected) in three_scenario_cases(text, measurements, model) {
            report.push(format!("{model} {batch} {run}: netc {peak}, DeepSpeed {expected} ({:+})", peak - expected));
            cases.push((peak, expected));
        }
    }
    println!("{}", report.join("\n"));
    let module_state = 4 + 16 + 4 * 8;
    assert!(
        cases.iter().all(|(peak, expected)| *peak == *expected || *peak == expected - module_state),
        "{}",
        report.join("\n")
    );
    assert_eq!(cases.len(), 12);
}

/// The zoo's Mixtral with `capacity_factor` (DeepSpeed's MoE layer around its experts) has the
/// grouped model's parameters and active parameters (its separate experts each `routed(...,
/// 2, 8)`: the router and 2 of 8 experts a token), and its experts run `E * capacity` rows a layer, padding
/// included: at 4 x 2,048 tokens, 8 experts and a factor of 1.25, 2,560 slots an expert for the
/// 16,384 routes, so 25 % more expert MACs than the grouped model's (and the gate's two
/// einsums).
#[test]
fn mixtral_with_a_capacity_factor_pads_every_expert() {
    use netc::report::report;
    let text = "use std.models.mixtral\n\
        train grouped { model mixtral(vocab=32000, d=1024, layers=2, heads=16, kv_heads=8, ffn=3584)  batch 4  seq 2048  precision bf16  optimizer adamw  loss causal_lm }\n\
        train padded { model mixtral(vocab=32000, d=1024, layers=2, heads=16, kv_heads=8, ffn=3584, capacity_factor=1.25)  batch 4  seq 2048  precision bf16  optimizer adamw  loss causal_lm }\n";
    let (db, file, _) = load("capacity.net", text.to_string());
    let r = report(&db, &[file], None);
    let [grouped, padded] = &r.scenarios[..] else { panic!("two reports") };
    assert_eq!(grouped.params, padded.params);
    let (tokens, experts, d, ffn, layers) = (4 * 2048i128, 8i128, 1024i128, 3584i128, 2i128);
    assert_eq!(grouped.active_params, grouped.params - layers * (experts - 2) * 3 * d * ffn);
    assert_eq!(padded.active_params, grouped.active_params);
    let capacity = (tokens as f64 / experts as f64 * 1.25 * 2.0).ceil() as i128;
    assert_eq!(capacity, 2560);
    let expert_macs = |rows: i128| rows * 3 * d * ffn * layers;
    // And the gate's two `einsum("se,se->s")` of its renormalization.
    let gate_einsums = 2 * tokens * experts * layers;
    assert_eq!(padded.macs - grouped.macs, expert_macs(experts * capacity) - expert_macs(2 * tokens) + gate_einsums);
}

/// QLoRA as transformers 5.24, bitsandbytes 0.50 and peft 0.21 run it: a Llama (d 512, 2
/// layers, 8 heads and 2 key/value heads) loaded in 4 bits (`BitsAndBytesConfig`: NF4 or FP4,
/// with and without double quantization, bfloat16 compute; every linear but the head a
/// `Linear4bit`) with peft's LoRA (r 8 on q, k, v and o: `lora_linear_4bit`), two AdamW steps
/// of `model(input_ids, labels=input_ids)` on the CPU, measured by
/// tests/fixtures/ops/measure_qlora.py: feed-forward 2048 and vocabulary 2000 at (1, 128) and
/// (2, 512), and feed-forward 4096 and vocabulary 256 at (2, 512), where the peak is inside
/// the layers; two of them again with bitsandbytes' `AdamW8bit` (`optimizer adam8bit`). The
/// weights as stored (`static`: bytes before the run) and the peak.
#[test]
fn qlora_matches_bitsandbytes_and_peft() {
    use netc::costs::scenario_costs;
    use netc::semantics::files::ItemLoc;
    let measured: serde_json::Value =
        serde_json::from_str(include_str!("../fixtures/ops/measurements_qlora.json")).expect("valid JSON");
    let mut text = String::from("use std.models.llama\n");
    let lora = "lora_r=8, lora_alpha=16, lora_dropout=0.05, lora_targets=\"q_proj,k_proj,v_proj,o_proj\"";
    // Every torch-AdamW case, and two with bitsandbytes' `AdamW8bit` (`optimizer adam8bit`).
    let mut cases: Vec<(String, &serde_json::Value, &str)> = Vec::new();
    for (set, optimizer) in [("train", "adamw"), ("train_adamw8bit", "adam8bit")] {
        for (name, m) in measured[set].as_object().expect("cases") {
            cases.push((format!("{}{name}", if optimizer == "adamw" { "" } else { "eight_bit_" }), m, optimizer));
        }
    }
    for (name, _, optimizer) in &cases {
        let name = name.as_str();
        let wide = name.contains("wide_");
        let (vocab, ffn) = if wide { (256, 4096) } else { (2000, 2048) };
        let quant = if name.contains("fp4") { "fp4" } else { "nf4" };
        let double_quant = name.contains("_dq_");
        let (_, size) = name.rsplit_once("_b").expect("a size");
        let (batch, seq) = size.split_once("_s").expect("b<batch>_s<seq>");
        text.push_str(&format!(
            "train {name} {{ model llama(vocab={vocab}, d=512, layers=2, heads=8, kv_heads=2, ffn={ffn}, {lora}, \
             quant=\"{quant}\", double_quant={double_quant})  batch {batch}  seq {seq}  precision bf16  optimizer {optimizer}  \
             loss causal_lm  device cpu }}\n"
        ));
    }
    let (db, file, items) = load("qlora.net", text);
    let mut report = Vec::new();
    let mut off = Vec::new();
    for (name, m, _) in &cases {
        let costs = scenario_costs(&db, ItemLoc::new(&db, file, items[name])).as_ref().expect("simulates");
        let simulation = &costs.simulation;
        let (static_bytes, peak) = (simulation.phases[0].start, simulation.peak.bytes);
        let (want_static, want_peak) =
            (m["static"].as_i64().expect("static") as i128, m["peak"].as_i64().expect("peak") as i128);
        report.push(format!(
            "{name}: static {static_bytes} vs {want_static}, peak {peak} vs {want_peak} ({:+})",
            peak - want_peak
        ));
        if static_bytes != want_static || peak != want_peak {
            off.push(name.clone());
        }
    }
    // Inference of the wide model under no_grad (in training mode: in eval bitsandbytes repacks
    // the weights for a CPU-only kernel), and one bare 4-bit layer [8, 4096] -> 4096, whose
    // dequantized weight is the peak. The tracker sees a custom op's output, not what its kernel
    // allocates inside: the layer's figure is bitsandbytes' default `gemm_4bit` kernel run
    // itself (`kernel_peak`; through the op the tracker reports only the output).
    let mut text = String::from(
        "use std.models.llama\nmodel layer(double_quant: bool = false) {\n    input x: bf16[N, 4096]\n    return frozen(linear4bit(x, 4096, bias=false, double_quant=double_quant))\n}\n",
    );
    let inference = [
        (
            "infer",
            "wide_nf4_dq_b2_s512",
            "llama(vocab=256, d=512, layers=2, heads=8, kv_heads=2, ffn=4096, quant=\"nf4\", double_quant=true)",
            "batch 2  seq 512",
            "peak",
        ),
        (
            "infer",
            "wide_nf4_b2_s512",
            "llama(vocab=256, d=512, layers=2, heads=8, kv_heads=2, ffn=4096, quant=\"nf4\")",
            "batch 2  seq 512",
            "peak",
        ),
        ("layer", "dq_nograd", "layer(double_quant=true)", "batch 8", "kernel_peak"),
        ("layer", "nograd", "layer()", "batch 8", "kernel_peak"),
    ];
    for (set, name, model, size, _) in inference {
        text.push_str(&format!(
            "infer {set}_{name} {{ model {model}  {size}  precision bf16  no_grad  device cpu }}\n"
        ));
    }
    let (db, file, items) = load("qlora_infer.net", text);
    for (set, name, _, _, figure) in inference {
        let costs =
            scenario_costs(&db, ItemLoc::new(&db, file, items[&format!("{set}_{name}")])).as_ref().expect("simulates");
        let m = &measured[set][name];
        let (static_bytes, peak) = (costs.simulation.phases[0].start, costs.simulation.peak.bytes);
        let (want_static, want_peak) =
            (m["static"].as_i64().expect("static") as i128, m[figure].as_i64().expect("peak") as i128);
        report.push(format!(
            "{set} {name}: static {static_bytes} vs {want_static}, peak {peak} vs {want_peak} ({:+})",
            peak - want_peak
        ));
        if static_bytes != want_static || peak != want_peak {
            off.push(format!("{set} {name}"));
        }
    }
    println!("{}", report.join("\n"));
    assert!(off.is_empty(), "off: {off:?}\n{}", report.join("\n"));
    assert_eq!(cases.len(), 10);
}

/// QLoRA prepared as peft's recipe prepares it (`prepare_model_for_kbit_training` before
/// `get_peft_model`): the float parameters outside the 4-bit layers in float32 (`prepare_kbit`),
/// so float32 activations that each 4-bit layer casts to bfloat16 and back, and with peft's
/// default checkpointing torch's reentrant variant (`checkpoint reentrant`), against
/// tests/fixtures/ops/measure_kbit.py: the casts alone, the defaults, and non-reentrant
/// checkpointing, at measure_qlora.py's sizes. The weights as stored and the peak.
#[test]
fn kbit_preparation_matches_peft() {
    use netc::costs::scenario_costs;
    use netc::semantics::files::ItemLoc;
    let measured: serde_json::Value =
        serde_json::from_str(include_str!("../fixtures/ops/measurements_kbit.json")).expect("valid JSON");
    let lora = "lora_r=8, lora_alpha=16, lora_dropout=0.05, lora_targets=\"q_proj,k_proj,v_proj,o_proj\"";
    let mut text = String::from("use std.models.llama\n");
    let mut cases = Vec::new();
    let recipe = "prepare_kbit  checkpoint  reentrant";
    for (set, settings) in [
        ("cast", "prepare_kbit"),
        ("reentrant", recipe),
        ("nonreentrant", "prepare_kbit  checkpoint"),
        ("paged", recipe),
    ] {
        for (name, m) in measured[set].as_object().expect("cases") {
            let (vocab, ffn) = if name.starts_with("wide_") { (256, 4096) } else { (2000, 2048) };
            // The paged set names its optimizer first (bitsandbytes' `PagedAdamW8bit`,
            // `PagedAdamW32bit`); the others use torch's AdamW.
            let (optimizer, size) = match name.split_once("_b") {
                Some(("paged_adamw_8bit", size)) => ("paged_adam8bit", size),
                Some(("paged_adamw_32bit", size)) => ("paged_adam32bit", size),
                _ => ("adamw", name.trim_start_matches("wide_").trim_start_matches('b')),
            };
            let (batch, seq) = size.split_once("_s").expect("b<batch>_s<seq>");
            let scenario = format!("{set}_{name}");
            text.push_str(&format!(
                "train {scenario} {{ model llama(vocab={vocab}, d=512, layers=2, heads=8, kv_heads=2, ffn={ffn}, {lora}, \
                 quant=\"nf4\", double_quant=true)  batch {batch}  seq {seq}  precision bf16  optimizer {optimizer}  \
                 loss causal_lm  {settings}  device cpu }}\n"
            ));
            cases.push((scenario, m));
        }
    }
    let (db, file, items) = load("kbit.net", text);
    let mut report = Vec::new();
    let mut off = Vec::new();
    for (name, m) in &cases {
        let costs = scenario_costs(&db, ItemLoc::new(&db, file, items[name])).as_ref().expect("simulates");
        let (static_bytes, peak) = (costs.simulation.phases[0].start, costs.simulation.peak.bytes);
        let (want_static, want_peak) =
            (m["static"].as_i64().expect("static") as i128, m["peak"].as_i64().expect("peak") as i128);
        report.push(format!("{name}: static {static_bytes} vs {want_static}, peak {peak} vs {want_peak}"));
        if static_bytes != want_static || peak != want_peak {
            off.push(name.clone());
        }
    }
    assert_eq!(cases.len(), 13);
    assert!(off.is_empty(), "off: {off:?}\n{}", report.join("\n"));

    // peft casts nothing in a GPTQ model (`is_gptq_quantized`), and casts an AWQ one's
    // embedding, head and norms: (2 * 2000 * 512 + 5 * 512) parameters, 2 bytes more each.
    let mut text = String::from("use std.models.llama\n");
    for quant in ["gptq", "awq"] {
        for (name, settings) in [("plain", ""), ("prepared", "prepare_kbit")] {
            text.push_str(&format!(
                "train {quant}_{name} {{ model llama(vocab=2000, d=512, layers=2, heads=8, kv_heads=2, ffn=2048, {lora}, \
                 quant=\"{quant}\")  batch 1  seq 128  precision bf16  optimizer adamw  {settings}  device cpu }}\n"
            ));
        }
    }
    let (db, file, items) = load("kbit_int4.net", text);
    let weights = |name: &str| {
        let costs = scenario_costs(&db, ItemLoc::new(&db, file, items[name])).as_ref().expect("simulates");
        costs.simulation.phases[0].start
    };
    assert_eq!(weights("gptq_prepared"), weights("gptq_plain"));
    assert_eq!(weights("awq_prepared") - weights("awq_plain"), (2 * 2000 * 512 + 5 * 512) * 2);
}

/// bitsandbytes' paged optimizers (`paged_adam8bit`, `paged_adam32bit`): on CUDA the moments of
/// a parameter tensor of 100,000 elements or more live in unified memory (`get_state_buffer`,
/// `F.get_paged`), outside the allocator and the peak; a smaller tensor's are torch tensors;
/// on the CPU bitsandbytes pages nothing. Derived from bitsandbytes 0.50's source (the CUDA
/// side is not measured; the CPU fallback is, in `kbit_preparation_matches_peft`).
#[test]
fn paged_optimizers_page_large_tensors_on_cuda() {
    use netc::costs::scenario_costs;
    use netc::semantics::files::ItemLoc;
    let mut text = String::from("model m() {\n    input x: f32[N, 1024]\n    return linear(linear(x, 512), 64)\n}\n");
    for optimizer in ["adam8bit", "paged_adam8bit", "paged_adam32bit"] {
        for device in ["a100_80gb", "cpu"] {
            text.push_str(&format!(
                "train {optimizer}_{device} {{ model m()  batch 8  optimizer {optimizer}  device {device} }}\n"
            ));
        }
    }
    let (db, file, items) = load("paged.net", text);
    let simulation =
        |name: &str| &scenario_costs(&db, ItemLoc::new(&db, file, items[name])).as_ref().expect("simulates").simulation;
    // Only the first weight, 1024 x 512 = 524,288 elements, is paged: its two moments, one
    // byte each in 8 bits (its block scales stay torch tensors), four in 32.
    let large = 1024 * 512;
    assert_eq!(simulation("paged_adam8bit_a100_80gb").paged_optimizer_state, 2 * large);
    assert_eq!(simulation("paged_adam32bit_a100_80gb").paged_optimizer_state, 8 * large);
    // Outside the peak: the paged 8-bit run peaks lower than the unpaged one by them.
    let (unpaged, paged) =
        (simulation("adam8bit_a100_80gb").peak.bytes, simulation("paged_adam8bit_a100_80gb").peak.bytes);
    assert_eq!(unpaged - paged, 2 * large);
    // On the CPU nothing is paged and the 8-bit optimizers are one.
    for name in ["paged_adam8bit_cpu", "paged_adam32bit_cpu"] {
        assert_eq!(simulation(name).paged_optimizer_state, 0);
    }
    assert_eq!(simulation("paged_adam8bit_cpu").peak, simulation("adam8bit_cpu").peak);
}

/// What a GPTQ or AWQ layer (`linear_int4`) and a fine-grained float8 layer (`linear_fp8`)
/// store, against the modules themselves (gptqmodel 7.7's `TorchLinear` and `AwqTorchLinear`,
/// transformers' `FP8Linear`; tests/fixtures/ops/measure_quant_storage.py): every shape, group
/// and block to the byte, and AWQ's refusal of a group that does not divide the input.
#[test]
fn gptq_awq_and_fp8_storage_match_their_modules() {
    use netc::costs::scenario_costs;
    use netc::semantics::files::ItemLoc;
    let measured: serde_json::Value =
        serde_json::from_str(include_str!("../fixtures/ops/measurements_quant_storage.json")).expect("valid JSON");
    let measured = measured.as_object().expect("an object");
    let mut text = String::new();
    let mut names = Vec::new();
    for (i, (case, _)) in measured.iter().enumerate() {
        let words: Vec<&str> = case.split(' ').collect();
        let (inputs, outputs) = words[2].split_once('x').expect("<in>x<out>");
        let layer = match words[0] {
            "fp8" => format!("linear_fp8(x, {outputs}, block_size={})", words[1].trim_start_matches("block=")),
            format => format!(
                "linear_int4(x, {outputs}, bias={}, group={}, format=\"{format}\")",
                words[3] == "bias=True",
                words[1].trim_start_matches('g')
            ),
        };
        let model = format!("model m{i}() {{\n    input x: bf16[N, {inputs}]\n    return frozen({layer})\n}}\n");
        if measured[case.as_str()].is_string() {
            // gptqmodel refused the shape: so does netc, with an error.
            let mut db = netc::host::Database::new();
            let refused = db.set_file(netc::diagnostics::FileName::new("refused.net".to_string()), model);
            let errors = netc::host::file_diagnostics(&db, refused);
            assert!(errors.iter().any(|d| d.severity == netc::diagnostics::Severity::Error), "{case}: accepted");
            continue;
        }
        text.push_str(&model);
        text.push_str(&format!("infer c{i} {{ model m{i}()  batch 1  precision bf16  no_grad  device cpu }}\n"));
        names.push((case, format!("c{i}"), inputs.parse::<i128>().expect("inputs") * 2));
    }
    let (db, file, items) = load("quant_storage.net", text);
    let mut off = Vec::new();
    for (case, scenario, input_bytes) in names {
        let want = measured[case.as_str()].as_i64().expect("bytes") as i128;
        let costs = scenario_costs(&db, ItemLoc::new(&db, file, items[&scenario])).as_ref().expect("simulates");
        // The bytes before the run: the stored layer and the input.
        let stored = costs.simulation.phases[0].start - input_bytes;
        if stored != want {
            off.push(format!("{case}: {stored} vs {want}"));
        }
    }
    assert!(off.is_empty(), "{off:#?}");
    assert_eq!(measured.len(), 70);
}

/// A quantized layer's weight is never trained, whether or not the model marks it
/// `frozen(...)` (bitsandbytes' `Params4bit` and `Int8Params` have no gradient): no gradient,
/// no optimizer state, not in the trainable count.
#[test]
fn a_quantized_weight_is_never_trained() {
    use netc::report::report;
    for layer in [
        "linear4bit(x, 256, bias=false)",
        "linear8bit(x, 256, bias=false)",
        "linear_int4(x, 256)",
        "linear_fp8(x, 256)",
    ] {
        let text = format!(
            "model bare() {{\n    input x: bf16[N, 256]\n    return linear({layer}, 10)\n}}\n\
             model marked() {{\n    input x: bf16[N, 256]\n    return linear(frozen({layer}), 10)\n}}\n\
             train a {{ model bare()  batch 4  precision bf16  optimizer adamw  device cpu }}\n\
             train b {{ model marked()  batch 4  precision bf16  optimizer adamw  device cpu }}\n"
        );
        let (db, file, _) = load("quantized.net", text);
        let r = report(&db, &[file], None);
        let [bare, marked] = &r.scenarios[..] else { panic!("two reports") };
        // The head's 2,570 parameters are the trained ones.
        assert_eq!((bare.trainable_params, marked.trainable_params), (2570, 2570), "{layer}");
        assert_eq!((bare.peak_bytes, bare.ledgers), (marked.peak_bytes, marked.ledgers), "{layer}");
    }
}

/// The zoo's other transformers families against their own code on the CPU (bfloat16, CPU
/// semantics), measured by tests/fixtures/ops/measure_hf.py: Qwen2 (std.models.qwen2: biased
/// q/k/v, the head tied to the embedding), Phi-3 (std.models.phi3: fused q/k/v and gate/up
/// projections) and Mistral (std.models.mistral), 2 layers, at (1,
/// 128) and (2, 512): full fine-tuning and peft LoRA (r 8 on q, k, v and o) with two torch
/// AdamW steps, and a prefill that keeps its `DynamicCache`.
#[test]
fn transformers_families_match_on_the_cpu() {
    use netc::costs::scenario_costs;
    use netc::semantics::files::ItemLoc;
    let measured: serde_json::Value =
        serde_json::from_str(include_str!("../fixtures/ops/measurements_hf.json")).expect("valid JSON");
    let models = [
        ("qwen2_small", "qwen2", "qwen2(vocab=4000, d=512, layers=2, heads=8, kv_heads=2, ffn=1408, tied=true"),
        ("mistral_small", "mistral", "mistral(vocab=4000, d=512, layers=2, heads=8, kv_heads=2, ffn=1792"),
        ("phi3_small", "phi3", "phi3(vocab=4000, d=512, layers=2, heads=8, kv_heads=2, ffn=1792"),
    ];
    let mut report = Vec::new();
    let mut off = Vec::new();
    for (name, module, call) in models {
        let mut text = format!("use std.models.{module}\n");
        let mut names = Vec::new();
        for (size, runs) in measured["models"][name].as_object().expect("sizes") {
            let (batch, seq) = size.trim_start_matches('b').split_once("_s").expect("b<batch>_s<seq>");
            for (run, peak) in runs.as_object().expect("runs") {
                // Phi-3 fuses q, k and v: peft targets `qkv_proj` and `o_proj`.
                let targets = if module == "phi3" { "qkv_proj,o_proj" } else { "q_proj,k_proj,v_proj,o_proj" };
                let lora = format!(", lora_r=8, lora_alpha=16, lora_dropout=0.05, lora_targets=\"{targets}\"");
                let (kind, args, settings) = match run.as_str() {
                    "train_full_bf16" => ("train", "", "optimizer adamw  loss causal_lm"),
                    "train_lora_bf16" => ("train", lora.as_str(), "optimizer adamw  loss causal_lm"),
                    _ => ("infer", "", "no_grad  eval  cache dynamic"),
                };
                let scenario = format!("{size}__{run}");
                text.push_str(&format!(
                    "{kind} {scenario} {{ model {call}{args})  batch {batch}  seq {seq}  precision bf16  {settings}  device cpu }}\n"
                ));
                names.push((scenario, peak.as_i64().expect("a peak") as i128));
            }
        }
        let (db, file, items) = load(&format!("{name}.net"), text);
        for (scenario, expected) in names {
            let costs = scenario_costs(&db, ItemLoc::new(&db, file, items[&scenario])).as_ref().expect("simulates");
            let peak = costs.simulation.peak.bytes;
            report.push(format!("{name} {scenario}: netc {peak}, transformers {expected} ({:+})", peak - expected));
            if peak != expected {
                off.push(format!("{name} {scenario}"));
            }
        }
    }
    println!("{}", report.join("\n"));
    assert!(off.is_empty(), "off: {off:?}\n{}", report.join("\n"));
    assert_eq!(report.len(), 18);
}

/// Gemma 2 (std.models.gemma2) against transformers 5.24's own `Gemma2ForCausalLM` on the CPU
/// (bfloat16; its eager, softcapped attention), measured by tests/fixtures/ops/measure_gemma2.py:
/// 2 layers (one sliding-window layer of window 128, one global), at (1, 128) and (2, 512):
/// full fine-tuning with and without checkpointing per decoder layer, peft LoRA (r 8 on q, k,
/// v and o), a prefill that keeps its `DynamicCache`, and one decode step after a prefill of
/// `seq` tokens (at 512 the sliding layer's cache holds the prompt's storage, then 128 tokens).
/// Every peak is exact (checkpointed, each layer keeps the positions it is passed and does
/// not read until its backward; in inference the sliding layer's cache makes an int64
/// `_sliding_window_tensor`).
#[test]
fn gemma2_matches_transformers_on_the_cpu() {
    use netc::costs::scenario_costs;
    use netc::semantics::files::ItemLoc;
    let measured: serde_json::Value =
        serde_json::from_str(include_str!("../fixtures/ops/measurements_gemma2.json")).expect("valid JSON");
    let call =
        "gemma2(vocab=4000, d=512, layers=2, heads=8, kv_heads=4, head_dim=64, ffn=1536, window=128, scaling=0.125";
    let lora = ", lora_r=8, lora_alpha=16, lora_dropout=0.05, lora_targets=\"q_proj,k_proj,v_proj,o_proj\"";
    let mut text = "use std.models.gemma2\n".to_string();
    let mut names = Vec::new();
    for (size, runs) in measured["gemma2_small"].as_object().expect("sizes") {
        let (batch, seq) = size.trim_start_matches('b').split_once("_s").expect("b<batch>_s<seq>");
        for (run, peak) in runs.as_object().expect("runs") {
            let train = "precision bf16  optimizer adamw  loss causal_lm";
            let (kind, args, settings) = match run.as_str() {
                "train_full_bf16" => ("train", "", format!("seq {seq}  {train}")),
                "train_full_ckpt_bf16" => ("train", "", format!("seq {seq}  {train}  checkpoint")),
                "train_lora_bf16" => ("train", lora, format!("seq {seq}  {train}")),
                "infer_prefill_bf16" => {
                    ("infer", "", format!("seq {seq}  precision bf16  no_grad  eval  cache dynamic"))
                }
                _ => ("infer", "", format!("seq 1  context {seq}  precision bf16  no_grad  eval  cache dynamic")),
            };
            let scenario = format!("{size}__{run}");
            text.push_str(&format!(
                "{kind} {scenario} {{ model {call}{args})  batch {batch}  {settings}  device cpu }}\n"
            ));
            names.push((scenario, peak.as_i64().expect("a peak") as i128));
        }
    }
    let (db, file, items) = load("gemma2_small.net", text);
    let mut report = Vec::new();
    let mut off = Vec::new();
    for (scenario, expected) in names {
        let costs = scenario_costs(&db, ItemLoc::new(&db, file, items[&scenario])).as_ref().expect("simulates");
        let peak = costs.simulation.peak.bytes;
        report.push(format!("{scenario}: netc {peak}, transformers {expected} ({:+})", peak - expected));
        if peak != expected {
            off.push(scenario);
        }
    }
    println!("{}", report.join("\n"));
    assert!(off.is_empty(), "off: {off:?}\n{}", report.join("\n"));
    assert_eq!(report.len(), 10);
}

/// `sdpa` runs the kernel PyTorch 2.15 picks for the device, dtype and shapes, and keeps what
/// that kernel keeps. One attention layer (tests/fixtures/ops/attention.net, N 4, T 100,
/// E 256, 4 heads), measured per kernel by tests/fixtures/ops/measure_sdpa.py: CPU flash (the
/// CPU's choice) and the math path (forced) on real CPU tensors; CUDA's efficient kernel
/// (float32 on an A100), FlashAttention (bfloat16 on an A100) and cuDNN (bfloat16 on an
/// H100) on meta tensors. The math path is measured twice more: on row-major q, k, v (no
/// operand copies) and written out with `matmul`/`softmax`/`*`. Inference is exact; training
/// is at most 8 B under (the loss's scalars, as in every training figure). The math path's
/// backward is staged as PyTorch's decomposed one runs it (`math_attention`): on row-major
/// inputs its peak is the second `bmm`'s backward, which frees v; it was 179,196 B (4.0%)
/// over while netc held everything the path saved until all three input gradients were made.
#[test]
fn sdpa_picks_pytorchs_kernel_and_keeps_what_it_keeps() {
    let measured: serde_json::Value =
        serde_json::from_str(include_str!("../fixtures/ops/measurements_sdpa.json")).expect("valid JSON");
    // (kernel measured, model, device, precision)
    let kernels = [
        ("cpu_flash", "attention_probe()", "cpu", "fp32"),
        ("math", "attention_probe(backend=\"math\")", "cpu", "fp32"),
        ("math_rowmajor", "attention_probe_rowmajor(backend=\"math\")", "cpu", "fp32"),
        ("written_out", "attention_written_out()", "cpu", "fp32"),
        ("cuda_efficient", "attention_probe()", "a100_80gb", "fp32"),
        ("cuda_flash", "attention_probe()", "a100_80gb", "bf16"),
        ("cuda_cudnn", "attention_probe()", "h100_80gb", "bf16"),
    ];
    let mut text = include_str!("../fixtures/ops/attention.net").to_string();
    for (kernel, model, device, precision) in kernels {
        let common = format!("model {model}  batch 4  device {device}  precision {precision}");
        text.push_str(&format!("infer {kernel}__infer_nograd {{ {common}  no_grad  eval }}\n"));
        text.push_str(&format!("train {kernel}__train_sgd {{ {common}  optimizer sgd }}\n"));
    }
    let peaks = peaks_of_scenarios(text);
    for (name, peak) in &peaks {
        let (kernel, run) = name.split_once("__").expect("kernel__run");
        let expected = measured["kernels"][kernel][run].as_i64().expect("a measured peak") as i128;
        let (under, over) = match (kernel, run) {
            (_, "train_sgd") => (8, 0),
            _ => (0, 0),
        };
        assert!(
            expected - under <= *peak && *peak <= expected + over,
            "{kernel} {run}: netc {peak}, PyTorch {expected}"
        );
    }
    assert_eq!(peaks.len(), 14);
}

/// `mul` and `matmul` keep an operand only for the other operand's gradient (PyTorch's
/// generated autograd code saves a tensor only for a gradient it computes): multiplying by a
/// buffer keeps the buffer, not the activation; multiplying by the input keeps the input.
/// Measured by tests/fixtures/ops/measure_saved.py (CPU float32, batch 32, two SGD steps):
/// 87,384 B; netc keeps 4 B less (the loss's scalars), and kept both operands before
/// (95,316 B: the linear output `mul` does not keep, and `q`).
#[test]
fn an_operand_is_saved_only_for_the_other_operands_gradient() {
    let measured: serde_json::Value =
        serde_json::from_str(include_str!("../fixtures/ops/measurements_saved.json")).expect("valid JSON");
    let expected = measured["one_sided_operands"]["bs32"]["train_sgd"].as_i64().expect("a peak") as i128;
    let mut text = include_str!("../fixtures/ops/one_sided.net").to_string();
    text.push_str("train t { model one_sided_operands()  batch 32  device cpu  optimizer sgd }\n");
    let [(_, peak)] = peaks_of_scenarios(text)[..] else { panic!("one scenario") };
    assert!(expected - 8 <= peak && peak <= expected, "netc {peak}, PyTorch {expected}");
}

/// An in-place clamp (`Tensor.clamp_`, OLMo's `clip_qkv`) writes into its tensor and, where
/// the tensor requires grad, keeps autograd's copy of it made before the clamp overwrites it
/// (`clamp_backward` reads `self`): tests/fixtures/ops/measure_clamp.py (CPU float32, batch
/// 32) lists that copy among `ClampBackward1`'s saved tensors and measures the three
/// scenarios. With gradients on, the copy is the 32,768 B between the two inference peaks
/// (an in-place clamp saving the clamped tensor itself would miss it); under `no_grad` no copy
/// and no new tensor is made (an out-of-place clamp holds one more: modelled so, netc was
/// 20,736 B over). Training peaks in `clamp_backward`'s `where`, with its two bool masks and
/// zero scalar live (16,388 B; without them netc was 15,108 B under). Every peak is exact.
#[test]
fn an_in_place_clamp_keeps_a_copy_for_its_backward() {
    let measured: serde_json::Value =
        serde_json::from_str(include_str!("../fixtures/ops/measurements_clamp.json")).expect("valid JSON");
    let copies = measured["saved_by_clamp_"].as_array().expect("saved tensors");
    assert!(copies.len() == 1 && copies[0]["is_the_clamped_tensor"] == false, "{copies:?}");
    let figures = &measured["clamp_in_place"]["bs32"];
    for (name, peak) in op_probe_peaks(include_str!("../fixtures/ops/clamp.net"), "clamp_in_place") {
        assert_eq!(peak, figures[&name].as_i64().expect("a measured peak") as i128, "{name}");
    }
}

/// The peaks of `model`, declared in `models`, in the three scenarios the op probes measure
/// (tests/fixtures/ops/measure.py's `three_scenarios`: `infer_nograd`, `infer_grad_eval`,
/// `train_sgd`), at batch 32 on the CPU.
fn op_probe_peaks(models: &str, model: &str) -> Vec<(String, i128)> {
    op_probe_peaks_at(models, model, 32)
}

/// [`op_probe_peaks`] at batch `batch`.
fn op_probe_peaks_at(models: &str, model: &str, batch: u32) -> Vec<(String, i128)> {
    let mut text = models.to_string();
    for (name, kind, settings) in [
        ("infer_nograd", "infer", "no_grad  eval"),
        ("infer_grad_eval", "infer", "eval"),
        ("train_sgd", "train", "optimizer sgd"),
    ] {
        text.push_str(&format!("{kind} {name} {{ model {model}()  batch {batch}  device cpu  {settings} }}\n"));
    }
    let peaks = peaks_of_scenarios(text);
    assert_eq!(peaks.len(), 3, "{model}");
    peaks
}

/// `logsumexp` (with and without `keepdim`), `tile` (`Tensor.repeat`), std.blocks' `repeat_interleave` and
/// `abs`, each alone between two linear layers (tests/fixtures/ops/reduce_repeat.net), against
/// tests/fixtures/ops/measure_reduce_repeat.py (CPU float32, batch 256): `logsumexp` keeps its
/// input and result and `abs` its input; `tile` keeps nothing; `repeat_interleave` runs
/// `unsqueeze`, `expand`, `clone`, `view`. netc is held to the CPU allocator's peaks
/// (torch.profiler's allocation events), which see what a kernel allocates inside: with
/// gradients off or on, `logsumexp`'s peak is inside its kernel, holding `x - amax(x)` and the
/// maxima besides its result (278,528 B the dispatch-level tracker cannot see: its no_grad
/// figure is that much lower). Every peak is exact but `tile`'s inference ones, 64 B under: a
/// temporary of the kernel's own.
#[test]
fn logsumexp_repeat_and_abs_match_pytorch() {
    let measured: serde_json::Value =
        serde_json::from_str(include_str!("../fixtures/ops/measurements_reduce_repeat.json")).expect("valid JSON");
    let shapes = |call: &str| -> Vec<serde_json::Value> {
        measured["saved"][call].as_array().expect("saved tensors").iter().map(|t| t["shape"].clone()).collect()
    };
    assert_eq!(shapes("torch.logsumexp(h, -1)"), [serde_json::json!([256, 16, 16]), serde_json::json!([256, 16])]);
    assert!(shapes("h.repeat(1, 2, 1)").is_empty());
    assert_eq!(shapes("h.abs()"), [serde_json::json!([256, 16, 16])]);
    assert_eq!(
        measured["aten"]["torch.repeat_interleave(h, 2, dim=1)"],
        serde_json::json!(["detach", "unsqueeze", "expand", "clone", "view"])
    );
    for probe in ["logsumexp", "logsumexp_keepdim", "repeat", "repeat_interleave", "abs"] {
        let model = format!("{probe}_probe");
        for (name, peak) in op_probe_peaks_at(include_str!("../fixtures/ops/reduce_repeat.net"), &model, 256) {
            let allocator = measured[probe]["allocator_bs256"][&name].as_i64().expect("a peak") as i128;
            let tracker = measured[probe]["bs256"][&name]["peak_bytes"].as_i64().expect("a peak") as i128;
            let under = if probe == "repeat" && name != "train_sgd" { 64 } else { 0 };
            assert_eq!(allocator - peak, under, "{probe} {name}: netc {peak}, allocator {allocator}");
            if probe.starts_with("logsumexp") && name == "infer_nograd" {
                // `x - amax(x)`, float32 `[256, 16, 16]`, and the maxima, `[256, 16]`.
                let inside = 256 * 16 * 16 * 4 + 256 * 16 * 4;
                assert_eq!(allocator - tracker, inside, "{probe} {name}: the kernel's own temporaries");
            }
        }
    }
}

/// `unsqueeze` and `squeeze` around a linear head, and masks made by `logical_or`,
/// `logical_and`, `logical_not`, `bitwise_or` and `bitwise_not` multiplied into the hidden
/// states, each between two linear layers (tests/fixtures/ops/views_masks.net), against
/// tests/fixtures/ops/measure_views_masks.py (CPU float32, batch 256): the views keep nothing,
/// the masks have no gradient and the product keeps its bool mask for `h`'s gradient. Every
/// peak equals the dispatch-level tracker's, and the views' the CPU allocator's too. The
/// allocator sees one more float32 copy of the mask (`[256, 256]`, 262,144 B) inside the
/// product: on the CPU, TensorIterator casts an operand of another dtype to the common one
/// before the kernel runs (CUDA kernels cast as they load). netc does not model that CPU
/// temporary: the inference peaks, at the product, are that much under; the training peaks
/// are in the backward, which the copy does not reach.
#[test]
fn views_and_masks_match_pytorch() {
    let measured: serde_json::Value =
        serde_json::from_str(include_str!("../fixtures/ops/measurements_views_masks.json")).expect("valid JSON");
    let saved = |call: &str| measured["saved"][call].clone();
    assert_eq!(saved("h.unsqueeze(1)"), serde_json::json!([]));
    assert_eq!(saved("h.squeeze(1)"), serde_json::json!([]));
    assert_eq!(
        saved("h * torch.logical_or(h > 0, h < -1)"),
        serde_json::json!([{"shape": [256, 16], "dtype": "bool"}])
    );
    let cast_copy = 256 * 256 * 4;
    for probe in ["unsqueeze", "logical_or", "logical_and_not", "bitwise_or_not"] {
        let model = format!("{probe}_probe");
        for (name, peak) in op_probe_peaks_at(include_str!("../fixtures/ops/views_masks.net"), &model, 256) {
            let allocator = measured[probe]["allocator_bs256"][&name].as_i64().expect("a peak") as i128;
            let tracker = measured[probe]["bs256"][&name]["peak_bytes"].as_i64().expect("a peak") as i128;
            assert_eq!(peak, tracker, "{probe} {name}: the tracker's peak");
            let gap = match (probe, name.as_str()) {
                ("unsqueeze", _) => 0,
                (_, "train_sgd") => {
                    // The copy is live in the forward pass, under the backward's peak.
                    assert!(allocator - cast_copy < peak, "{probe} {name}");
                    continue;
                }
                _ => cast_copy,
            };
            assert_eq!(allocator - peak, gap, "{probe} {name}: netc {peak}, allocator {allocator}");
        }
    }
}

/// A custom autograd function whose backward returns None for its second input
/// (`kernel(..., grads=1)`), and `abs` of a detached and of an attached `h`, each between two
/// linear layers (tests/fixtures/ops/custom_grads.net), against
/// tests/fixtures/ops/measure_custom_grads.py (CPU float32, batch 256): the function keeps an
/// edge to `exp`'s node, whose result lives to the backward, but makes no gradient for it
/// (the same function returning one peaks 251,904 B higher in training); `abs` of `detach(h)`
/// is not recorded and keeps nothing. Every peak equals the dispatch-level tracker's.
#[test]
fn custom_gradients_and_detach_match_pytorch() {
    let measured: serde_json::Value =
        serde_json::from_str(include_str!("../fixtures/ops/measurements_custom_grads.json")).expect("valid JSON");
    let tracker =
        |probe: &str, name: &str| measured[probe]["bs256"][name]["peak_bytes"].as_i64().expect("a peak") as i128;
    assert_eq!(tracker("scaled_both", "train_sgd") - tracker("scaled_first", "train_sgd"), 251_904);
    assert_eq!(tracker("attached", "train_sgd") - tracker("detached", "train_sgd"), 282_672);
    let models = include_str!("../fixtures/ops/custom_grads.net");
    for probe in ["scaled_first", "detached", "attached"] {
        for (name, peak) in op_probe_peaks_at(models, &format!("{probe}_probe"), 256) {
            assert_eq!(peak, tracker(probe, &name), "{probe} {name}");
        }
    }
    // The kernel with every input given a gradient peaks higher, as the function does.
    let all = models.replace("grads=1", "grads=-1");
    let peaks = op_probe_peaks_at(&all, "scaled_first_probe", 256);
    assert!(peaks.iter().any(|(name, peak)| name == "train_sgd" && *peak > tracker("scaled_first", "train_sgd")));
}

/// `tril`, `triu`, `pad`, `log1p` and `norm` (p 2 and 1), each alone between two linear layers
/// (tests/fixtures/ops/pad_tri_norm.net), against tests/fixtures/ops/measure_pad_tri_norm.py
/// (CPU float32, batch 256): `tril`, `triu` and `pad` keep nothing, `log1p` its input, `norm`
/// its input and result. The training peaks of `log1p` and `norm` are in their backward:
/// `grad / (self + 1)` holds the sum; p 2's `grad * (self / norm).masked_fill_(norm == 0, 0)`
/// holds the quotient and the bool mask to the end of the C++ expression, p 1's `self.sgn() *
/// grad` the sign (netc was 266,240 and 262,144 B under before counting them). Every peak is
/// exact, the tracker's and the CPU allocator's alike.
#[test]
fn pad_tril_triu_log1p_and_norm_match_pytorch() {
    let measured: serde_json::Value =
        serde_json::from_str(include_str!("../fixtures/ops/measurements_pad_tri_norm.json")).expect("valid JSON");
    let shapes = |call: &str| -> Vec<serde_json::Value> {
        measured["saved"][call].as_array().expect("saved tensors").iter().map(|t| t["shape"].clone()).collect()
    };
    assert!(shapes("h.tril()").is_empty());
    assert!(shapes("F.pad(h, (0, 16))").is_empty());
    assert_eq!(shapes("torch.log1p(h)"), [serde_json::json!([256, 16, 16])]);
    assert_eq!(shapes("h.norm(dim=-1)"), [serde_json::json!([256, 16, 16]), serde_json::json!([256, 16])]);
    for probe in ["tril", "triu", "pad", "log1p", "norm", "norm_p1"] {
        let model = format!("{probe}_probe");
        for (name, peak) in op_probe_peaks_at(include_str!("../fixtures/ops/pad_tri_norm.net"), &model, 256) {
            let allocator = measured[probe]["allocator_bs256"][&name].as_i64().expect("a peak") as i128;
            let tracker = measured[probe]["bs256"][&name]["peak_bytes"].as_i64().expect("a peak") as i128;
            assert_eq!((peak, peak), (allocator, tracker), "{probe} {name}");
        }
    }
}

/// transformers' own xIELU (`XIELUActivation` in Python: `softplus` of its two `[1]`
/// parameters, `torch.min` of the input with a 0-dim buffer, `expm1`, `torch.where` over both
/// branches) between two linear layers, as std.blocks' `xielu` writes it:
/// tests/fixtures/ops/measure_xielu.py (CPU float32, batch 32) lists what each op saves
/// (`softplus` its input, `minimum` both operands, `expm1` its result) and measures the three
/// scenarios, each peak exact on the first run: inference at the last `add` of a branch, and
/// training at the `sum_to_size` of a `[1]` parameter's gradient. Neither backward holds
/// there, so the script also measures `minimum`, `maximum` and `expm1` alone between the two
/// layers, whose training peaks are in their backward: `masked_fill` with two bool masks,
/// `grad / 2` and the `where` live (netc was 32,768 B under before counting the `where`), and
/// `grad * (result + 1)` with the sum live; and `minimum` whose second operand alone needs a
/// gradient, which holds its own masks (netc counted them only for the first operand's
/// gradient: 80,640 B under). Every peak is exact.
#[test]
fn xielu_matches_transformers() {
    let measured: serde_json::Value =
        serde_json::from_str(include_str!("../fixtures/ops/measurements_xielu.json")).expect("valid JSON");
    let shapes = |call: &str| -> Vec<serde_json::Value> {
        measured["saved"][call].as_array().expect("saved tensors").iter().map(|t| t["shape"].clone()).collect()
    };
    assert_eq!(shapes("softplus(p)"), [serde_json::json!([1])]);
    assert_eq!(shapes("torch.min(h, eps)"), [serde_json::json!([]), serde_json::json!([32, 256])]);
    assert_eq!(shapes("torch.expm1(h)"), [serde_json::json!([32, 256])]);
    // The activation, then each op alone between the two layers (its training peak in its
    // backward).
    for (probe, model) in [
        ("xielu", "xielu_probe"),
        ("minimum", "minimum_probe"),
        ("maximum", "maximum_probe"),
        ("expm1", "expm1_probe"),
        ("minimum_other", "minimum_other_probe"),
    ] {
        for (name, peak) in op_probe_peaks(include_str!("../fixtures/ops/xielu.net"), model) {
            let expected = measured[probe]["bs32"][&name]["peak_bytes"].as_i64().expect("a measured peak") as i128;
            assert_eq!(peak, expected, "{probe} {name}");
        }
    }
}

/// `pow` keeps what its form's backward reads (tests/fixtures/ops/measure_pow.py, two SGD
/// steps at batch 32 on the CPU): a number to a tensor its exponent and result, a tensor to a
/// tensor both operands and the result (the buffer exponent too, though it needs no
/// gradient), a tensor to a number its input; and each backward's input-sized temporaries
/// (`result * log(base)`: one; `pow_backward_self`'s `self.pow(exponent - 1)`, its product
/// with the exponent and with the gradient: three). PyTorch peaks at 130,716 B, in that
/// `pow_backward_self`; netc is 324 B under, the exponent-sized temporaries it leaves out
/// there (the `exponent == 0` mask, 64 B; `exponent - 1`, 256 B; the 0-dim zeros, 4 B).
/// Without those backward temporaries netc was 16,708 B under.
#[test]
fn pow_keeps_what_its_form_needs() {
    let measured: serde_json::Value =
        serde_json::from_str(include_str!("../fixtures/ops/measurements_pow.json")).expect("valid JSON");
    let expected = measured["powers"]["bs32"]["train_sgd"].as_i64().expect("a peak") as i128;
    let mut text = include_str!("../fixtures/ops/pow.net").to_string();
    text.push_str("train t { model powers()  batch 32  device cpu  optimizer sgd }\n");
    let [(_, peak)] = peaks_of_scenarios(text)[..] else { panic!("one scenario") };
    assert_eq!(expected - peak, 64 + 256 + 4, "netc {peak}, PyTorch {expected}");
}

/// Whether a reshape is a view follows the strides PyTorch gives each tensor: the output of
/// CPU flash attention on transposed q is `[N, T, H, D]` memory, so `reshape(transpose(y, 1,
/// 2))` is a view of it, while the math path's row-major output is copied (4 x 100 x 256 x 4 B =
/// 409,600 B); a slice that keeps one position reshaped away is a view.
#[test]
fn reshapes_are_views_where_the_strides_allow() {
    use netc::host::Database;

    let text = r#"
model probe(backend: str = "auto") {
    input x: f32[N, 100, 256]
    q = transpose(reshape(linear(x, 256), [N, 100, 4, 64]), 1, 2)
    y = sdpa(q, q, q, backend=backend)
    y = reshape(transpose(y, 1, 2), [N, 100, 256])
    first = reshape(slice(y, 1, 0, 1), [N, 256])
    return linear(first, 10)
}
infer fused { model probe()  batch 4  device cpu  no_grad  eval }
infer math { model probe(backend="math")  batch 4  device cpu  no_grad  eval }
"#;
    let mut db = Database::new();
    let file = db.set_file(netc::diagnostics::FileName::new("main.net"), text.to_string());
    let reshaped = |name: &str| (line_activations(&db, file, name, 6), line_activations(&db, file, name, 7));
    assert_eq!(reshaped("fused"), (0, 0));
    assert_eq!(reshaped("math"), (409_600, 0));
}

/// The activation bytes the report of scenario `name` charges to line `line` of `file` (-1:
/// no such line).
fn line_activations(db: &netc::host::Database, file: netc::db::SourceFile, name: &str, line: u32) -> i128 {
    let report = crate::shapes::scenario_of(db, file, name);
    report.lines.iter().find(|l| l.line == line).map_or(-1, |l| l.activation_bytes)
}

/// A line's activations are what it makes under `no_grad`, and under autograd what is kept
/// for backward, each tensor once: `g = x * 2.0` on an input that needs no gradient records
/// nothing, and the linear after it keeps `g` (8 KiB at batch 32), charged once to the line
/// that made it (netc charged it twice, as made and as kept); the positions a checkpointed
/// layer keeps as its argument are charged to the line that made them, and the temporaries
/// that made them to no line.
#[test]
fn a_line_is_charged_once_for_what_autograd_keeps() {
    use netc::host::Database;

    let text = r#"
block layer(h, positions) {
    return linear(h, 64)
}
model probe() {
    input x: f32[N, 64]
    g = x * 2.0
    positions = reshape(arange(16) + 1, [1, 16])
    h = checkpoint(layer(linear(g, 64), positions))
    return linear(h, 10)
}
infer serve { model probe()  batch 32  device cpu  no_grad  eval }
infer graded { model probe()  batch 32  device cpu  eval }
train step { model probe()  batch 32  device cpu  optimizer sgd  checkpoint }
"#;
    let mut db = Database::new();
    let file = db.set_file(netc::diagnostics::FileName::new("main.net"), text.to_string());
    let charged = |name: &str| (line_activations(&db, file, name, 7), line_activations(&db, file, name, 8));
    // Made: `g`, and `arange` then the sum its view keeps (16 int64 each).
    assert_eq!(charged("serve"), (8192, 2 * 128));
    // Kept: `g` by the linear; the positions by nothing (no segment records without one).
    assert_eq!(charged("graded"), (8192, 0));
    // Kept: `g` by the linear, the positions (the sum) by the checkpointed layer.
    assert_eq!(charged("step"), (8192, 128));
}

/// Each fused attention kernel lays its output out as PyTorch's does for q in each of three
/// layouts (measurements_sdpa.json, `layouts`: the efficient kernel always `[N, T, H, D]`
/// memory, the others like q), so `reshape(transpose(y, 1, 2))` after it is a view exactly
/// when it is one in PyTorch: the expected answer is computed from the measured strides.
#[test]
fn fused_attention_outputs_are_laid_out_as_pytorch_lays_them_out() {
    use netc::costs::layout::view_strides;
    use netc::host::Database;
    use netc::semantics::files::syntax_tree;
    use netc::syntax::Item;

    let measured: serde_json::Value =
        serde_json::from_str(include_str!("../fixtures/ops/measurements_sdpa.json")).expect("valid JSON");
    let text = r#"
model probe(layout: str) {
    input x: f32[10, N, 32]
    if layout == "BHTD" {
        q = reshape(linear(x, 32), [N, 4, 10, 8])
    } else if layout == "BTHD" {
        q = transpose(reshape(linear(x, 32), [N, 10, 4, 8]), 1, 2)
    } else {
        q = permute(reshape(linear(x, 32), [10, N, 4, 8]), [1, 2, 0, 3])
    }
    y = sdpa(q, q, q)
    z = reshape(transpose(y, 1, 2), [N, 10, 32])
    return z
}
"#;
    let kernels = [
        ("cpu_flash", "cpu", "fp32", 4),
        ("cuda_efficient", "a100_80gb", "fp32", 4),
        ("cuda_flash", "a100_80gb", "bf16", 2),
        ("cuda_cudnn", "h100_80gb", "bf16", 2),
    ];
    let mut text = text.to_string();
    for (kernel, device, precision, _) in kernels {
        for layout in ["BHTD", "BTHD", "TBHD"] {
            text.push_str(&format!(
                "infer {kernel}__{layout} {{ model probe(\"{layout}\")  batch 2  device {device}  precision {precision}  no_grad  eval }}\n"
            ));
        }
    }
    let mut db = Database::new();
    let file = db.set_file(netc::diagnostics::FileName::new("main.net"), text);
    let mut checked = 0;
    for (index, item) in syntax_tree(&db, file).iter().enumerate() {
        let Item::Scenario(s) = item else { continue };
        let (kernel, layout) = s.name.text.split_once("__").expect("kernel__layout");
        let element = kernels.iter().find(|k| k.0 == kernel).expect("a kernel").3;
        let strides: Vec<i128> = measured["layouts"][kernel][layout]["output"]
            .as_array()
            .expect("measured strides")
            .iter()
            .map(|s| s.as_i64().expect("a stride") as i128)
            .collect();
        // `transpose(y, 1, 2)` then `reshape` to [2, 10, 32].
        let transposed = [strides[0], strides[2], strides[1], strides[3]];
        let view = view_strides(&[2, 10, 4, 8], &transposed, &[2, 10, 32]).is_some();
        let report = netc::report::scenario_report(&db, file, index as u32).expect("a report");
        let made =
            report.lines.iter().find(|l| l.source.starts_with("z = ")).expect("the reshape line").activation_bytes;
        assert_eq!(made, if view { 0 } else { 2 * 10 * 32 * element }, "{kernel} with q {layout}");
        checked += 1;
    }
    assert_eq!(checked, 12);
}

/// A `buffer` is module state, as `register_buffer` makes it: in the buffers ledger from the
/// start, converted by a half model when it is floating, never given a gradient. Figures by
/// hand: the bool mask is 1 x 1 x 1024 x 1024 x 1 B = 1,048,576 B; `scale` is 8 x 4 B = 32 B
/// (16 B in fp16); the linear layer's gradients are (8 x 4 + 4) x 4 B = 144 B and the
/// buffers get none.
#[test]
fn buffers_are_module_state_in_the_buffers_ledger() {
    use netc::costs::scenario_costs;
    use netc::semantics::files::ItemLoc;

    let model = "model m() {
    input x: f32[N, 8]
    buffer mask: bool[1, 1, 1024, 1024], persistent=false
    buffer scale: f32[8]
    return linear(x * scale, 4)
}
";
    let cases = [
        ("infer s { model m()  batch 2  no_grad  eval }", 1_048_608, 0),
        ("infer s { model m()  batch 2  no_grad  eval  precision fp16  device a100_80gb }", 1_048_592, 0),
        ("train s { model m()  batch 2  optimizer sgd }", 1_048_608, 144),
    ];
    for (scenario, buffers, gradients) in cases {
        let (db, file, items) = load("main.net", format!("{model}{scenario}\n"));
        let costs = scenario_costs(&db, ItemLoc::new(&db, file, items["s"])).as_ref().expect("simulates");
        let at_peak = costs.simulation.peak.breakdown;
        assert_eq!(at_peak.buffers, buffers, "{scenario}");
        assert!(at_peak.gradients <= gradients, "{scenario}: {at_peak:?}");
        let lines = costs.simulation.lines.values();
        let (line_buffers, line_gradients) = lines.fold((0, 0), |(b, g), l| (b + l.buffers, g + l.gradients));
        assert_eq!((line_buffers, line_gradients), (buffers, gradients), "{scenario}");
    }
}

/// The segments `activations-dominate` proposes for a model whose body is one block call (the
/// calls one level down, `Segments::Inner`) cost what marking those calls `checkpoint(...)`
/// costs: the saving the lint prints is the one the edit it proposes gets. The fixture is the
/// lint's own (tests/fixtures/lints/activations-dominate/triggers.net).
#[test]
fn the_segments_checkpoint_advice_proposes_are_the_marked_calls() {
    use netc::costs::simulate::{Segments, simulate};
    use netc::costs::{config, scenario_costs};
    use netc::elaborate::scenario_graph;
    use netc::host::Database;
    use netc::semantics::files::{ItemLoc, syntax_tree};
    use netc::semantics::setup::scenario_setup;

    let fixture = include_str!("../fixtures/lints/activations-dominate/triggers.net");
    let unmarked = fixture.replace("budget 2 GiB", "checkpoint");
    let marked = unmarked.replace("y = layer(y)", "y = checkpoint(layer(y))");
    let peak_of = |text: &str, segments: Segments| {
        let mut db = Database::new();
        let file = db.set_file(netc::diagnostics::FileName::new("main.net"), text.to_string());
        let index = syntax_tree(&db, file).len() as u32 - 1;
        let loc = ItemLoc::new(&db, file, index);
        let graph = scenario_graph(&db, loc).as_ref().expect("a graph");
        let (mut config, _) = config(&scenario_setup(&db, loc).as_ref().expect("a setup").run);
        config.segments = segments;
        let peak = simulate(graph, &config).peak.bytes;
        if segments == Segments::Marked {
            assert_eq!(peak, scenario_costs(&db, loc).as_ref().expect("costs").simulation.peak.bytes);
        }
        peak
    };
    let proposed = peak_of(&unmarked, Segments::Inner);
    assert_eq!(proposed, peak_of(&marked, Segments::Marked));
    // And the one segment `checkpoint` alone makes saves less.
    assert!(proposed < peak_of(&unmarked, Segments::Marked));
}

/// A measured scenario of a fixture: its name in the measurements, `infer` or `train`, and its
/// settings (the device is added).
type MeasuredRun = (&'static str, &'static str, &'static str);

/// The scenarios tests/fixtures/ops/measure.py's `three_scenarios` measures: `no_grad`
/// inference, inference with gradients, two SGD steps.
const THREE_SCENARIOS: [MeasuredRun; 3] = [
    ("infer_nograd", "infer", "no_grad  eval"),
    ("infer_grad_eval", "infer", "eval"),
    ("train_sgd", "train", "optimizer sgd"),
];

/// Runs [`measured_cases_off`] and asserts that no case is off and that `cases` ran.
fn assert_measured_cases(
    text: &str,
    measurements: &str,
    runs: &[MeasuredRun],
    call: impl Fn(&str) -> String,
    off: impl Fn(&str, &str, &str, i128, i128) -> bool,
    cases: usize,
) {
    let measured: serde_json::Value = serde_json::from_str(measurements).expect("valid JSON");
    let (wrong, ran) = measured_cases_off(text, &measured, runs, call, off);
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    assert_eq!(ran, cases);
}

/// Whether a prediction is off a bound that allows it up to `slack` under the measured peak
/// (a tensor netc knowingly does not book) and nothing over.
fn off_unless_under_by_at_most(slack: i128, predicted: i128, measured: i128) -> bool {
    !(measured - slack..=measured).contains(&predicted)
}

/// The cases of a measurement file (`{"models": {MODEL: {bsN: {RUN: peak}}}}`) run on `text`,
/// each model called as `call(model)` at its batch on the CPU (what `call` returns follows
/// `model` in the scenario, so it may add settings: `m()  precision bf16`), as "MODEL BATCH RUN: netc X,
/// PyTorch Y (+D)" for those `off(model, batch, run, predicted, measured)` rejects; and how many
/// ran.
fn measured_cases_off(
    text: &str,
    measured: &serde_json::Value,
    runs: &[MeasuredRun],
    call: impl Fn(&str) -> String,
    off: impl Fn(&str, &str, &str, i128, i128) -> bool,
) -> (Vec<String>, usize) {
    let mut text = text.to_string();
    for (model, batches) in measured["models"].as_object().expect("models") {
        for (batch, _) in batches.as_object().expect("batches") {
            let n = batch.trim_start_matches("bs");
            for (run, kind, settings) in runs {
                let model_call = call(model);
                text.push_str(&format!(
                    "{kind} {model}__{batch}__{run} {{ model {model_call}  batch {n}  device cpu  {settings} }}\n"
                ));
            }
        }
    }
    let peaks = peaks_of_scenarios(text);
    let mut wrong = Vec::new();
    for (name, peak) in &peaks {
        let mut parts = name.split("__");
        let (model, batch, run) = (parts.next().unwrap(), parts.next().unwrap(), parts.next().unwrap());
        let expected = measured["models"][model][batch][run].as_i64().expect("a measured peak") as i128;
        if off(model, batch, run, *peak, expected) {
            wrong.push(format!("{model} {batch} {run}: netc {peak}, PyTorch {expected} ({:+})", peak - expected));
        }
    }
    (wrong, peaks.len())
}

/// Whether a prediction is off by more than the 8 B of the loss's scalars netc does not book.
fn off_by_more_than_8_bytes(_: &str, _: &str, _: &str, predicted: i128, measured: i128) -> bool {
    (predicted - measured).abs() > 8
}

/// Frozen parameters (`frozen(call)`, PyTorch's `p.requires_grad_(False)`): no gradient and no
/// optimizer state for them, nothing recorded before the first trained layer, a frozen
/// `linear` keeps not its input (only the weight's gradient reads it) while a frozen
/// convolution and layer norm do (their backward computes every gradient from one call). The
/// models of tests/fixtures/ops/frozen.net, measured by tests/fixtures/ops/measure_frozen.py
/// (CPU, float32, two steps of SGD and of Adam) into measurements_frozen.json.
#[test]
fn frozen_parameters_match_pytorchs_peaks() {
    let runs = [("train_sgd", "train", "optimizer sgd"), ("train_adam", "train", "optimizer adam")];
    assert_measured_cases(
        include_str!("../fixtures/ops/frozen.net"),
        include_str!("../fixtures/ops/measurements_frozen.json"),
        &runs,
        |model| format!("{model}()"),
        off_by_more_than_8_bytes,
        16,
    );
}

/// `frozen(call, when=cond)` runs what `if cond { frozen(call) } else { call }` runs, for
/// either value of the condition: the same peaks (so the same gradients, optimizer state and
/// saved tensors), and a peak that differs between the two conditions, so the mark applies.
#[test]
fn a_conditional_mark_is_the_branch_it_replaces() {
    let text = r#"model marked(lora: bool = true) {
    input x: f32[N, 256]
    h = frozen(linear(x, 512), when=lora)
    h = relu(h)
    return frozen(linear(h, 10), when=lora)
}
model branched(lora: bool = true) {
    input x: f32[N, 256]
    if lora {
        h = frozen(linear(x, 512))
    } else {
        h = linear(x, 512)
    }
    h = relu(h)
    if lora {
        y = frozen(linear(h, 10))
    } else {
        y = linear(h, 10)
    }
    return y
}
train marked_on { model marked()  batch 8  optimizer adam }
train branched_on { model branched()  batch 8  optimizer adam }
train marked_off { model marked(lora=false)  batch 8  optimizer adam }
train branched_off { model branched(lora=false)  batch 8  optimizer adam }
"#;
    let peaks = peaks_of_scenarios(text.to_string());
    assert_eq!(peaks[0].1, peaks[1].1);
    assert_eq!(peaks[2].1, peaks[3].1);
    assert!(peaks[2].1 > peaks[0].1, "{peaks:?}");
}

/// LoRA as peft runs it (std.blocks' `lora_linear`: a frozen base layer plus
/// `B(A(dropout(x))) * alpha / r`): tests/fixtures/ops/lora.net, an MLP whose two hidden
/// layers peft wraps (r 8, alpha 16, dropout 0.1 and 0, every other parameter frozen),
/// measured by tests/fixtures/ops/measure_lora.py (CPU, float32, two steps of SGD and of Adam)
/// into measurements_lora.json; the trainable parameters are peft's.
#[test]
fn lora_matches_peft() {
    let measured: serde_json::Value =
        serde_json::from_str(include_str!("../fixtures/ops/measurements_lora.json")).expect("valid JSON");
    let text = include_str!("../fixtures/ops/lora.net");
    let mut db = netc::host::Database::new();
    let file = db.set_file(
        netc::diagnostics::FileName::new("main.net"),
        format!("{text}train one {{ model lora_mlp()  batch 1  optimizer sgd }}\n"),
    );
    let (first, index) = netc::report::scenarios(&db, &[file], None)[0];
    let report = scenario_report(&db, first, index).expect("a report");
    assert_eq!(report.params, measured["total_params"].as_i64().expect("total") as i128);
    assert_eq!(report.trainable_params, measured["trainable_params"].as_i64().expect("trainable") as i128);
    let runs = [("train_sgd", "train", "optimizer sgd"), ("train_adam", "train", "optimizer adam")];
    // lora_mlp_p1 is dropout 0.1, lora_mlp_p0 none.
    let call = |model: &str| format!("lora_mlp(p={})", if model.ends_with("p1") { "0.1" } else { "0.0" });
    let (wrong, cases) = measured_cases_off(text, &measured, &runs, call, off_by_more_than_8_bytes);
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    assert_eq!(cases, 8);
}

/// A declared `kernel` follows every ledger as a built-in does: the calibration's mlp with its
/// linear layers declared as kernels with `linear`'s costs (output, `d * out + out`
/// parameters, MACs, saving the input) has, in every fp32 scenario without per-tensor
/// optimizer state, the built-in model's figures exactly, and so PyTorch's measured peaks.
#[test]
fn a_declared_kernel_costs_what_the_builtin_it_describes_costs() {
    const DECLARED: &str = "\
## nn.Linear, declared by its costs.
block dense(x, out: int) {
    n = x.shape[0]
    d = x.shape[1]
    return kernel([x], [n, out], params=d * out + out, macs=n * d * out, saves=[0])
}

model mlp(classes: int = 10) {
    input x: f32[N, 784]
    y = dense(x, 4096)
    y = relu(y)
    y = dense(y, 4096)
    y = relu(y)
    return dense(y, classes)
}
";
    let scenarios: Vec<accuracy::Scenario> =
        SCENARIOS.iter().copied().filter(|(name, _, _)| !name.starts_with("train_adam")).collect();
    let builtin = cases_of(&[accuracy::CALIBRATION[2]], "cpu", CPU_FIXTURE, &scenarios);
    let declared = cases_of(&[("mlp", DECLARED, "mlp")], "cpu", CPU_FIXTURE, &scenarios);
    assert_eq!(declared.len(), 8);
    for (b, d) in builtin.iter().zip(&declared) {
        assert_eq!((&b.batch, b.scenario), (&d.batch, d.scenario));
        assert_eq!(d.predicted, b.predicted, "{} {}", d.batch, d.scenario);
        assert!(d.misses().is_empty(), "{} {}: {:?}", d.batch, d.scenario, d.misses());
    }
}

/// A kernel's `scratch` and `backward_scratch` are temporaries the size of its first input in
/// the run's dtype (a custom autograd function's elementwise steps, as BLOOM's `GeLUFunction`):
/// `[4, 1024, 1024]` in bf16 is 8 MiB each, so three in the forward (no_grad, the peak is the
/// kernel's) cost 24 MiB more, and eight in the backward 32 MiB more than four in training
/// (the peak is then the kernel's backward).
#[test]
fn a_kernels_scratch_is_input_sized_in_the_runs_dtype() {
    let file = |scratch: u32, backward: u32| {
        format!(
            "block gelu_fn(x) {{ return kernel([x], x.shape, saves=[0], scratch={scratch}, backward_scratch={backward}) }}\n\
             model m() {{ input x: f32[N, 1024, 1024]\n return gelu_fn(linear(x, 1024)) }}\n\
             infer i {{ model m()  batch 4  precision bf16  no_grad  eval }}\n\
             train t {{ model m()  batch 4  precision bf16  optimizer sgd }}\n"
        )
    };
    let plain = peaks_of_scenarios(file(0, 0));
    let forward = peaks_of_scenarios(file(3, 0));
    let (four, eight) = (peaks_of_scenarios(file(0, 4)), peaks_of_scenarios(file(0, 8)));
    let mib = 1 << 20;
    assert_eq!(forward[0].1 - plain[0].1, 24 * mib, "forward");
    assert_eq!(four[0].1, plain[0].1, "no backward in inference");
    assert_eq!(eight[1].1 - four[1].1, 32 * mib, "backward");
}

/// Ops on a non-contiguous input (a transposed view) copy it as PyTorch does:
/// tests/fixtures/ops/contiguous.net, measured by tests/fixtures/ops/measure_contiguous.py (CPU,
/// float32, batches 2 and 16, three scenarios) into measurements_contiguous.json. `linear` on
/// the view copies it (matmul's fold), `contiguous` copies it, softmax and layer norm keep
/// their peaks: every case exact but `linear_t` with autograd recording, which the tracker
/// measures one output-sized tensor higher: under its TorchDispatchMode
/// `at::isTensorSubclassLike` is true, so `at::linear` adds the bias out of place (`add`,
/// not `add_`); a plain run adds it in place, as netc does. Those four cases are held to
/// within that tensor, under.
#[test]
fn non_contiguous_inputs_are_copied_as_pytorch_copies_them() {
    let off = |model: &str, batch: &str, run: &str, predicted: i128, measured: i128| {
        // linear_t's output, [N, 32, 48] floats: the tracker's out-of-place bias add.
        let n: i128 = batch.trim_start_matches("bs").parse().expect("a batch");
        if model == "linear_t" && run != "infer_nograd" {
            off_unless_under_by_at_most(n * 32 * 48 * 4, predicted, measured)
        } else {
            off_by_more_than_8_bytes(model, batch, run, predicted, measured)
        }
    };
    assert_measured_cases(
        include_str!("../fixtures/ops/contiguous.net"),
        include_str!("../fixtures/ops/measurements_contiguous.json"),
        &THREE_SCENARIOS,
        |model| format!("{model}()"),
        off,
        24,
    );
}

/// `einsum` runs as `at::einsum` does (one `bmm` of operands reshaped to `[batch, own,
/// summed]`, copied where their strides do not fold; `mul` when nothing is summed; a view or a
/// sum for one operand), and `where` takes a number for an operand: seven models
/// (tests/fixtures/ops/einsum.net) measured by tests/fixtures/ops/measure_einsum.py at batches
/// 2 and 8 in three scenarios, each within 8 B but one: `permute` in training, whose backward
/// hands a permuted gradient to the linear layer's `view`, which `reshape`s it and so copies
/// it. netc does not track gradients' strides; that copy is held as the bound there.
#[test]
fn einsum_and_scalar_where_match_pytorchs_peaks() {
    let off = |model: &str, batch: &str, run: &str, predicted: i128, measured: i128| {
        // The projection's output, [N, 16, 64] floats: the gradient's copy.
        let n: i128 = batch.trim_start_matches("bs").parse().expect("a batch");
        if model == "permute" && run == "train_sgd" {
            off_unless_under_by_at_most(n * 16 * 64 * 4, predicted, measured)
        } else {
            off_by_more_than_8_bytes(model, batch, run, predicted, measured)
        }
    };
    assert_measured_cases(
        include_str!("../fixtures/ops/einsum.net"),
        include_str!("../fixtures/ops/measurements_einsum.json"),
        &THREE_SCENARIOS,
        |model| format!("{model}()"),
        off,
        42,
    );
}

/// Casts (`to`, `type_as`) make a tensor of the run's new dtype, or return their input when
/// it has that dtype already, and under `precision bf16` what follows a cast to float32
/// computes in float32: transformers' LlamaRMSNorm and an upcast softmax, each in a bf16 model
/// and an fp32 one (tests/fixtures/ops/cast.net), measured by
/// tests/fixtures/ops/measure_cast.py at batches 2 and 8 in three scenarios: each within 8 B.
#[test]
fn casts_follow_the_run_dtypes() {
    let call = |model: &str| {
        let (kind, dtype) = model.rsplit_once('_').expect("kind_dtype");
        let precision = if dtype == "bf16" { "  precision bf16" } else { "" };
        format!("{kind}(){precision}")
    };
    assert_measured_cases(
        include_str!("../fixtures/ops/cast.net"),
        include_str!("../fixtures/ops/measurements_cast.json"),
        &THREE_SCENARIOS,
        call,
        off_by_more_than_8_bytes,
        24,
    );
}

/// A layer norm given a weight made in the forward pass (`layer_norm`, as transformers'
/// `NemotronLayerNorm1P` calls `F.layer_norm` with `weight + 1`) keeps that weight for its
/// backward: tests/fixtures/ops/layer_norm.net in fp32 and bf16, measured by
/// tests/fixtures/ops/measure_layer_norm.py at batches 2 and 8 in three scenarios: each
/// within 8 B.
#[test]
fn a_layer_norm_keeps_the_weight_it_is_given() {
    let call = |model: &str| {
        let precision = if model.ends_with("_bf16") { "  precision bf16" } else { "" };
        format!("layernorm_1p_probe(){precision}")
    };
    assert_measured_cases(
        include_str!("../fixtures/ops/layer_norm.net"),
        include_str!("../fixtures/ops/measurements_layer_norm.json"),
        &THREE_SCENARIOS,
        call,
        off_by_more_than_8_bytes,
        12,
    );
}

/// Rotary embeddings applied as complex numbers (`view_as_complex`, a complex product,
/// `view_as_real`; tables from `polar`), as transformers' DeepSeek-V2 and Meta's reference
/// LLaMA apply them: tests/fixtures/ops/complex_rope.net in fp32 and bf16, measured by
/// tests/fixtures/ops/measure_complex_rope.py with transformers' own `apply_rotary_emb` at
/// batches 2 and 8 in three scenarios: each within 8 B.
#[test]
fn complex_rotary_embeddings_match_pytorch() {
    let call = |model: &str| {
        let precision = if model.ends_with("_bf16") { "  precision bf16" } else { "" };
        format!("complex_rope_probe(){precision}")
    };
    assert_measured_cases(
        include_str!("../fixtures/ops/complex_rope.net"),
        include_str!("../fixtures/ops/measurements_complex_rope.json"),
        &THREE_SCENARIOS,
        call,
        off_by_more_than_8_bytes,
        12,
    );
}

/// Grouped-query attention (`sdpa(..., enable_gqa=true)`): the CPU's flash kernel takes the
/// grouped keys and values as they are; the math path repeats them to the query's heads
/// first. tests/fixtures/ops/gqa.net, measured by tests/fixtures/ops/measure_gqa.py at
/// batches 2 and 8 in three scenarios: each within 8 B, the math path's training too, whose
/// peak is in PyTorch's decomposed backward (the attention weights' gradients), which netc
/// stages as the engine runs it (spec/memory/activations.md; it was under, within 3 %, while
/// netc ran that backward as one node).
#[test]
fn grouped_query_sdpa_matches_pytorch() {
    let call = |kernel: &str| {
        if kernel == "math" { "gqa_probe(backend=\"math\")".to_string() } else { "gqa_probe()".to_string() }
    };
    assert_measured_cases(
        include_str!("../fixtures/ops/gqa.net"),
        include_str!("../fixtures/ops/measurements_gqa.json"),
        &THREE_SCENARIOS,
        call,
        off_by_more_than_8_bytes,
        12,
    );
}

/// SDPA under a mask (`sdpa(..., mask=m)`, `attn_mask`): a bool sliding-window mask expanded
/// over the batch, or the caller's additive float one. The CPU's flash kernel takes it and
/// saves the additive mask (a bool one made additive first, dense); the math path adds it to
/// the scores in place. tests/fixtures/ops/mask.net, measured by
/// tests/fixtures/ops/measure_mask.py at batches 2 and 8 in three scenarios: each within 8 B,
/// the math path's training too (its decomposed backward, staged as for grouped-query
/// attention).
#[test]
fn masked_sdpa_matches_pytorch() {
    let call = |kind: &str| {
        let backend = if kind.starts_with("math") { "math" } else { "auto" };
        format!("mask_probe(backend=\"{backend}\", additive={})", kind.ends_with("additive"))
    };
    assert_measured_cases(
        include_str!("../fixtures/ops/mask.net"),
        include_str!("../fixtures/ops/measurements_mask.json"),
        &THREE_SCENARIOS,
        call,
        off_by_more_than_8_bytes,
        24,
    );
}

/// `outer(a, b)` costs what PyTorch runs for it, `a.reshape(-1, 1) * b` (CompositeImplicit in
/// native_functions.yaml): the same peaks as that written out, in inference and training,
/// with both operands requiring gradients.
#[test]
fn outer_costs_its_decomposition() {
    let model = |product: &str| {
        format!(
            "model m() {{
    input x: f32[N, 16]
    u = mean(linear(x, 32), dim=0)
    v = mean(linear(x, 24), dim=0)
    o = {product}
    return linear(x, 10) + mean(o, dim=[0, 1])
}}
infer a {{ model m()  batch 8  eval }}
train b {{ model m()  batch 8  optimizer sgd }}
"
        )
    };
    let outer = peaks_of_scenarios(model("outer(u, v)"));
    let written = peaks_of_scenarios(model("reshape(u, [32, 1]) * v"));
    assert_eq!(outer, written);
}

/// A checkpointed call keeps every tensor it is passed until its segment's backward, read or
/// not, as `checkpoint` keeps its function's arguments (transformers' decoder layers are passed
/// `position_ids` they never read: the LLM set's checkpointed cases, exact since). Here the
/// segment is passed `extra`, `[8, 256]` float32 (8 KiB) made for it alone; when it is not
/// passed, nothing holds it after the forward pass, and the backward's peak is 8 KiB lower.
#[test]
fn a_checkpointed_call_keeps_the_arguments_it_does_not_read() {
    let model = |args: &str| {
        format!(
            "block layer(x, extra) {{
    return relu(linear(x, 256))
}}
model m() {{
    input x: f32[N, 256]
    extra = x * 2.0
    h = checkpoint(layer({args}))
    return linear(h, 10)
}}
train t {{ model m()  batch 8  optimizer sgd  checkpoint }}
"
        )
    };
    let passed = peaks_of_scenarios(model("x, extra"));
    let not_passed = peaks_of_scenarios(model("x, x"));
    assert_eq!(passed[0].1 - not_passed[0].1, 8 * 256 * 4);
}

/// A sliding-window cache layer (`kv_cache(x, window=w)`, transformers'
/// `DynamicSlidingWindowLayer`) returns the last `w - 1` cached tokens with the new ones, and
/// its cache after the step is that concatenation's storage; before the step it is the
/// storage a prefill of `context` tokens left (the stored view keeps all of it, measured:
/// tests/fixtures/ops/measure_gemma2.py, a 512-token prompt holds 512 tokens in a window-128
/// layer, 128 after one decode step). `past_seen_tokens()` is the scenario's `context`.
#[test]
fn a_sliding_window_cache_keeps_window_minus_one_tokens() {
    let source = "model m() {\n    input x: f32[N, 2, S, 8]\n    positions = arange(past_seen_tokens())\n    \
                  k = kv_cache(x, window=4)\n    v = kv_cache(x * 2.0, window=4)\n    return k * v\n}\n\
                  infer decode { model m()  batch 1  seq 1  context 10  cache dynamic  no_grad  eval }\n\
                  infer early { model m()  batch 1  seq 1  context 2  cache dynamic  no_grad  eval }\n";
    let (db, file, items) = load("window.net", source.to_string());
    let step = |name: &str| {
        let loc = netc::semantics::files::ItemLoc::new(&db, file, items[name]);
        let costs = netc::costs::scenario_costs(&db, loc).as_ref().expect("simulates");
        (costs.simulation.peak.bytes, costs.simulation.kv_cache_bytes())
    };
    // One token is 2 x 8 f32 elements, 64 B.
    let (peak, cache) = step("decode");
    assert_eq!(cache, 2 * 4 * 64, "3 kept tokens and the new one, keys and values");
    // At the values' append: the input and `x * 2.0`, the 10 int64 positions
    // (`past_seen_tokens()` is the context), the prompt's 10 keys and 10 values (`update`
    // rebinds `self.keys` and `self.values` after both concatenations), the new keys and
    // values, and the layer's int64 `_sliding_window_tensor` (made by the prompt's step).
    assert_eq!(peak, 2 * 64 + 10 * 8 + 2 * 10 * 64 + 2 * 4 * 64 + 8);
    let (_, cache) = step("early");
    assert_eq!(cache, 2 * 3 * 64, "within the window: every token");
}

/// A paged cache (vLLM's blocks) holds each sequence's whole context rounded up to its
/// blocks, from the start, and makes no copy; in fp8 it is one byte an element. Arithmetic,
/// not measured: llama_small, one sequence of 8,192 cached tokens and one new one, 8 layers'
/// keys and values of 8 heads of 64 (16,384 B a token in bf16): 8,193 tokens are 513 blocks
/// of 16, 8,208 tokens.
#[test]
fn a_paged_cache_holds_whole_blocks_and_makes_no_copy() {
    let step = |cache: &str| {
        let source = format!(
            "use std.models.llama\ninfer decode {{ model llama(vocab=32000, d=2048, layers=8, heads=32, kv_heads=8, ffn=5632)  batch 1  seq 1  context 8192  precision bf16  no_grad  eval  {cache}  device a100_80gb }}\n"
        );
        let (db, file, items) = load("paged.net", source);
        let loc = netc::semantics::files::ItemLoc::new(&db, file, items["decode"]);
        let costs = netc::costs::scenario_costs(&db, loc).as_ref().expect("simulates");
        (costs.simulation.peak.bytes, costs.simulation.kv_cache_bytes())
    };
    let (dynamic_peak, dynamic_cache) = step("cache dynamic");
    assert_eq!(dynamic_cache, 8193 * 16_384);
    let (paged_peak, paged_cache) = step("cache paged");
    assert_eq!(paged_cache, 8208 * 16_384);
    // No `torch.cat`: no layer's old values (8,192 tokens of 1,024 B, 8 MiB) are live beside
    // the new ones, though the blocks' 15 spare tokens are.
    assert!(paged_peak <= dynamic_peak - 8192 * 1024 + (8208 - 8193) * 16_384, "{paged_peak} vs {dynamic_peak}");
    let (_, fp8_cache) = step("cache paged  cache_dtype fp8");
    assert_eq!(fp8_cache, 8208 * 8192);
}

/// A family written outside the stdlib from the mask-free blocks of std.models.llama (its own
/// `LlamaModel` loop over `llama_decoder_layer`, which passes a layer no mask and no
/// `position_ids`) costs what the zoo's `llama_for_causal_lm` costs, LoRA training and a
/// decode step over a cache alike, but for one thing: a checkpointed transformers layer is
/// passed `position_ids` (`i64[1, S]`) and keeps it until its backward, after the model has
/// returned, so the zoo's checkpointed peak is `8 S` bytes higher.
#[test]
fn a_family_written_with_the_mask_free_llama_blocks_costs_what_the_zoo_does() {
    let text = r#"use std.models.llama
model custom() {
    input input_ids: i64[N, S]
    inv_freq = fp32(buffer([16], "f32", persistent=false))
    _original_inv_freq = fp32(buffer([16], "f32", persistent=false))
    inputs_embeds = frozen(embedding(input_ids, 1000, 256, share="embed_tokens"))
    s = input_ids.shape[1]
    position_ids = reshape(arange(s) + 0, [1, s])
    hidden_states = inputs_embeds
    cos, sin = llama_rotary_embedding(hidden_states, position_ids, inv_freq)
    for _ in 0..2 {
        hidden_states = checkpoint(llama_decoder_layer(hidden_states, cos, sin, 256, 8, 2, 512, 0.00001, 16, 32, 0.05, "q_proj,v_proj"))
    }
    hidden_states = llama_rmsnorm(hidden_states, 0.00001, true)
    return frozen(linear(hidden_states, 1000, bias=false))
}
model zoo() {
    input input_ids: i64[N, S]
    return llama_for_causal_lm(input_ids, 1000, 256, 2, 8, 2, 512, 0.00001, false, 16, 32, 0.05, "q_proj,v_proj", 0)
}
train custom_lora { model custom()  batch 2  seq 128  precision bf16  optimizer adamw  loss causal_lm }
train zoo_lora { model zoo()  batch 2  seq 128  precision bf16  optimizer adamw  loss causal_lm }
train custom_lora_ck { model custom()  batch 2  seq 128  precision bf16  optimizer adamw  loss causal_lm  checkpoint }
train zoo_lora_ck { model zoo()  batch 2  seq 128  precision bf16  optimizer adamw  loss causal_lm  checkpoint }
infer custom_decode { model custom()  batch 2  seq 1  context 64  precision bf16  no_grad  eval  cache dynamic }
infer zoo_decode { model zoo()  batch 2  seq 1  context 64  precision bf16  no_grad  eval  cache dynamic }
"#;
    let peaks = peaks_of_scenarios(text.to_string());
    let difference: Vec<(&str, i128)> =
        peaks.chunks(2).map(|pair| (pair[0].0.as_str(), pair[1].1 - pair[0].1)).collect();
    assert_eq!(difference, [("custom_lora", 0), ("custom_lora_ck", 8 * 128), ("custom_decode", 0)]);
}

/// `generate()` (`new_tokens`): transformers 5.24's greedy `model.generate(ids,
/// max_new_tokens=T)` on the CPU, measured step by step (tests/fixtures/ops/measure_generate.py:
/// a 2-layer Llama in bf16, and a Gemma 2 with a sliding-window layer of 128 tokens, one of its
/// prompts past the window; each model call's peak and that of what generate() does after it).
/// netc simulates the prefill, the first decode step and the last, each with the tensors
/// generate() holds then (its ids and attention mask, grown a column a token, the previous
/// step's float32 logits, the flags), and the model makes no positions of its own: generate()
/// passes `position_ids` of `[N, S]` (`generating()`), so the rotary tables are per row. Every
/// step is exact to the byte, and the scenario's peak is the largest step's.
#[test]
fn generate_steps_match_transformers_on_the_cpu() {
    use netc::costs::{generate_steps, scenario_costs};
    use netc::semantics::files::ItemLoc;
    let measured: serde_json::Value =
        serde_json::from_str(include_str!("../fixtures/ops/measurements_generate.json")).expect("valid JSON");
    let mut text = "use std.models.llama\nuse std.models.gemma2\n".to_string();
    let mut runs = Vec::new();
    let families = [
        ("runs", "", "llama(vocab=4000, d=512, layers=2, heads=8, kv_heads=2, ffn=1408"),
        (
            "gemma2_runs",
            "gemma2_",
            "gemma2(vocab=4000, d=512, layers=2, heads=8, kv_heads=4, head_dim=64, ffn=1536, window=128, scaling=0.125",
        ),
    ];
    for (set, prefix, call) in families {
        for (size, figures) in measured[set].as_object().expect("runs") {
            let (batch, rest) = size.trim_start_matches('b').split_once("_p").expect("b<batch>_p<prompt>_t<tokens>");
            let (prompt, tokens) = rest.split_once("_t").expect("_t<tokens>");
            let run = format!("{prefix}{size}");
            text.push_str(&format!(
                "infer {run} {{ model {call}, logits_to_keep=1)  batch {batch}  seq {prompt}  new_tokens {tokens}  \
                 precision bf16  no_grad  eval  cache dynamic  device cpu }}\n"
            ));
            runs.push((run, size.clone(), figures.clone()));
        }
    }
    let (db, file, items) = load("generate.net", text);
    let mut report = Vec::new();
    let mut off = Vec::new();
    for (run, size, figures) in runs {
        let loc = ItemLoc::new(&db, file, items[&run]);
        let calls = figures["calls"].as_array().expect("calls");
        for costs in generate_steps(&db, loc).expect("a generate() run") {
            let step = costs.generate.expect("a step").step as usize;
            let call = &calls[step];
            let expected = call["forward"].as_i64().expect("bytes").max(call["after"].as_i64().expect("bytes")) as i128;
            let peak = costs.simulation.peak.bytes;
            report.push(format!("{run} step {step}: netc {peak}, transformers {expected} ({:+})", peak - expected));
            if peak != expected {
                off.push(format!("{run} step {step}"));
            }
        }
        // The scenario's figures are its largest step's.
        let steps = generate_steps(&db, loc).expect("a generate() run");
        let largest = steps.iter().map(|c| c.total).max().expect("steps");
        assert_eq!(scenario_costs(&db, loc).as_ref().expect("simulates").total, largest, "{run}");
        // `fit`'s re-bound runs are generate() runs too.
        let (batch, rest) = size.trim_start_matches('b').split_once("_p").expect("b<batch>_p<prompt>");
        let prompt = rest.split_once("_t").expect("_t").0;
        let dims = [
            ("N".to_string(), batch.parse().expect("an integer")),
            ("S".to_string(), prompt.parse().expect("an integer")),
        ];
        let rebound = netc::costs::scenario_costs_with(&db, loc, dims.into_iter().collect()).expect("simulates");
        assert_eq!(rebound.total, largest, "{run}: re-bound as fit binds it");
    }
    println!("{}", report.join("\n"));
    assert!(off.is_empty(), "off: {off:?}\n{}", report.join("\n"));
}

/// A factory's named dtype is its own: `full` makes float32 (torch's default dtype) in a bf16
/// model, as `torch.ones` makes OPT's position mask, and bf16 only when asked; `full_like`
/// follows its input (bf16) unless it names a dtype. The OPT families cases measure the first
/// (the mask at an 8,192-token decode: 32 KiB, not 16 KiB).
#[test]
fn a_factory_keeps_its_named_dtype_under_bf16() {
    let text = "model m(dtype: str, like: bool) {\n    input x: f32[N, 8]\n    if like {\n        y = full_like(expand(reshape(x, [N, 8, 1]), [N, 8, 8192]), 1.0, dtype=dtype)\n    } else {\n        y = full([N, 65536], 1.0, dtype)\n    }\n    return y\n}\n\
                infer default { model m(dtype=\"f32\", like=false)  batch 64  no_grad  eval  precision bf16  device cpu }\n\
                infer half { model m(dtype=\"bf16\", like=false)  batch 64  no_grad  eval  precision bf16  device cpu }\n\
                infer like_named { model m(dtype=\"f32\", like=true)  batch 64  no_grad  eval  precision bf16  device cpu }\n\
                infer like_input { model m(dtype=\"\", like=true)  batch 64  no_grad  eval  precision bf16  device cpu }\n";
    let peaks = peaks_of_scenarios(text.to_string());
    let [(_, default), (_, half), (_, like_named), (_, like_input)] = &peaks[..] else { panic!("{peaks:?}") };
    // The output: 64 x 65,536 elements, 4 bytes against 2.
    assert_eq!(default - half, 64 * 65536 * 2, "{peaks:?}");
    assert_eq!(like_named - like_input, 64 * 65536 * 2, "{peaks:?}");
    assert_eq!((default, half), (like_named, like_input), "{peaks:?}");
}

/// `no_autocast(call)` runs the call as `torch.autocast(enabled=False)` does: under
/// `amp_bf16`, a layer norm on bf16 inputs the model cast itself (`autocast_dtype()`, as
/// transformers' `_cast_if_autocast_enabled`) computes and returns bf16, where autocast would
/// make float32 copies of its input and weight and return float32. Outside autocast,
/// `autocast_dtype()` is `""` and the mark changes nothing. The families set measures the
/// mark on Nemotron, whose layer norms run so.
#[test]
fn a_call_outside_autocast_computes_in_its_inputs_dtype() {
    let text = |marked: bool, precision: &str| {
        let norm = if marked { "no_autocast(layer_norm(h, w))" } else { "layer_norm(h, w)" };
        format!(
            "model m() {{\n    input x: f32[N, 1024]\n    h = linear(x, 1024)\n    w = parameter([1024])\n    \
             if autocast_dtype() != \"\" {{\n        h = to(h, autocast_dtype())\n        w = to(w, autocast_dtype())\n    }}\n    \
             return {norm}\n}}\ninfer s {{ model m()  batch 256  no_grad  eval  precision {precision}  device a100_80gb }}\n"
        )
    };
    let peak = |marked: bool, precision: &str| peaks_of_scenarios(text(marked, precision))[0].1;
    // Autocast copies the bf16 input to float32 (256 x 1024 x 4 B), held beside the float32
    // output, where the unmarked norm's bf16 output is half as large; the weight's float32
    // copy is 4 KiB, held with them.
    assert_eq!(peak(false, "amp_bf16") - peak(true, "amp_bf16"), 256 * 1024 * 4 + 256 * 1024 * 2 + 1024 * 4);
    assert_eq!(peak(false, "fp32"), peak(true, "fp32"));
    assert_eq!(peak(false, "bf16"), peak(true, "bf16"));
}

/// A softmax given its input's dtype (`keep_dtype=true`, torch's `dtype=x.dtype`) is one autocast
/// leaves alone: under `amp_bf16` its output stays bf16, where a
/// plain softmax computes and returns float32 (autocast's `fp32_set_opt_dtype`). GPT-OSS's
/// router gives it; the families set measures the difference (256 KiB at gpt_oss_small's
/// (4, 2048) autocast peak).
#[test]
fn a_softmax_given_its_dtype_stays_half_under_autocast() {
    let text = "model m(keep: bool) {\n    input x: f32[N, 1024]\n    return softmax(linear(x, 4096), keep_dtype=keep)\n}\n\
                infer plain { model m(keep=false)  batch 256  no_grad  eval  precision amp_bf16  device cpu }\n\
                infer kept { model m(keep=true)  batch 256  no_grad  eval  precision amp_bf16  device cpu }\n";
    let peaks = peaks_of_scenarios(text.to_string());
    let [(_, plain), (_, kept)] = &peaks[..] else { panic!("{peaks:?}") };
    // The softmax's output: 256 x 4096 elements, 4 bytes against 2.
    assert_eq!(plain - kept, 256 * 4096 * 2, "{peaks:?}");
}
