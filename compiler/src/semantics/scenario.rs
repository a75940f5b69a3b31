//! Checks of `train` / `infer` scenarios: every setting known, given once, applicable to the
//! scenario's kind, with a value of the right form; the model exists and is called right.

use std::collections::BTreeMap;

use crate::diagnostics::Code;
use crate::suggest::closest;
use crate::syntax::settings::setting;
use crate::syntax::{Arg, Expr, ExprKind, Name, NodeId, Scenario, ScenarioKind, Setting, SettingValue};

use super::check::{ItemChecker, LabelExt};
use super::kinds::ValueKind;
use super::scope::DefKind;
use super::sizes::{SizeError, size_bytes};
use crate::knobs::{CacheDtype, CacheKind, ConvAlgorithm, DeviceModel, Loss, Optimizer, Precision};

/// The keyword arguments of `dataloader(...)` and their kinds.
pub const DATALOADER_ARGS: &[(&str, ValueKind)] = &[
    ("workers", ValueKind::Int),
    ("prefetch", ValueKind::Int),
    ("sample", ValueKind::Size),
    ("pin_memory", ValueKind::Bool),
];

/// Checks a scenario.
pub fn check_scenario(cx: &mut ItemChecker<'_>, scenario: &Scenario) {
    let mut first: BTreeMap<String, NodeId> = BTreeMap::new();
    let mut rejected: Vec<NodeId> = Vec::new();
    for s in &scenario.settings {
        let Some(spec) = setting(&s.key.text) else { continue };
        // `dim` may appear once per dimension.
        let identity = match &s.value {
            SettingValue::Dim { name, .. } => format!("dim {}", name.text),
            _ => s.key.text.to_string(),
        };
        if let Some(prev) = first.get(&identity) {
            let file = cx.file.clone();
            let at = cx.at(*prev);
            cx.error(Code::DuplicateSetting, s.id, format!("`{identity}` is set twice")).with_label_mut(
                &file,
                at,
                "first set here",
            );
            rejected.push(s.id);
            continue;
        }
        first.insert(identity, s.id);
        if let Some(only) = spec.only
            && only != scenario.kind.keyword()
        {
            let why = match s.key.text.as_str() {
                "no_grad" => "a train scenario needs gradients",
                "eval" => "a train scenario runs the model in training mode",
                _ => "it has no effect there",
            };
            cx.error(
                Code::ConflictingSettings,
                s.key.id,
                format!(
                    "`{}` applies to {only} scenarios, not to `{}` ones: {why}",
                    s.key.text,
                    scenario.kind.keyword()
                ),
            );
            rejected.push(s.id);
            continue;
        }
        check_setting(cx, s);
    }
    if !first.contains_key("model") && !scenario.recovered {
        cx.error(
            Code::MissingSetting,
            scenario.name.id,
            format!("scenario `{}` does not name a model", scenario.name.text),
        )
        .help = Some("add `model NAME(ARGS)`".into());
    }
    check_combinations(cx, scenario, &rejected);
}

fn positive_int(cx: &mut ItemChecker<'_>, e: &Expr, what: &str) -> Option<i64> {
    match e.kind {
        ExprKind::Int(n) if n > 0 => Some(n),
        ExprKind::Int(n) => {
            cx.error(Code::InvalidSettingValue, e.id, format!("{what} must be at least 1, found {n}"));
            None
        }
        ExprKind::Error => None,
        _ => {
            cx.error(Code::InvalidSettingValue, e.id, format!("{what} must be a whole number, such as `32`"));
            None
        }
    }
}

fn one_of(cx: &mut ItemChecker<'_>, e: &Expr, what: &str, allowed: &[&str]) {
    let name = match &e.kind {
        ExprKind::Name(n) => n,
        ExprKind::Call { callee, .. } if what == "optimizer" => callee,
        ExprKind::Error => return,
        _ => {
            let d = cx.error(Code::InvalidSettingValue, e.id, format!("expected {what} name"));
            d.help = Some(format!("one of: {}", allowed.join(", ")));
            return;
        }
    };
    if !allowed.contains(&name.text.as_str()) {
        let suggestion = closest(&name.text, allowed.iter().copied());
        let d = cx.error(Code::InvalidSettingValue, name.id, format!("unknown {what} `{}`", name.text));
        d.help = Some(match suggestion {
            Some(s) => format!("did you mean `{s}`?"),
            None => format!("one of: {}", allowed.join(", ")),
        });
    }
}

