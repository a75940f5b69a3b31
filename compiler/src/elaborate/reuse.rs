//! Block calls reused from the previous elaboration of the same model.
//!
//! An edit inside one block of a large model changes one block call; elaborating the
//! thousands of others again would give the same nodes. So each elaboration records its
//! block calls ([`CallRecord`]: where the call was, what it was given, which nodes, tensors
//! and statement values it made), and the next elaboration of the same request copies a
//! call's part of the previous graph instead of running the block again when the call is the
//! same: the same call site (the chain of calls, and how many times it ran before), the same
//! callee, arguments of the same types held the same way by the caller, and none of the
//! items the call read (the block, the ops and blocks it called) changed since. A call of
//! the model's body is also found by its callee and how many calls of it came before, when a
//! line added above it gave it a new site; it is then copied with its new site written into
//! its nodes' origins. Calls that made diagnostics, tied weights by key or met a value that
//! could not be computed are not reused: their effects reach outside them.
//!
//! It changes no result: debug builds (every test run) elaborate again from scratch after
//! each elaboration that reused a call and assert that the graphs are equal, so the graph is
//! still a function of the sources.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

use super::Db;
use super::{ActiveShare, Graph, Site, SiteMap, TensorId, Value};
use crate::db::{SourceFile, lookup_file};
use crate::diagnostics::FileName;
use crate::semantics::Scope;
use crate::semantics::files::{file_scope, item_of};
use crate::semantics::scope::DefKind;
use crate::syntax::Item;

/// The last elaboration of each request (a scenario's model, or a model on its own), kept
/// beside salsa as the parse states are ([`crate::db::ParseCache`]): a query cannot see its
/// previous result. Shared by the database's clones. At most [`ElaborationCache::CAPACITY`]
/// are kept, the least recently made dropped first: a request's key holds item indices, so
/// inserting an item above a model makes new keys, and a long editing session must not keep
/// every graph it ever made.
#[derive(Default)]
pub struct ElaborationCache(Mutex<Kept>);

/// The elaborations kept, each with when it was made (a count of elaborations), and those
/// replaced since the last one was made (see [`drop_later`]).
#[derive(Default)]
struct Kept {
    elaborations: HashMap<CacheKey, (u64, Arc<Previous>)>,
    made: u64,
    replaced: Vec<Arc<Previous>>,
}

/// Drops elaborations on a background thread. A graph of thousands of nodes is tens of
/// thousands of allocations to free; an editor waits for the thread that elaborates, so the
/// freeing is moved off it. The cache lets go of a replaced elaboration one elaboration late:
/// until the database's next revision, salsa's previous result holds the same graph, and the
/// last holder is the one that frees it.
fn drop_later(replaced: Vec<Arc<Previous>>) {
    use std::sync::OnceLock;
    use std::sync::mpsc::{Sender, channel};
    /// The way to the thread, if it could be started.
    type Dropper = Option<Mutex<Sender<Vec<Arc<Previous>>>>>;
    static DROPPER: OnceLock<Dropper> = OnceLock::new();
    if replaced.is_empty() {
        return;
    }
    let dropper = DROPPER.get_or_init(|| {
        let (send, receive) = channel::<Vec<Arc<Previous>>>();
        let spawned = std::thread::Builder::new().name("netc-drop".into()).spawn(move || {
            for replaced in receive {
                drop(replaced);
            }
        });
        spawned.ok().map(|_| Mutex::new(send))
    });
    // Without the thread (it could not be started), dropped here.
    if let Some(dropper) = dropper {
        let _ = dropper.lock().unwrap_or_else(|e| e.into_inner()).send(replaced);
    }
}

/// Which elaboration: the model's file and item, and the scenario's name (none for a model
/// elaborated on its own).
pub(super) type CacheKey = (SourceFile, u32, Option<Site>);

impl std::fmt::Debug for ElaborationCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ElaborationCache({} elaborations)", self.len())
    }
}

impl ElaborationCache {
    /// How many elaborations are kept at most (a workspace's scenarios and models).
    pub const CAPACITY: usize = 64;

