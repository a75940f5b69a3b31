//! A scenario's settings evaluated: the model it runs with its arguments and dimensions, and
//! the [`RunSettings`] that decide its memory, defaults filled in. The checks
//! (`semantics::scenario`) report what is wrong; this takes what is right.

use std::collections::BTreeMap;

use crate::db::{Db, SourceFile, lookup_file};
use crate::graph::{self, Value};
use crate::knobs::{CacheDtype, CacheKind, ConvAlgorithm, DeviceModel, Loss, Optimizer, Precision};
use crate::semantics::files::{ItemLoc, file_scope, item_tree};
use crate::syntax::{Expr, ExprKind, Item, SettingValue};

/// What a scenario asks for, evaluated from its settings.
#[derive(Debug, Clone, PartialEq)]
pub struct ScenarioSetup {
    /// The model run: its file and item index.
    pub model: (SourceFile, u32),
    /// The model's arguments.
    pub args: BTreeMap<String, Value>,
    /// Bound dimensions: `N` from `batch`, `S` from `seq`, others from `dim`.
    pub dims: BTreeMap<String, i128>,
    /// The batch size, if set.
    pub batch: Option<i128>,
    /// How the model is run (train or infer, grad, mode, optimizer, device, budget).
    pub run: RunSettings,
}

/// The settings of a scenario that decide its memory, evaluated (defaults filled in).
#[derive(Debug, Clone, PartialEq)]
pub struct RunSettings {
    /// A `train` scenario.
    pub training: bool,
    /// `no_grad`.
    pub no_grad: bool,
    /// `eval`.
    pub eval: bool,
    /// The optimizer (`sgd` unless set).
    pub optimizer: Optimizer,
    /// The loss (`cross_entropy` unless set).
    pub loss: Loss,
    /// The key/value cache (`cache`), if any: `kv_cache(...)` calls return their input without one.
    pub cache: Option<CacheKind>,
    /// Tokens already in the cache (`context`, 0 unless set: a prefill).
    pub context: i128,
    /// Tokens `generate()` makes (`new_tokens`, 0 unless set: one forward pass).
    pub new_tokens: i128,
    /// Tokens per block of a paged cache (`cache_block`, 16 unless set).
    pub cache_block: i128,
    /// The dtype a paged cache stores (`cache_dtype`, `auto` unless set).
    pub cache_dtype: CacheDtype,
    /// `foreach=` given to the optimizer, if any.
    pub foreach: Option<bool>,
    /// The device preset (`cpu` unless set).
    pub device: DeviceModel,
    /// The convolution algorithm (`auto` unless set).
    pub conv_algorithm: ConvAlgorithm,
    /// `cudnn_benchmark`.
    pub cudnn_benchmark: bool,
    /// The budget in bytes.
    pub budget: Option<i128>,
    /// The safety margin (1.5 unless set).
    pub margin: f64,
    /// The runtime overhead in bytes, overriding the device's.
    pub overhead: Option<i128>,
    /// The precision policy (`fp32` unless set).
    pub precision: Precision,
    /// Micro-batches per optimizer step (`grad_accum`, 1 unless set).
    pub grad_accum: i128,
    /// Data-parallel devices (1 unless set).
    pub data_parallel: i128,
    /// ZeRO stage (0 unless set).
    pub zero: i128,
    /// `fsdp`.
    pub fsdp: bool,
    /// Activation checkpointing.
    pub checkpoint: bool,
    /// Checkpointing's reentrant variant (`use_reentrant=True`).
    pub reentrant: bool,
    /// peft's `prepare_model_for_kbit_training`: the float parameters outside quantized
    /// layers kept in float32.
    pub prepare_kbit: bool,
    /// The dataloader: workers, prefetch factor, bytes per sample, pinned memory.
    pub dataloader: Option<Dataloader>,
    /// The host memory budget.
    pub host_budget: Option<i128>,
}

impl RunSettings {
    /// Whether the scenario is a `generate()` run: `new_tokens` with a cache (without one
    /// the setting has no effect, W0306).
    pub fn generates(&self) -> bool {
        self.new_tokens > 0 && self.cache.is_some()
    }
}

