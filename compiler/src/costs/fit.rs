//! `netc fit`: the largest batch size or sequence length at which a scenario fits its budget,
//! or its device when it has none. Each size is simulated with the scenario's graph re-bound
//! to it ([`scenario_costs_with`]): the database is not edited, so the editor's lenses can ask
//! too.

use super::devices::Device;
use super::{scenario_costs, scenario_costs_with};
use crate::db::SourceFile;
use crate::elaborate::Db;
use crate::semantics::files::{ItemLoc, syntax_tree};
use crate::semantics::setup::scenario_setup;
use crate::syntax::Item;

/// What `fit` varies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Axis {
    /// The batch size (`batch`).
    Batch,
    /// The sequence length (`seq`).
    Seq,
}

impl Axis {
    /// The setting's keyword.
    pub fn key(self) -> &'static str {
        match self {
            Axis::Batch => "batch",
            Axis::Seq => "seq",
        }
    }
}

/// One value tried: the value and what the scenario then needs (`None`: it could not
/// be simulated at that value, which counts as not fitting).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Trial {
    /// The batch size or sequence length.
    pub value: i128,
    /// The total the budget is checked against (peak reserved + runtime), in bytes.
    pub total_bytes: Option<i128>,
}

/// Where the limit comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    /// The scenario's budget (within its device).
    Budget(i128),
    /// The device's capacity: no budget, or a budget larger than the device.
    Device(&'static Device),
}

impl Limit {
    /// The bytes the total must not exceed.
    pub fn bytes(self) -> i128 {
        match self {
            Limit::Budget(bytes) => bytes,
            Limit::Device(device) => device.capacity.unwrap_or(0),
        }
    }
}

/// The answer for one scenario.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fit {
    /// The scenario.
    pub scenario: String,
    /// What was varied (`batch` or `seq`).
    pub axis: &'static str,
    /// The limit: the budget when there is one within the device, else the device's capacity.
    pub limit: Limit,
    /// The largest value that fits (`None`: not even 1).
    pub largest: Option<i128>,
    /// Every value tried, in order.
    pub trials: Vec<Trial>,
}

/// The most any search goes: a batch or a sequence of 2^24.
const MAX_VALUE: i128 = 1 << 24;

/// The largest value of `axis` at which scenario `index` of `file` fits its budget (or its
/// device), by doubling from 1 and then bisecting; `Err` says why there is nothing to fit
/// (no limit, or the scenario does not simulate). Each value is simulated with the
/// scenario's graph re-bound to it ([`scenario_costs_with`]): nothing in `db` changes. With
/// `grad_accum` the batch grows by whole micro-batches.
pub fn fit(db: &dyn Db, file: SourceFile, index: u32, axis: Axis) -> Result<Fit, String> {
    let loc = ItemLoc::new(db, file, index);
    let Some(Item::Scenario(scenario)) = syntax_tree(db, file).get(index as usize) else {
        return Err("not a scenario".into());
    };
    let scenario_name = scenario.name.text.to_string();
    let cannot = || format!("scenario `{scenario_name}` cannot be simulated: see `netc check`");
    let costs = scenario_costs(db, loc).as_ref().ok_or_else(cannot)?;
    let setup = scenario_setup(db, loc).as_ref().ok_or_else(cannot)?;
    let (dim, step) = match axis {
        Axis::Batch => ("N", setup.run.grad_accum.max(1)),
        Axis::Seq => ("S", 1),
    };
    if !setup.dims.contains_key(dim) {
        return Err(format!("scenario `{scenario_name}` has no `{}` to grow", axis.key()));
    }
    let limit = match (costs.budget, costs.device.capacity) {
        (Some(budget), Some(capacity)) if capacity < budget => Limit::Device(costs.device),
        (Some(budget), _) => Limit::Budget(budget),
        (None, Some(_)) => Limit::Device(costs.device),
        (None, None) => {
            return Err(format!(
                "scenario `{scenario_name}` has no budget and its device ({}) no capacity: give it a `budget`",
                costs.device.name()
            ));
        }
    };
    let mut trials: Vec<Trial> = Vec::new();
    // `units` micro-batches (or positions): the value is `units * step`.
    let mut fits = |units: i128| -> bool {
        let mut dims = setup.dims.clone();
        dims.insert(dim.to_string(), units);
        let total = scenario_costs_with(db, loc, dims).filter(|c| !c.simulation.overflowed).map(|c| c.total);
        trials.push(Trial { value: units.saturating_mul(step), total_bytes: total });
        total.is_some_and(|t| t <= limit.bytes())
    };
    // Doubling: the last value that fits and the first that does not.
    let (mut good, mut bad) = (0i128, None);
    let mut units = 1;
    while units <= MAX_VALUE {
        if fits(units) {
            good = units;
            units *= 2;
        } else {
            bad = Some(units);
            break;
        }
    }
    if let Some(mut bad) = bad {
        while bad - good > 1 {
            let mid = good + (bad - good) / 2;
            if fits(mid) {
                good = mid;
            } else {
                bad = mid;
            }
        }
    }
    Ok(Fit {
        scenario: scenario_name,
        axis: axis.key(),
        limit,
        largest: (good > 0).then_some(good.saturating_mul(step)),
        trials,
    })
}