    fn kept(&self) -> std::sync::MutexGuard<'_, Kept> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(super) fn get(&self, key: &CacheKey) -> Option<Arc<Previous>> {
        self.kept().elaborations.get(key).map(|(_, previous)| Arc::clone(previous))
    }

    pub(super) fn put(&self, key: CacheKey, previous: Previous) {
        let mut kept = self.kept();
        kept.made += 1;
        let made = kept.made;
        // Those replaced before are let go of now, those replaced now the next time.
        let late = std::mem::take(&mut kept.replaced);
        if let Some((_, replaced)) = kept.elaborations.insert(key, (made, Arc::new(previous))) {
            kept.replaced.push(replaced);
        }
        if kept.elaborations.len() > Self::CAPACITY {
            let oldest = kept.elaborations.iter().min_by_key(|(_, (made, _))| *made).map(|(key, _)| key.clone());
            if let Some((_, evicted)) = oldest.and_then(|oldest| kept.elaborations.remove(&oldest)) {
                kept.replaced.push(evicted);
            }
        }
        drop(kept);
        drop_later(late);
    }

    /// Drops the elaborations of the models of a removed file.
    pub fn forget(&self, file: SourceFile) {
        self.kept().elaborations.retain(|(model, _, _), _| *model != file);
    }

    /// How many elaborations are kept.
    pub fn len(&self) -> usize {
        self.kept().elaborations.len()
    }

    /// Whether none is kept.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The block calls of the elaborations kept (the last of each model and scenario): how
    /// many were run, copied from the elaboration before, or bound to a scenario's new sizes.
    pub fn counts(&self) -> CallCounts {
        self.kept().elaborations.values().fold(CallCounts::default(), |sum, (_, p)| CallCounts {
            ran: sum.ran + p.counts.ran,
            reused: sum.reused + p.counts.reused,
            bound: sum.bound + p.counts.bound,
        })
    }
}

/// How many block calls an elaboration ran, and how many it copied from the one before
/// (a call made inside a copied call counts as copied), or bound (when it is a model's
/// symbolic graph bound to a scenario's new sizes, every call).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CallCounts {
    /// Calls whose block body was run.
    pub ran: u32,
    /// Calls copied.
    pub reused: u32,
    /// Calls of the model's symbolic graph, bound to the scenario's sizes.
    pub bound: u32,
}

/// What one elaboration leaves for the next.
pub(super) struct Previous {
    /// Its graph (shared with the query's result).
    pub graph: Arc<Graph>,
    /// The request's arguments, dimensions, strictness and context: a call is reused only
    /// under the same ones.
    pub request: RequestKey,
    /// Its block calls, in the order they returned (a call after the calls it made).
    pub calls: Vec<Arc<CallRecord>>,
    /// Its calls by their chain (ending with the call's site) and occurrence.
    pub by_site: Arc<CallSites>,
    /// The calls of the model's body, by callee, in order.
    pub top_level: Arc<SiteMap<(SourceFile, u32), Vec<u32>>>,
    /// The items its calls read, and their indices. The next elaboration starts from these
    /// (indices kept), so that the records it copies hold there too: an item no call reads any
    /// more stays, checked and ignored, until an elaboration reuses nothing.
    pub items: Vec<UsedItem>,
    pub item_ids: SiteMap<(SourceFile, u32), u32>,
    /// The names it resolved (shared with the next elaboration when it resolved no other).
    pub resolutions: Arc<Resolutions>,
    /// How many calls it ran and copied.
    pub counts: CallCounts,
}

/// Block calls by their chain of call sites: for each chain, the record of each call made
/// with it, in order. Looked up by the chain being run (`&[Site]`), so that a call allocates
/// its chain only when the previous elaboration did not have it.
pub(super) type CallSites = SiteMap<Arc<[Site]>, Occurrences>;

/// The records of the calls made with one chain of call sites, in order (a `repeat` makes
/// several; most chains are called once, kept without allocating), [`NOT_RECORDED`] for a
/// call without a record.
#[derive(Debug, Clone)]
pub(super) struct Occurrences {
    first: u32,
    rest: Vec<u32>,
}

/// In [`Occurrences`], a call that was not recorded.
pub(super) const NOT_RECORDED: u32 = u32::MAX;

impl Occurrences {
    /// One call, not recorded yet.
    pub fn one() -> Self {
        Occurrences { first: NOT_RECORDED, rest: Vec::new() }
    }