/// `dataloader(workers=..., prefetch=..., sample=..., pin_memory=...)`, defaults filled in
/// as PyTorch's DataLoader has them (prefetch_factor 2, no pinning).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dataloader {
    /// Worker processes (0: loading in the main process).
    pub workers: i128,
    /// Batches prefetched per worker.
    pub prefetch: i128,
    /// Bytes of one decoded sample.
    pub sample: i128,
    /// Whether batches are copied into pinned (page-locked) memory.
    pub pin_memory: bool,
}

impl Default for RunSettings {
    fn default() -> Self {
        RunSettings {
            training: false,
            no_grad: false,
            eval: false,
            optimizer: Optimizer::Sgd,
            loss: Loss::CrossEntropy,
            foreach: None,
            device: DeviceModel::Cpu,
            conv_algorithm: ConvAlgorithm::Auto,
            cudnn_benchmark: false,
            budget: None,
            margin: 1.5,
            overhead: None,
            precision: Precision::Fp32,
            grad_accum: 1,
            data_parallel: 1,
            zero: 0,
            fsdp: false,
            checkpoint: false,
            reentrant: false,
            prepare_kbit: false,
            dataloader: None,
            host_budget: None,
            cache: None,
            context: 0,
            new_tokens: 0,
            cache_block: 16,
            cache_dtype: CacheDtype::Auto,
        }
    }
}

/// The bytes of a size expression, if it is a valid size.
fn size_of(e: &Expr) -> Option<i128> {
    match &e.kind {
        ExprKind::Size { value, integer, unit } => {
            crate::semantics::sizes::size_bytes(f64::from_bits(*value), *integer, &unit.text).ok().map(i128::from)
        }
        _ => None,
    }
}