/// Checks a size expression and returns its bytes.
pub fn size(cx: &mut ItemChecker<'_>, e: &Expr, what: &str) -> Option<u64> {
    match &e.kind {
        ExprKind::Size { value, integer, unit } => match size_bytes(f64::from_bits(*value), *integer, &unit.text) {
            Ok(bytes) => Some(bytes),
            Err(SizeError::UnknownUnit(suggestion)) => {
                let d = cx.error(Code::InvalidSize, unit.id, format!("unknown size unit `{}`", unit.text));
                d.help = Some(match suggestion {
                    Some(s) => format!("did you mean `{s}`? (units are B, KB, MB, GB, TB and KiB, MiB, GiB, TiB)"),
                    None => "the units are B, KB, MB, GB, TB (powers of 1000) and KiB, MiB, GiB, TiB (powers of 1024)"
                        .into(),
                });
                None
            }
            Err(SizeError::TooLarge) => {
                cx.error(Code::InvalidSize, e.id, format!("{what} is too large: more than 2^64 bytes"));
                None
            }
            Err(SizeError::NotWholeBytes) => {
                cx.error(Code::InvalidSize, e.id, format!("{what} is not a whole number of bytes"));
                None
            }
        },
        ExprKind::Int(_) | ExprKind::Float(_) => {
            cx.error(Code::InvalidSize, e.id, format!("{what} needs a unit")).help =
                Some("write the unit after the number: `8 GiB`, `512 MiB` (MB and MiB differ)".into());
            None
        }
        ExprKind::Error => None,
        _ => {
            cx.error(Code::InvalidSize, e.id, format!("{what} must be a size, such as `8 GiB`"));
            None
        }
    }
}

fn check_setting(cx: &mut ItemChecker<'_>, s: &Setting) {
    let key = s.key.text.as_str();
    match &s.value {
        SettingValue::Flag => {}
        SettingValue::Dim { name, value } => {
            if matches!(name.text.as_str(), "N" | "S") {
                let other = if name.text == "N" { "batch" } else { "seq" };
                cx.error(Code::ConflictingSettings, name.id, format!("`{}` is bound by `{other}`", name.text)).help =
                    Some(format!("write `{other} ...` instead of `dim {} = ...`", name.text));
            }
            positive_int(cx, value, &format!("dimension `{}`", name.text));
        }
        SettingValue::Args(args) => check_dataloader(cx, args),
        SettingValue::Value(e) => match key {
            "model" => check_model(cx, e),
            "batch" | "seq" | "grad_accum" | "data_parallel" | "context" | "cache_block" | "new_tokens" => {
                positive_int(cx, e, &format!("`{key}`"));
            }
            "zero" => {
                if let Some(stage) = positive_int(cx, e, "the ZeRO stage")
                    && stage > 3
                {
                    cx.error(Code::InvalidSettingValue, e.id, format!("ZeRO has stages 1, 2 and 3, not {stage}"));
                }
            }
            "precision" => one_of(cx, e, "precision", Precision::NAMES),
            "loss" => one_of(cx, e, "loss", Loss::NAMES),
            "cache" => one_of(cx, e, "cache", CacheKind::NAMES),
            "cache_dtype" => one_of(cx, e, "cache dtype", CacheDtype::NAMES),
            "optimizer" => {
                one_of(cx, e, "optimizer", Optimizer::NAMES);
                if let ExprKind::Call { args, .. } = &e.kind
                    && let Some(positional) = args.iter().find(|a| a.keyword.is_none())
                {
                    cx.error(Code::InvalidSettingValue, positional.id, "optimizer options are keyword arguments")
                        .help = Some("write `adam(foreach=false)`".into());
                }
            }
            "device" => one_of(cx, e, "device", DeviceModel::NAMES),
            "conv_algorithm" => one_of(cx, e, "convolution algorithm", ConvAlgorithm::NAMES),
            "budget" | "overhead" | "host_budget" => {
                let bytes = size(cx, e, &format!("`{key}`"));
                if bytes == Some(0) && key != "overhead" {
                    cx.error(Code::InvalidSettingValue, e.id, format!("a `{key}` of 0 bytes can never be met"));
                }
            }
            "margin" => match e.kind {
                ExprKind::Float(bits) if f64::from_bits(bits) >= 1.0 => {}
                ExprKind::Int(n) if n >= 1 => {}
                ExprKind::Error => {}
                _ => {
                    cx.error(Code::InvalidSettingValue, e.id, "the safety margin must be a number of at least 1.0")
                        .help = Some("`margin 1.5` asks that 1.5 x the predicted peak fit the budget".into());
                }
            },
            _ => {}
        },
    }
}

