//! The accuracy of the memory simulation, as a table: every calibration case on each device
//! (`cpu` against memory.json, `a100_80gb` against memory_cuda.json), predicted against
//! measured, then per device the mean absolute error and the worst case, and last the
//! relative errors as one Markdown table (the one in spec/memory.md); then the precision set
//! (memory_precision.json) the same way, the zoo's own models against the zoo set
//! (memory_zoo.json, memory_zoo_cuda.json), and the zoo's Llama against the LLM set
//! (memory_llm.json: transformers models, training, prefill and decode with the cache).
//!
//! `cargo bench -p netc-tests --bench accuracy`. The driver is the accuracy tests'
//! (tests/it/memory/accuracy.rs, used by tests/it/memory.rs), so the table is the one the
//! tests check against their bar.

#[path = "../it/memory/accuracy.rs"]
mod accuracy;

use std::fmt::Write as _;

use accuracy::Case;

fn main() {
    let cpu = accuracy::cases("cpu", accuracy::CPU_FIXTURE, accuracy::SCENARIOS);
    let cuda = accuracy::cases("a100_80gb", accuracy::CUDA_FIXTURE, accuracy::SCENARIOS);
    for cases in [&cpu, &cuda] {
        println!("{}", accuracy::table(cases));
    }
    println!(
        "bar: peak within {:.0} %, phase right, each category within {:.0} % of the peak",
        100.0 * accuracy::PEAK_BAR,
        100.0 * accuracy::CATEGORY_BAR
    );
    println!("{}{}", accuracy::summary(&cpu), accuracy::summary(&cuda));
    print!("{}", markdown(&cpu, &cuda));
    println!();
    let precision = accuracy::cases("a100_80gb", accuracy::PRECISION_FIXTURE, accuracy::PRECISION_SCENARIOS);
    println!("The precision set (memory_precision.json), a100_80gb:\n");
    println!("{}", accuracy::table(&precision));
    println!("{}", accuracy::summary(&precision));
    print!("{}", precision_markdown(&precision));
    println!();
    let amp_accum = accuracy::amp_accum_cases();
    println!("Autocast with accumulation (memory_amp_accum.json), a100_80gb:\n");
    println!("{}", accuracy::table(&amp_accum));
    println!("{}", accuracy::summary(&amp_accum));
    for (device, fixture) in [("cpu", accuracy::ZOO_CPU_FIXTURE), ("a100_80gb", accuracy::ZOO_CUDA_FIXTURE)] {
        let zoo = accuracy::cases_of(accuracy::ZOO, device, fixture, accuracy::SCENARIOS);
        println!("The zoo's own models (memory_zoo*.json), {device}:\n");
        println!("{}", accuracy::table(&zoo));
        println!("{}", accuracy::summary(&zoo));
    }
    let neox: Vec<_> = accuracy::LLM_FAMILIES.iter().filter(|(name, ..)| *name == "gpt_neox_small").copied().collect();
    let llm_sets = [
        ("The LLM set (memory_llm.json)", accuracy::LLM_FIXTURE, accuracy::LLM_MODELS, accuracy::LLM_SCENARIOS),
        (
            "More families in the LLM set's harness (memory_llm_families.json)",
            accuracy::LLM_FAMILIES_FIXTURE,
            accuracy::LLM_FAMILIES,
            accuracy::LLM_SCENARIOS,
        ),
        (
            "A padded batch in the LLM set's harness (memory_llm_padded.json)",
            accuracy::LLM_PADDED_FIXTURE,
            accuracy::LLM_PADDED,
            accuracy::LLM_SCENARIOS,
        ),
        (
            "GPT-NeoX under LoRA in the LLM set's harness (memory_llm_gpt_neox_lora.json)",
            accuracy::LLM_GPT_NEOX_LORA_FIXTURE,
            &neox,
            accuracy::GPT_NEOX_LORA_SCENARIOS,
        ),
        (
            "LLM.int8() weights in the LLM set's harness (memory_llm_int8.json)",
            accuracy::LLM_INT8_FIXTURE,
            accuracy::LLM_INT8,
            accuracy::LLM_SCENARIOS,
        ),
        (
            "LLM.int8() weights under reentrant checkpointing in the LLM set's harness (memory_llm_int8_reentrant.json)",
            accuracy::LLM_INT8_REENTRANT_FIXTURE,
            accuracy::LLM_INT8,
            accuracy::LLM_SCENARIOS,
        ),
        (
            "LoRA over GPTQ and AWQ weights in the LLM set's harness (memory_llm_int4_train.json)",
            accuracy::LLM_INT4_TRAIN_FIXTURE,
            accuracy::LLM_INT4,
            accuracy::LLM_SCENARIOS,
        ),
    ];
    for (title, fixture, models, scenarios) in llm_sets {
        let cases = accuracy::llm_cases(fixture, models, scenarios);
        println!("{title}, a100_80gb:\n");
        println!("{}", accuracy::table(&cases));
        println!("{}", accuracy::summary(&cases));
    }
}

/// One row per model and scenario of the precision set: the error of the peak and of the
/// rounded peak at each batch size (a case the harness skipped is empty).
fn precision_markdown(cases: &[Case]) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "| model | scenario | batch | peak | rounded | batch | peak | rounded |");
    let _ = writeln!(out, "|---|---|---|---:|---:|---|---:|---:|");
    for (model, scenario) in rows(cases) {
        let _ = write!(out, "| {model} | {scenario} |");
        let of_row: Vec<&Case> = cases.iter().filter(|c| c.model == model && c.scenario == scenario).collect();
        if of_row.len() == 1 {
            let _ = write!(out, " | | |");
        }
        for c in of_row {
            let rounded = c.rounded_error().map(percent).unwrap_or_default();
            let _ = write!(out, " {} | {} | {rounded} |", c.batch, percent(c.error()));
        }
        out.push('\n');
    }
    out
}

/// Each (model, scenario) of `cases` once, in the order they first come.
fn rows(cases: &[Case]) -> Vec<(&'static str, &'static str)> {
    let mut rows = Vec::new();
    for c in cases {
        if !rows.contains(&(c.model, c.scenario)) {
            rows.push((c.model, c.scenario));
        }
    }
    rows
}

/// A relative error in percent, signed, `0.00 %` when it rounds to nothing.
fn percent(e: f64) -> String {
    let p = (10_000.0 * e).round() / 100.0;
    if p == 0.0 { "0.00 %".to_string() } else { format!("{p:+.2} %") }
}

/// One row per model and scenario: the error of each batch size on the CPU, on CUDA, and of
/// CUDA's rounded peak.
fn markdown(cpu: &[Case], cuda: &[Case]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "| model | scenario | batch | cpu | a100_80gb | a100_80gb rounded | batch | cpu | a100_80gb | a100_80gb rounded |"
    );
    let _ = writeln!(out, "|---|---|---|---:|---:|---:|---|---:|---:|---:|");
    for (model, scenario) in rows(cpu) {
        let _ = write!(out, "| {model} | {scenario} |");
        for (c, g) in cpu
            .iter()
            .filter(|c| c.model == model && c.scenario == scenario)
            .zip(cuda.iter().filter(|c| c.model == model && c.scenario == scenario))
        {
            let rounded = g.rounded_error().map(percent).unwrap_or_default();
            let _ = write!(out, " {} | {} | {} | {rounded} |", c.batch, percent(c.error()), percent(g.error()));
        }
        out.push('\n');
    }
    out
}