    /// Adds a call, not recorded yet; returns its occurrence.
    pub fn push(&mut self) -> u32 {
        self.rest.push(NOT_RECORDED);
        self.rest.len() as u32
    }

    /// The record of call `occurrence`, if it has one.
    pub fn get(&self, occurrence: u32) -> Option<u32> {
        let at = if occurrence == 0 { Some(self.first) } else { self.rest.get(occurrence as usize - 1).copied() };
        at.filter(|&r| r != NOT_RECORDED)
    }

    /// Sets the record of call `occurrence` (adding calls up to it).
    pub fn set(&mut self, occurrence: u32, record: u32) {
        if occurrence == 0 {
            self.first = record;
            return;
        }
        let at = occurrence as usize - 1;
        if self.rest.len() <= at {
            self.rest.resize(at + 1, NOT_RECORDED);
        }
        self.rest[at] = record;
    }
}

/// The parts of a request that decide a block call's result besides its arguments.
#[derive(PartialEq)]
pub(super) struct RequestKey {
    pub args: BTreeMap<String, Value>,
    pub dims: BTreeMap<String, i128>,
    pub require_bound: bool,
    pub context: String,
    pub cache: Option<i128>,
    pub generating: bool,
    pub checkpointing: bool,
    pub training: bool,
    pub autocast: Option<crate::shapes::DType>,
}

impl RequestKey {
    /// Whether `other` is this request with other dimensions (a scenario's sizes edited).
    pub fn differs_in_dims_only(&self, other: &RequestKey) -> bool {
        self.dims != other.dims
            && self.args == other.args
            && self.require_bound == other.require_bound
            && self.context == other.context
            && self.cache == other.cache
            && self.generating == other.generating
            && self.checkpointing == other.checkpointing
            && self.training == other.training
            && self.autocast == other.autocast
    }
}

/// An item an elaboration read, kept alive so that an unchanged item is known by pointer.
#[derive(Clone)]
pub(super) struct UsedItem {
    pub file: SourceFile,
    pub index: u32,
    pub item: Arc<Item>,
}

/// What a name refers to: a definition's kind, file and item (`None`: nothing).
pub(super) type Target = Option<(DefKind, FileName, u32)>;

/// The names an elaboration resolved, by file, and to what.
pub(super) type Resolutions = SiteMap<SourceFile, SiteMap<Box<str>, Target>>;

/// Whether `name` refers in `scope` to `target`.
fn resolves_to(scope: &Scope, name: &str, target: &Target) -> bool {
    match (scope.get(name), target) {
        (Some(def), Some((kind, file, item))) => def.kind == *kind && def.item == *item && def.file == *file,
        (None, None) => true,
        _ => false,
    }
}

/// One block call of an elaboration: its key and what it made, as index ranges of the graph.
#[derive(Clone)]
pub(super) struct CallRecord {
    /// The chain of calls, ending with this call's site (as its nodes hold it).
    pub chain: Arc<[Site]>,
    /// How many calls with this chain ran before it (a `repeat`).
    pub occurrence: u32,
    /// The block: its file and item.
    pub callee: (SourceFile, u32),
    /// The outermost call it runs in (checkpoint segments).
    pub outer_call: u32,
    /// The `checkpoint(...)` call it runs in (0: none), and the count of those calls when it
    /// began and ended (its own markers are `start + 1..=end`).
    pub segment: u32,
    pub segments: (u32, u32),
    /// Whether it runs inside a `frozen(...)` call (its parameters are frozen).
    pub frozen: bool,
    /// Whether it runs inside an `fp32(...)` call (its parameters are float32).
    pub fp32: bool,
    /// Whether it runs inside a `no_autocast(...)` call.
    pub no_autocast: bool,
    /// The share of its parameters a token reads (inside `routed(...)` calls).
    pub active: ActiveShare,
    /// The block call inside an outermost one it runs in (0: none), and the count of those
    /// calls when it began and ended.
    pub inner_call: u32,
    pub inner_calls: (u32, u32),
    /// The bound arguments, names and values, in binding order.
    pub args: Vec<(Box<str>, Value)>,
    /// The tensors of the arguments, in order, and whether the caller held a reference to
    /// each (a tensor nobody else holds is released inside the call when the block drops it).
    pub inputs: Vec<(TensorId, bool)>,
    /// Its nodes, tensors, statement values and the arguments of the checkpointed calls it
    /// made: `start..end` of the graph's.
    pub nodes: (u32, u32),
    pub tensors: (u32, u32),
    pub stmt_values: (u32, u32),
    pub segment_args: (u32, u32),
    /// Input tensors released inside the call, with the number of nodes the call had made
    /// by then.
    pub input_releases: Vec<(TensorId, u32)>,
    /// The returned tensors' release points when the call returned (the caller may set
    /// them later, in the final graph).
    pub returned: Vec<(TensorId, Option<u32>)>,
    /// What it returned.
    pub result: Value,
    /// The items it read (indices into the elaboration's used items).
    pub items: Vec<u32>,
    /// The calls it made: `start..end` of the records (they come just before it).
    pub nested: (u32, u32),
}

