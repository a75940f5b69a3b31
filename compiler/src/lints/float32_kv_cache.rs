//! The `float32-kv-cache` lint: reports a scenario whose key/value cache is float32 (an fp32
//! model, or autocast, whose keys come out of float32 rotary tables), when a half-precision
//! model would halve the cache.
//! Its documentation is the `///` comment below (the source of its page in spec/lints/).

use super::{Lint, ScenarioContext, percent};
use crate::costs::simulate::tensor_dtypes;
use crate::diagnostics::{Code, Diagnostic};
use crate::knobs::Precision;
use crate::op::Op;
use crate::shapes::DType;
use crate::units::bytes;

/// ## What it does
/// Reports an `infer` scenario with a `cache` whose key/value cache is float32, when a model in
/// bfloat16 (`precision bf16`) would hold it in half the bytes.
///
/// ## Why is this bad?
/// The cache grows with every sequence and every token of context: at long contexts it is
/// most of the memory. A float32 cache holds 4 bytes per element where serving stacks
/// (transformers in a half model, vLLM) hold 2; under autocast the keys come out of float32
/// rotary tables and are cached in float32 too, though the weights' matmuls run in half.
///
/// ## Example
/// ```net
/// use std.models.llama
/// infer decode { model llama(vocab=32000, d=512, layers=2, heads=8, kv_heads=2, ffn=1024)  batch 8  seq 1  context 4096  no_grad  eval  cache dynamic }
/// ```
///
/// ## How to fix
/// Serve the model in half precision: `precision bf16` (or `fp16`).
pub struct Float32KvCache;

impl Lint for Float32KvCache {
    fn code(&self) -> Code {
        Code::Float32KvCache
    }

    fn check_scenario(&self, cx: &ScenarioContext<'_>) -> Vec<Diagnostic> {
        let run = &cx.setup.run;
        let fp8 = run.cache == Some(crate::knobs::CacheKind::Paged) && run.cache_dtype == crate::knobs::CacheDtype::Fp8;
        if run.cache.is_none() || fp8 || matches!(run.precision, Precision::Bf16 | Precision::Fp16) {
            return Vec::new();
        }
        let dtypes = tensor_dtypes(cx.graph, run.precision);
        let float32 = cx
            .graph
            .nodes
            .iter()
            .filter(|n| n.op == Op::KvCache)
            .any(|n| n.outputs.iter().any(|t| dtypes[t.0 as usize] == DType::F32));
        let cache = cx.costs.simulation.kv_cache_bytes();
        if !float32 || cache == 0 {
            return Vec::new();
        }
        let half = cx.simulate_with(|run| run.precision = Precision::Bf16);
        let peak = cx.costs.simulation.peak.bytes;
        let d = cx
            .diagnostic(
                Code::Float32KvCache,
                format!(
                    "the key/value cache is float32: {} after the step ({} % of the peak)",
                    bytes(cache),
                    percent(cache, peak)
                ),
                "cache",
            )
            .with_primary_message(format!(
                "in bf16: a {} cache, peak {} instead of {}",
                bytes(half.kv_cache_bytes()),
                bytes(half.peak.bytes),
                bytes(peak)
            ))
            .with_help("serve the model in half precision: `precision bf16`");
        vec![d]
    }
}