fn check_model(cx: &mut ItemChecker<'_>, e: &Expr) {
    let (callee, args): (&Name, &[Arg]) = match &e.kind {
        ExprKind::Call { callee, args } => (callee, args),
        ExprKind::Name(n) => (n, &[]),
        ExprKind::Error => return,
        _ => {
            cx.error(Code::InvalidSettingValue, e.id, "`model` takes a model call, such as `resnet18(classes=10)`");
            return;
        }
    };
    let env_kinds = cx.argument_kinds_without_variables(args);
    let Some(def) = cx.resolve_callee(callee, &[DefKind::Model]) else { return };
    if let Some(sig) = def.signature.clone() {
        cx.check_call_args(e.id, callee, &def, &sig, args, &env_kinds);
    }
}

fn check_dataloader(cx: &mut ItemChecker<'_>, args: &[Arg]) {
    let mut seen: BTreeMap<&str, NodeId> = BTreeMap::new();
    for arg in args {
        let Some(kw) = &arg.keyword else {
            cx.error(Code::InvalidSettingValue, arg.id, "dataloader options are keyword arguments").help =
                Some("write `dataloader(workers=8, prefetch=2, sample=602 KB, pin_memory=true)`".into());
            continue;
        };
        let Some((_, kind)) = DATALOADER_ARGS.iter().find(|(n, _)| *n == kw.text) else {
            let suggestion = closest(&kw.text, DATALOADER_ARGS.iter().map(|(n, _)| *n));
            let d = cx.error(Code::UnknownKeyword, kw.id, format!("`dataloader` has no option `{}`", kw.text));
            d.help = Some(match suggestion {
                Some(s) => format!("did you mean `{s}`?"),
                None => "the options are workers, prefetch, sample and pin_memory".into(),
            });
            continue;
        };
        if let Some(prev) = seen.insert(&kw.text, arg.id) {
            let file = cx.file.clone();
            let at = cx.at(prev);
            cx.error(Code::RepeatedArgument, arg.id, format!("option `{}` is given twice", kw.text)).with_label_mut(
                &file,
                at,
                "first given here",
            );
            continue;
        }
        match kind {
            ValueKind::Size => {
                size(cx, &arg.value, "the sample size");
            }
            ValueKind::Int => {
                if !matches!(arg.value.kind, ExprKind::Int(n) if n >= 0) && arg.value.kind != ExprKind::Error {
                    cx.error(Code::ArgumentKind, arg.value.id, format!("`{}` must be a whole number", kw.text));
                }
            }
            _ => {
                if !matches!(arg.value.kind, ExprKind::Bool(_) | ExprKind::Error) {
                    cx.error(Code::ArgumentKind, arg.value.id, format!("`{}` must be `true` or `false`", kw.text));
                }
            }
        }
    }
}

