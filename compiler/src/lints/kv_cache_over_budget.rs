//! The `kv-cache-over-budget` lint: reports a served model whose key/value cache at the
//! declared context is what does not fit next to its weights, with how many sequences of that
//! context do (`netc fit`).
//! Its documentation is the `///` comment below (the source of its page in spec/lints/).

use super::{Lint, ScenarioContext, label_peak};
use crate::costs::fit::{Axis, fit};
use crate::diagnostics::{Code, Diagnostic};
use crate::units::bytes;

/// ## What it does
/// Reports an `infer` scenario with a `cache` that is over its budget (or, without one, its
/// device) while it would fit without its key/value cache: the cache of `batch` sequences at
/// the declared `context` is what does not fit. It says how many sequences of that context
/// fit, as `netc fit` finds them.
///
/// ## Why is this bad?
/// A serving stack admits requests until the cache is full: a batch planned at a context the
/// card cannot hold runs out of memory at the first long request, not at start-up.
///
/// ## Example
/// ```net
/// use std.models.llama
/// infer decode { model llama(vocab=32000, d=1024, layers=8, heads=16, kv_heads=4, ffn=2816, logits_to_keep=1)  batch 64  seq 1  context 8192  no_grad  eval  precision bf16  cache dynamic  budget 4 GiB }
/// ```
///
/// ## How to fix
/// Serve fewer sequences at this context (the number the diagnostic gives), shorten the
/// `context`, hold the cache in whole blocks written in place (`cache paged`), or in fp8
/// (`cache_dtype fp8`).
pub struct KvCacheOverBudget;

impl Lint for KvCacheOverBudget {
    fn code(&self) -> Code {
        Code::KvCacheOverBudget
    }

    fn check_scenario(&self, cx: &ScenarioContext<'_>) -> Vec<Diagnostic> {
        let run = &cx.setup.run;
        if run.training || run.cache.is_none() {
            return Vec::new();
        }
        let Some((limit, what, key)) = cx.limit() else { return Vec::new() };
        let total = cx.costs.total;
        let cache = cx.costs.simulation.peak.breakdown.kv_cache;
        if total <= limit || cache == 0 || total.saturating_sub(cache) > limit {
            return Vec::new();
        }
        let sequences = cx.setup.batch.unwrap_or(1);
        let at = if run.context > 0 { format!(" at a context of {} tokens", run.context) } else { String::new() };
        let mut d = cx
            .diagnostic(
                Code::KvCacheOverBudget,
                format!(
                    "the key/value cache of {sequences} sequences{at} is {} at the peak: with it the scenario needs {}, more than the {} of {what}",
                    bytes(cache),
                    bytes(total),
                    bytes(limit)
                ),
                key,
            )
            .with_primary_message(format!("{} here", bytes(limit)));
        match fit(cx.db, cx.source, cx.item, Axis::Batch).ok().and_then(|f| f.largest) {
            Some(n) if n > 0 => d = d.with_note(format!("{n} sequences of this context fit (`netc fit`)")),
            _ => d = d.with_note("not one sequence of this context fits".to_string()),
        }
        let d = d.with_help(
            "serve fewer sequences, shorten the `context`, or hold the cache with `cache paged` (and `cache_dtype fp8`)",
        );
        vec![label_peak(d, cx, "the peak happens here")]
    }
}