/// Evaluates a scenario's settings; `None` when the scenario or its model is broken (the
/// checks report why).
#[salsa::tracked(returns(ref))]
pub fn scenario_setup<'db>(db: &'db dyn Db, loc: ItemLoc<'db>) -> Option<ScenarioSetup> {
    let file = *loc.file(db);
    let Some(Item::Scenario(scenario)) = item_tree(db, loc).as_deref() else { return None };
    let run = RunSettings { training: scenario.kind == crate::syntax::ScenarioKind::Train, ..RunSettings::default() };
    let mut setup = ScenarioSetup { model: (file, 0), args: BTreeMap::new(), dims: BTreeMap::new(), batch: None, run };
    let mut model = None;
    for s in &scenario.settings {
        match (&s.key.text[..], &s.value) {
            ("model", SettingValue::Value(e)) => {
                let (callee, args) = match &e.kind {
                    ExprKind::Call { callee, args } => (callee, args.as_slice()),
                    ExprKind::Name(n) => (n, [].as_slice()),
                    _ => return None,
                };
                let def = file_scope(db, file).get(&callee.text)?.clone();
                let model_loc = ItemLoc::new(db, lookup_file(db, &def.file)?, def.item);
                let Some(Item::Model(m)) = item_tree(db, model_loc).as_deref() else {
                    return None;
                };
                for (position, arg) in args.iter().enumerate() {
                    let name = match &arg.keyword {
                        Some(k) => k.text.clone(),
                        None => m.params.get(position)?.name.text.clone(),
                    };
                    setup.args.insert(name.to_string(), graph::literal_value(&arg.value));
                }
                model = Some((lookup_file(db, &def.file)?, def.item));
            }
            ("batch", SettingValue::Value(Expr { kind: ExprKind::Int(n), .. })) => {
                setup.batch = Some(*n as i128);
                setup.dims.insert("N".into(), *n as i128);
            }
            ("seq", SettingValue::Value(Expr { kind: ExprKind::Int(n), .. })) => {
                setup.dims.insert("S".into(), *n as i128);
            }
            ("dim", SettingValue::Dim { name, value: Expr { kind: ExprKind::Int(n), .. } }) => {
                setup.dims.insert(name.text.to_string(), *n as i128);
            }
            ("no_grad", _) => setup.run.no_grad = true,
            ("fsdp", _) => setup.run.fsdp = true,
            ("checkpoint", _) => setup.run.checkpoint = true,
            ("reentrant", _) => setup.run.reentrant = true,
            ("prepare_kbit", _) => setup.run.prepare_kbit = true,
            ("precision", SettingValue::Value(Expr { kind: ExprKind::Name(n), .. })) => {
                // A word that is no policy is reported by the checks; the default stands.
                setup.run.precision = Precision::from_name(&n.text).unwrap_or(setup.run.precision)
            }
            ("loss", SettingValue::Value(Expr { kind: ExprKind::Name(n), .. })) => {
                setup.run.loss = Loss::from_name(&n.text).unwrap_or(setup.run.loss)
            }
            ("cache", SettingValue::Value(Expr { kind: ExprKind::Name(n), .. })) => {
                setup.run.cache = CacheKind::from_name(&n.text)
            }
            ("cache_dtype", SettingValue::Value(Expr { kind: ExprKind::Name(n), .. })) => {
                setup.run.cache_dtype = CacheDtype::from_name(&n.text).unwrap_or(setup.run.cache_dtype)
            }
            ("context", SettingValue::Value(Expr { kind: ExprKind::Int(n), .. })) => setup.run.context = *n as i128,
            ("new_tokens", SettingValue::Value(Expr { kind: ExprKind::Int(n), .. })) => {
                setup.run.new_tokens = *n as i128
            }
            ("cache_block", SettingValue::Value(Expr { kind: ExprKind::Int(n), .. })) => {
                setup.run.cache_block = *n as i128
            }
            ("grad_accum", SettingValue::Value(Expr { kind: ExprKind::Int(n), .. })) => {
                setup.run.grad_accum = *n as i128
            }
            ("data_parallel", SettingValue::Value(Expr { kind: ExprKind::Int(n), .. })) => {
                setup.run.data_parallel = *n as i128
            }
            ("zero", SettingValue::Value(Expr { kind: ExprKind::Int(n), .. })) => setup.run.zero = *n as i128,
            ("host_budget", SettingValue::Value(e)) => setup.run.host_budget = size_of(e),
            ("dataloader", SettingValue::Args(args)) => {
                let mut loader = Dataloader { workers: 0, prefetch: 2, sample: 0, pin_memory: false };
                for a in args {
                    match (a.keyword.as_ref().map(|k| k.text.as_str()), &a.value.kind) {
                        (Some("workers"), ExprKind::Int(n)) => loader.workers = *n as i128,
                        (Some("prefetch"), ExprKind::Int(n)) => loader.prefetch = *n as i128,
                        (Some("pin_memory"), ExprKind::Bool(b)) => loader.pin_memory = *b,
                        (Some("sample"), _) => loader.sample = size_of(&a.value).unwrap_or(0),
                        _ => {}
                    }
                }
                setup.run.dataloader = Some(loader);
            }
            ("eval", _) => setup.run.eval = true,
            ("cudnn_benchmark", _) => setup.run.cudnn_benchmark = true,
            ("optimizer", SettingValue::Value(e)) => match &e.kind {
                ExprKind::Name(n) => setup.run.optimizer = Optimizer::from_name(&n.text).unwrap_or(setup.run.optimizer),
                ExprKind::Call { callee, args } => {
                    setup.run.optimizer = Optimizer::from_name(&callee.text).unwrap_or(setup.run.optimizer);
                    for a in args {
                        if a.keyword.as_ref().is_some_and(|k| k.text == "foreach")
                            && let ExprKind::Bool(b) = a.value.kind
                        {
                            setup.run.foreach = Some(b);
                        }
                    }
                }
                _ => {}
            },
            ("device", SettingValue::Value(Expr { kind: ExprKind::Name(n), .. })) => {
                setup.run.device = DeviceModel::from_name(&n.text).unwrap_or(setup.run.device)
            }
            ("conv_algorithm", SettingValue::Value(Expr { kind: ExprKind::Name(n), .. })) => {
                setup.run.conv_algorithm = ConvAlgorithm::from_name(&n.text).unwrap_or(setup.run.conv_algorithm)
            }
            ("budget", SettingValue::Value(e)) => setup.run.budget = size_of(e),
            ("overhead", SettingValue::Value(e)) => setup.run.overhead = size_of(e),
            ("margin", SettingValue::Value(e)) => {
                setup.run.margin = match e.kind {
                    ExprKind::Float(bits) => f64::from_bits(bits),
                    ExprKind::Int(n) => n as f64,
                    _ => setup.run.margin,
                }
            }
            _ => {}
        }
    }
    setup.model = model?;
    // With gradient accumulation the model runs on micro-batches.
    if setup.run.training
        && setup.run.grad_accum > 1
        && let Some(batch) = setup.batch
        && batch % setup.run.grad_accum == 0
    {
        setup.dims.insert("N".into(), batch / setup.run.grad_accum);
    }
    Some(setup)
}