/// Settings that are fine alone but contradict each other.
fn check_combinations(cx: &mut ItemChecker<'_>, scenario: &Scenario, rejected: &[NodeId]) {
    // Settings already rejected (wrong scenario kind, repeated) take no part.
    let get = |key: &str| scenario.settings.iter().find(|s| s.key.text == key && !rejected.contains(&s.id));
    let int_of = |s: Option<&Setting>| match s.map(|s| &s.value) {
        Some(SettingValue::Value(Expr { kind: ExprKind::Int(n), .. })) => Some(*n),
        _ => None,
    };
    if let (Some(zero), Some(fsdp)) = (get("zero"), get("fsdp")) {
        let file = cx.file.clone();
        let at = cx.at(zero.id);
        cx.error(Code::ConflictingSettings, fsdp.id, "`fsdp` and `zero` both choose how state is sharded")
            .with_label_mut(&file, at, "ZeRO chosen here")
            .help = Some("keep one: FSDP full sharding is ZeRO stage 3".into());
    }
    if scenario.kind == ScenarioKind::Train
        && let (Some(batch), Some(accum)) = (int_of(get("batch")), int_of(get("grad_accum")))
        && accum > 0
        && batch % accum != 0
    {
        let setting = get("grad_accum").expect("found above");
        let batch_at = cx.at(get("batch").expect("found above").id);
        let file = cx.file.clone();
        cx.error(
            Code::ConflictingSettings,
            setting.id,
            format!("batch {batch} cannot be split into {accum} equal micro-batches"),
        )
        .with_label_mut(&file, batch_at, "the batch is set here")
        .help = Some("choose a `grad_accum` that divides `batch`".into());
    }
    let ineffective = |cx: &mut ItemChecker<'_>, s: &Setting, message: String, help: &str| {
        cx.error(Code::IneffectiveSetting, s.key.id, message).help = Some(help.to_string());
    };
    if let (Some(tokens), Some(context)) = (get("new_tokens"), get("context")) {
        let file = cx.file.clone();
        let context_at = cx.at(context.key.id);
        cx.error(Code::ConflictingSettings, tokens.key.id, "`generate()` starts from an empty cache".to_string())
            .with_label_mut(&file, context_at, "a cached context is set here")
            .help = Some("drop `context` (the prompt is `seq`), or drop `new_tokens` for one decode step".into());
    }
    for key in ["context", "new_tokens", "cache_block", "cache_dtype"] {
        if let Some(setting) = get(key)
            && get("cache").is_none()
        {
            let help = "add `cache dynamic` (transformers' `DynamicCache`) or `cache paged` (vLLM's blocks)";
            ineffective(cx, setting, format!("`{key}` without a `cache` has no effect"), help);
        }
    }
    for key in ["cache_block", "cache_dtype"] {
        if let Some(setting) = get(key)
            && let Some(cache) = get("cache")
            && !matches!(&cache.value, SettingValue::Value(Expr { kind: ExprKind::Name(n), .. }) if n.text == "paged")
        {
            let help = "blocks and fp8 storage are vLLM's (`cache paged`); a `DynamicCache` grows by `torch.cat` in the keys' dtype";
            ineffective(cx, setting, format!("`{key}` only applies to a `paged` cache"), help);
        }
    }
    if let Some(reentrant) = get("reentrant")
        && get("checkpoint").is_none()
    {
        let help = "add `checkpoint` (peft's `prepare_model_for_kbit_training` enables it by default)";
        ineffective(cx, reentrant, "`reentrant` without `checkpoint` has no effect".into(), help);
    }
    if let Some(margin) = get("margin")
        && get("budget").is_none()
    {
        ineffective(
            cx,
            margin,
            "`margin` without a `budget` has no effect".into(),
            "add `budget 8 GiB` (the memory per device)",
        );
    }
    if let Some(host) = get("host_budget")
        && get("dataloader").is_none()
    {
        let help = "add `dataloader(workers=8, prefetch=2, sample=602 KB)`";
        ineffective(cx, host, "`host_budget` without a `dataloader` has no effect".into(), help);
    }
    let on_cpu = matches!(get("device").map(|s| &s.value), Some(SettingValue::Value(Expr { kind: ExprKind::Name(n), .. })) if n.text == "cpu");
    if let Some(bench) = get("cudnn_benchmark")
        && on_cpu
    {
        ineffective(
            cx,
            bench,
            "`cudnn_benchmark` has no effect on `device cpu`".into(),
            "remove it, or choose a CUDA device",
        );
    }
    if let Some(zero) = get("zero")
        && get("data_parallel").is_none()
        && int_of(Some(zero)).is_some()
    {
        cx.error(
            Code::ConflictingSettings,
            zero.id,
            "ZeRO shards over data-parallel devices, but `data_parallel` is not set",
        )
        .help = Some("add `data_parallel 8` (the number of devices)".into());
    }
}