/// The previous elaboration, checked against the database: usable only if every name it
/// resolved resolves the same way; then a call is reusable if none of its items changed.
pub(super) struct Reusable {
    pub previous: Arc<Previous>,
    /// Per item of the previous elaboration: changed since.
    pub changed: Vec<bool>,
}

impl Reusable {
    /// The previous elaboration of `key`, if it was made for the same request and its names
    /// resolve the same way now.
    pub fn check(db: &dyn Db, cache: &ElaborationCache, key: &CacheKey, request: &RequestKey) -> Option<Reusable> {
        let previous = cache.get(key)?;
        if previous.request != *request {
            return None;
        }
        for (&file, names) in previous.resolutions.iter() {
            let scope = file_scope(db, file);
            if !names.iter().all(|(name, target)| resolves_to(scope, name, target)) {
                return None;
            }
        }
        // An item is changed if its tree changed, or if its file is no longer the one of its
        // name (deleted, then made again: a new file, which the old one's trees say nothing of).
        let mut current: SiteMap<SourceFile, bool> = SiteMap::default();
        let changed = previous
            .items
            .iter()
            .map(|used| {
                let file_is_current =
                    *current.entry(used.file).or_insert_with(|| lookup_file(db, used.file.name(db)) == Some(used.file));
                match item_of(db, used.file, used.index) {
                    Some(now) => !file_is_current || *now != used.item,
                    None => true,
                }
            })
            .collect();
        Some(Reusable { previous, changed })
    }
}

/// The names an elaboration leaves resolved for the next: those resolved `before` it (checked
/// unchanged, since the calls it copied rely on them) and those it resolved itself.
pub(super) fn all_resolutions(before: Option<&Previous>, resolved: Resolutions) -> Arc<Resolutions> {
    match before {
        Some(before) if resolved.is_empty() => Arc::clone(&before.resolutions),
        Some(before) => {
            let mut all = (*before.resolutions).clone();
            for (file, names) in resolved {
                all.entry(file).or_default().extend(names);
            }
            Arc::new(all)
        }
        None => Arc::new(resolved),
    }
}

/// The calls of the model's body among `calls`, by callee, in order (see
/// [`Previous::top_level`]).
pub(super) fn top_level_calls(calls: &[Arc<CallRecord>]) -> SiteMap<(SourceFile, u32), Vec<u32>> {
    let mut top_level: SiteMap<(SourceFile, u32), Vec<u32>> = SiteMap::default();
    for (index, call) in calls.iter().enumerate() {
        if call.chain.len() == 1 {
            top_level.entry(call.callee).or_default().push(index as u32);
        }
    }
    top_level
}

/// `value` with its tensors renamed by `map`.
pub(super) fn remap(value: &Value, map: &impl Fn(TensorId) -> TensorId) -> Value {
    match value {
        Value::Tensor(t) => Value::Tensor(map(*t)),
        Value::Tensors(ts) => Value::Tensors(ts.iter().map(|t| map(*t)).collect()),
        other => other.clone(),
    }
}

/// Whether two argument values are the same but for their tensors' ids.
pub(super) fn same_but_tensors(old: &Value, new: &Value) -> bool {
    match (old, new) {
        (Value::Tensor(_), Value::Tensor(_)) => true,
        (Value::Tensors(a), Value::Tensors(b)) => a.len() == b.len(),
        (a, b) => a == b,
    }
}
