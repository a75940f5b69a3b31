//! Reuse at run time: a block call that the previous elaboration ran with the same callee,
//! arguments and items is copied from the previous graph (spliced) instead of run again. The
//! records and the cache are in `reuse`.

use super::*;

impl<'db> Elaborator<'db, '_> {
    /// Starts a block call whose site was just pushed on the chain: the chain as its nodes
    /// will hold it (the previous elaboration's, when it had one), how many calls with this
    /// chain ran before, and the previous elaboration's record of the call with the same
    /// chain and occurrence, if any.
    pub(super) fn begin_call(&mut self) -> (Arc<[Site]>, u32, Option<u32>) {
        let before = self.previous.as_ref().and_then(|r| r.previous.by_site.get_key_value(self.chain.as_slice()));
        let (chain, occurrence) = match self.calls_at.get_key_value(self.chain.as_slice()) {
            Some((chain, _)) => {
                let chain = Arc::clone(chain);
                let occurrence = self.calls_at.get_mut(&*chain).map_or(0, Occurrences::push);
                (chain, occurrence)
            }
            None => {
                let chain = before.map_or_else(|| self.chain.as_slice().into(), |(chain, _)| Arc::clone(chain));
                self.calls_at.insert(Arc::clone(&chain), Occurrences::one());
                (chain, 0)
            }
        };
        let record = before.and_then(|(_, calls)| calls.get(occurrence));
        self.shared_chain = Some(Arc::clone(&chain));
        (chain, occurrence, record)
    }

    /// Records that call record `index` is the call of `chain` at `occurrence`.
    pub(super) fn call_at(&mut self, chain: &Arc<[Site]>, occurrence: u32, index: u32) {
        match self.calls_at.get_mut(&**chain) {
            Some(calls) => calls.set(occurrence, index),
            None => {
                let mut calls = Occurrences::one();
                calls.set(occurrence, index);
                self.calls_at.insert(Arc::clone(chain), calls);
            }
        }
    }

    /// The previous elaboration's record of the call of the model's body that called
    /// `callee` as many times before as this one.
    pub(super) fn moved_call(&self, callee: (SourceFile, u32)) -> Option<u32> {
        let before = self.top_calls.get(&callee).copied().unwrap_or(0);
        let previous = &self.previous.as_ref()?.previous;
        previous.top_level.get(&callee)?.get(before as usize).copied()
    }

    /// The result of a block call copied from the previous elaboration, if record `at` of it
    /// made the same call (same callee, argument types and holding, unchanged items) at the
    /// same site, or (`moved`) elsewhere in the model's body: then its nodes are given this
    /// call's site and checkpoint segment.
    pub(super) fn reuse(
        &mut self,
        at: Option<(u32, bool)>,
        occurrence: u32,
        callee: (SourceFile, u32),
        bound: &Bound<'db>,
        inputs: &[(TensorId, bool)],
    ) -> Option<Value> {
        let (at, moved) = at?;
        let reusable = self.previous.as_ref()?;
        let previous = Arc::clone(&reusable.previous);
        let record = &previous.calls[at as usize];
        let same = record.callee == callee
            && (moved || record.outer_call == self.outer_call)
            // Its checkpoint segments are renumbered, but whether it runs inside a marked call
            // (and so whether its own markers open segments) must not change.
            && (record.segment == 0) == (self.segment == 0)
            && record.frozen == self.frozen
            && record.fp32 == self.fp32
            && record.no_autocast == self.no_autocast
            && record.active == self.active
            && record.args.len() == bound.len()
            && record.inputs.len() == inputs.len()
            && record.items.iter().all(|&used| !reusable.changed[used as usize])
            && record
                .args
                .iter()
                .zip(bound)
                .all(|((name, old), (new_name, new, _))| **name == **new_name && same_but_tensors(old, new))
            && record.inputs.iter().zip(inputs).enumerate().all(|(i, (&(old, old_held), &(new, new_held)))| {
                // The same types, held the same way; a tensor given twice, given twice.
                old_held == new_held
                    && previous.graph.tensors[old.0 as usize] == self.graph.tensors[new.0 as usize]
                    && record.inputs[..i].iter().zip(inputs).all(|(&(a, _), &(b, _))| (a == old) == (b == new))
            })
            && self.graph.nodes.len() + (record.nodes.1 - record.nodes.0) as usize <= MAX_NODES;
        if !same {
            return None;
        }
        Some(self.splice(&previous, at, inputs, moved.then_some(occurrence)))
    }

    /// Copies call `at` of the previous elaboration (and the calls it made) into the graph,
    /// its tensors renamed: its own after the graph's, its arguments to `inputs`.
    pub(super) fn splice(
        &mut self,
        previous: &Previous,
        at: u32,
        inputs: &[(TensorId, bool)],
        moved_to: Option<u32>,
    ) -> Value {
        let moved = moved_to.is_some();
        let (old, record) = (&previous.graph, &previous.calls[at as usize]);
        // Whether the copied call read how the run goes is not recorded per call: the
        // previous graph's answer holds for it (at worst a scenario elaborates in full).
        self.graph.reads_the_run |= old.reads_the_run;
        // A moved call's chains start with this call's site instead of the old one (each
        // distinct chain made once), and its nodes are in this call's checkpoint segment.
        /// A chain of the previous elaboration and the same chain from this call's site.
        type Rechained = (Arc<[Site]>, Arc<[Site]>);
        let mut chains: Vec<Rechained> = Vec::new();
        let here = self.shared_chain();
        let outer_call = self.outer_call;
        // Its checkpoint segments and inner calls, when others came before it or it runs in
        // another: the one it runs in becomes this call's, its own follow those made so far.
        let segments = Renumbering::new((record.segment, record.segments), (self.segment, self.segments));
        let inner_calls =
            Renumbering::new((record.inner_call, record.inner_calls), (self.inner_call, self.inner_calls));
        let renumbered = segments.changes() || inner_calls.changes();
        self.segments += record.segments.1 - record.segments.0;
        self.inner_calls += record.inner_calls.1 - record.inner_calls.0;
        let mut rechain = |chain: &Arc<[Site]>| -> Arc<[Site]> {
            // A call's nodes share a handful of chains (one per call inside it): found by pointer.
            if let Some((_, new)) = chains.iter().find(|(old, _)| Arc::ptr_eq(old, chain)) {
                return Arc::clone(new);
            }
            let new: Arc<[Site]> = here.iter().chain(chain.iter().skip(here.len())).cloned().collect();
            chains.push((Arc::clone(chain), Arc::clone(&new)));
            new
        };
        let mut reorigin = |origin: &Arc<Origin>| -> Arc<Origin> {
            if !moved && !renumbered {
                return Arc::clone(origin);
            }
            Arc::new(Origin {
                expr: origin.expr.clone(),
                stmt: origin.stmt.clone(),
                chain: if moved { rechain(&origin.chain) } else { Arc::clone(&origin.chain) },
                outer_call: if moved { outer_call } else { origin.outer_call },
                segment: segments.of(origin.segment),
                inner_call: inner_calls.of(origin.inner_call),
                frozen: origin.frozen,
                fp32: origin.fp32,
                no_autocast: origin.no_autocast,
                active: origin.active,
            })
        };
        let (n0, t0, s0) =
            (self.graph.nodes.len() as u32, self.graph.tensors.len() as u32, self.graph.stmt_values.len() as u32);
        let (old_n0, old_t0, old_s0) = (record.nodes.0, record.tensors.0, record.stmt_values.0);
        let (a0, old_a0) = (self.graph.segment_args.len() as u32, record.segment_args.0);
        let node = |n: u32| n - old_n0 + n0;
        let tensor = |t: TensorId| {
            if t.0 >= old_t0 {
                TensorId(t.0 - old_t0 + t0)
            } else {
                // An argument (a block sees only its arguments).
                record.inputs.iter().zip(inputs).find(|((given, _), _)| *given == t).map_or(t, |(_, (new, _))| *new)
            }
        };
        let (tensors, nodes, values) = (
            old_t0 as usize..record.tensors.1 as usize,
            old_n0 as usize..record.nodes.1 as usize,
            old_s0 as usize..record.stmt_values.1 as usize,
        );
        self.graph.tensors.extend_from_slice(&old.tensors[tensors.clone()]);
        self.graph.released_after.extend(old.released_after[tensors.clone()].iter().map(|r| r.map(node)));
        self.refs.resize(self.graph.tensors.len(), 0);
        for &(t, released) in &record.returned {
            self.graph.released_after[tensor(t).0 as usize] = released.map(node);
        }
        // When the call's tensors keep their ids (an edit before it made as many tensors as
        // before, and it was given the same ones), its id lists are shared, not copied.
        let same_ids = old_t0 == t0 && record.inputs.iter().zip(inputs).all(|((old, _), (new, _))| old == new);
        let renamed = |ids: &Arc<[TensorId]>| -> Arc<[TensorId]> {
            if same_ids { Arc::clone(ids) } else { ids.iter().map(|&t| tensor(t)).collect() }
        };
        for n in &old.nodes[nodes] {
            // At the same ids and site, the very node.
            if same_ids && !moved && !renumbered {
                self.graph.nodes.push(Arc::clone(n));
                continue;
            }
            // Made field by field: a clone would count references to the ids and origin it
            // replaces.
            self.graph.nodes.push(Arc::new(Node {
                op: n.op,
                args: Arc::clone(&n.args),
                inputs: renamed(&n.inputs),
                outputs: renamed(&n.outputs),
                result: Arc::clone(&n.result),
                params: n.params.clone(),
                origin: reorigin(&n.origin),
            }));
        }
        for v in &old.stmt_values[values] {
            self.graph.stmt_values.push(StmtValue {
                tensors: renamed(&v.tensors),
                origin: reorigin(&v.origin),
                first_new: TensorId(v.first_new.0 - old_t0 + t0),
            });
        }
        for a in &old.segment_args[old_a0 as usize..record.segment_args.1 as usize] {
            let copy = SegmentArg { segment: segments.of(a.segment), tensor: tensor(a.tensor) };
            self.graph.segment_args.push(copy);
        }
        for &(t, made) in &record.input_releases {
            self.graph.released_after[tensor(t).0 as usize] = Some((n0 + made).saturating_sub(1));
        }
        // The call's records and those of the calls it made, for the next elaboration: the
        // same ones when nothing moved.
        let base = self.calls.len() as u32;
        let unmoved = !moved
            && !renumbered
            && same_ids
            && n0 == old_n0
            && s0 == old_s0
            && a0 == old_a0
            && base == record.nested.0;
        let nested = &previous.calls[record.nested.0 as usize..record.nested.1 as usize];
        for q in nested.iter().chain(std::iter::once(record)) {
            let chain = if moved { rechain(&q.chain) } else { Arc::clone(&q.chain) };
            // A moved call is the how-manieth call of its new site (the calls in it keep theirs).
            let occurrence = match moved_to {
                Some(occurrence) if std::ptr::eq(q.as_ref(), record.as_ref()) => occurrence,
                _ => q.occurrence,
            };
            self.call_at(&chain, occurrence, self.calls.len() as u32);
            self.counts.reused += 1;
            if unmoved {
                self.calls.push(Arc::clone(q));
                continue;
            }
            let copy = CallRecord {
                chain,
                occurrence,
                callee: q.callee,
                outer_call: if moved { outer_call } else { q.outer_call },
                segment: segments.of(q.segment),
                frozen: q.frozen,
                fp32: q.fp32,
                no_autocast: q.no_autocast,
                active: q.active,
                segments: segments.span(q.segments),
                inner_call: inner_calls.of(q.inner_call),
                inner_calls: inner_calls.span(q.inner_calls),
                args: q.args.iter().map(|(name, value)| (name.clone(), remap(value, &tensor))).collect(),
                inputs: q.inputs.iter().map(|&(t, held)| (tensor(t), held)).collect(),
                nodes: (node(q.nodes.0), node(q.nodes.1)),
                tensors: (q.tensors.0 - old_t0 + t0, q.tensors.1 - old_t0 + t0),
                stmt_values: (q.stmt_values.0 - old_s0 + s0, q.stmt_values.1 - old_s0 + s0),
                segment_args: (q.segment_args.0 - old_a0 + a0, q.segment_args.1 - old_a0 + a0),
                input_releases: q.input_releases.iter().map(|&(t, made)| (tensor(t), made)).collect(),
                returned: q.returned.iter().map(|&(t, released)| (tensor(t), released.map(node))).collect(),
                result: remap(&q.result, &tensor),
                items: q.items.clone(),
                nested: (q.nested.0 - record.nested.0 + base, q.nested.1 - record.nested.0 + base),
            };
            self.calls.push(Arc::new(copy));
        }
        for &used in &record.items {
            self.touch(used);
        }
        remap(&record.result, &tensor)
    }
}

/// How a copied call's numbered executions (checkpoint segments, inner calls) are numbered
/// in this elaboration: the one it ran in (numbered at most its count when it began) becomes
/// the one this call runs in, and its own follow those made so far.
struct Renumbering {
    /// The number it ran in and the count when it began, before and now.
    before: (u32, u32),
    now: (u32, u32),
}

impl Renumbering {
    fn new((current, (start, _)): (u32, (u32, u32)), now: (u32, u32)) -> Renumbering {
        Renumbering { before: (current, start), now }
    }

    /// Whether any number changes.
    fn changes(&self) -> bool {
        self.before != self.now
    }

    fn of(&self, old: u32) -> u32 {
        match old {
            0 => 0,
            old if old <= self.before.1 => self.now.0,
            old => old - self.before.1 + self.now.1,
        }
    }

    /// A nested record's counts when it began and ended.
    fn span(&self, (start, end): (u32, u32)) -> (u32, u32) {
        (start - self.before.1 + self.now.1, end - self.before.1 + self.now.1)
    }
}
