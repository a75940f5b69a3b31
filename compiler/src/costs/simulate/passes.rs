//! The passes of a training step after the parameter set-up: forward (with activation
//! checkpointing's segments), the recomputation of a checkpointed segment, backward (what
//! autograd frees as it goes) and the optimizer step.

use super::*;

/// What the forward pass leaves for backward: per node, the storages autograd holds.
pub(super) struct Forward {
    pub(super) saved: Vec<Vec<usize>>,
    pub(super) requires_grad: Vec<bool>,
    /// For each checkpoint segment, the storages of its inputs, held until its backward.
    pub(super) segment_inputs: HashMap<u32, Vec<usize>>,
    /// Autocast's cast cache: the half copies of the parameters the forward pass cast, held
    /// until the autocast region exits (the caller releases them there).
    pub(super) cast_cache: Vec<usize>,
    /// What the graph's autograd functions keep on their `ctx` ([`OpMemory::ctx_input`]),
    /// checkpointed or not: held until the graph is freed after backward (the caller
    /// releases them there).
    ///
    /// [`OpMemory::ctx_input`]: super::super::autograd::OpMemory::ctx_input
    pub(super) graph_held: Vec<usize>,
}

/// What autocast's cast cache is keyed by: the parameter cast. A weight tied to another
/// (`share="..."`) is one parameter, cast once, whichever node uses it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum CastKey<'g> {
    Shared(&'g str, &'static str),
    Own(usize, &'static str),
}

pub(super) fn run_forward(
    run: &Run<'_>,
    store: &mut Store,
    storage_of: &mut [Option<usize>],
    lines: &mut Lines<'_>,
    first_step: bool,
) -> Forward {
    let (graph, config) = (run.graph, run.config);
    let recording = config.mode.grad;
    let mut requires_grad = vec![false; graph.tensors.len()];
    let mut saved: Vec<Vec<usize>> = vec![Vec::new(); graph.nodes.len()];
    // Which line made each storage (by storage), and which storages autograd keeps: a line's
    // "activations" are the bytes it made that are kept for backward. Only the first step's
    // forward pass records them.
    let mut producer: Vec<Option<LineId>> = Vec::new();
    if first_step {
        for (value, &line) in graph.stmt_values.iter().zip(&lines.of_value) {
            for &t in value.tensors.iter().filter(|t| **t >= value.first_new) {
                if let Some(s) = storage_of[t.0 as usize] {
                    made_by(&mut producer, s, line, false);
                }
            }
        }
    }
    let mut kept: Vec<usize> = Vec::new();
    // The storages a line was charged for as made (so not again as kept).
    let mut charged_as_made: Vec<usize> = Vec::new();
    let mut segment_inputs: HashMap<u32, Vec<usize>> = HashMap::new();
    let mut recorded_segments: std::collections::HashSet<u32> = std::collections::HashSet::new();
    let mut cast_cache: HashMap<CastKey<'_>, usize> = HashMap::new();
    let mut graph_held: Vec<usize> = Vec::new();
    // A sliding-window layer's old keys, freed with its old values: `update` rebinds
    // `self.keys` and `self.values` after both concatenations.
    let mut old_window_keys: Option<usize> = None;
    for (i, node) in graph.nodes.iter().enumerate() {
        if i % CHECK_EVERY == 0 {
            (run.check)();
        }
        // A dead branch of the graph went with the last tensor that referred to it.
        if let Some(dead) = i.checked_sub(1).and_then(|before| run.dead_after.get(&before)) {
            for &d in dead {
                for s in std::mem::take(&mut saved[d]) {
                    store.release(s);
                }
            }
        }
        let behaviour = &run.behaviours[i];
        let (inputs, outputs) = (&node.inputs[..], &node.outputs[..]);
        let op = node.op.name();
        let site = &node.origin.stmt;
        store.at_node(i);
        let needs_grad = recording && run.records(i, &requires_grad);
        // Inside a checkpoint segment nothing is saved; the segment keeps its inputs, every
        // tensor it reads from outside and every argument of a marked call (held from its
        // first node): non-reentrant `checkpoint` keeps the call's arguments
        // for the recomputation (HF's layers: the rotary tables and positions too, bound in a
        // `partial`), whichever of its ops read them (measured: a checkpointed Llama keeps
        // its `[1, S]` positions and both rotary tables, tests/fixtures/calibration/memory_llm.json).
        let segment = run.segment[i];
        let records = needs_grad && segment == 0;
        if needs_grad && segment != 0 {
            recorded_segments.insert(segment);
        }
        if recording && segment != 0 {
            // Its first node: the call's arguments, read inside or not.
            let first = i == 0 || run.segment[i - 1] != segment;
            let args = if first { run.segment_args.get(&segment).map_or(&[][..], Vec::as_slice) } else { &[] };
            for &arg in args {
                if let Some(s) = storage_of[arg.0 as usize] {
                    let held = segment_inputs.entry(segment).or_default();
                    if !held.contains(&s) {
                        store.hold(s);
                        held.push(s);
                    }
                }
            }
            for &input in inputs {
                let outside = run.producer[input.0 as usize].is_none_or(|p| run.segment[p] != segment);
                if outside && let Some(s) = storage_of[input.0 as usize] {
                    let held = segment_inputs.entry(segment).or_default();
                    if !held.contains(&s) {
                        store.hold(s);
                        held.push(s);
                    }
                }
            }
        }
        let mut made: i128 = 0;
        let mut made_storages: Vec<usize> = Vec::new();
        // A `parameter` or `buffer` op's output is the module state's own storage, made before
        // the run; a parameter is trained (it requires grad while recording), a buffer is not.
        let state = match node.op {
            Op::Parameter => run.params.of_node[i].map(|(s, _)| (s, recording && run.trains(i))),
            Op::Buffer => run.params.buffer_of_node[i].map(|s| (s, false)),
            _ => None,
        };
        // A cache append: a paged cache's output is its blocks (written in place); a dynamic
        // cache's a new tensor that the cache holds to the end of the run, after which the old
        // one (`self.keys`, rebound) is freed.
        if let (Op::KvCache, Some(cache), Some(&out)) = (node.op, run.config.cache, outputs.first())
            && cached_tokens(&node.args).is_some()
        {
            let before = run.params.cache_of_node[i];
            // An empty sliding layer's first update makes its window tensor (no tensor of the
            // graph refers to it: nothing releases it), then appends.
            if before.is_none() && run.opens_sliding_layer[i] {
                store.alloc(SLIDING_WINDOW_TENSOR, Category::Activations);
            }
            let s = match (cache.kind, before) {
                (CacheKind::Paged, Some(blocks)) => blocks,
                _ => store.alloc(run.sizes[out.0 as usize], Category::KvCache),
            };
            store.hold(s);
            storage_of[out.0 as usize] = Some(s);
            requires_grad[out.0 as usize] = needs_grad;
            if first_step {
                let line = lines.line(lines.of_node[i]);
                line.kv_cache = line.kv_cache.saturating_add(store.bytes[s]);
            }
            store.check(op, Some(site));
            if cache.kind == CacheKind::Dynamic
                && let Some(old) = before
            {
                if cache_window(&node.args) > 0 {
                    match old_window_keys.take() {
                        // The values' append: both old storages go.
                        Some(keys) => {
                            store.release(keys);
                            store.release(old);
                        }
                        None => old_window_keys = Some(old),
                    }
                } else {
                    store.release(old);
                }
            }
            release_dropped(run, store, storage_of, i);
            continue;
        }
        if let (Some(&out), Some((s, trained))) = (outputs.first(), state) {
            store.hold(s);
            storage_of[out.0 as usize] = Some(s);
            requires_grad[out.0 as usize] = trained;
            store.check(op, Some(site));
            release_dropped(run, store, storage_of, i);
            continue;
        }
        for &out in outputs {
            let input = behaviour.alias.and_then(|k| inputs.get(k).copied());
            // A reshape whose input's strides allow no view is a copy.
            match input.and_then(|t| storage_of[t.0 as usize]) {
                Some(s) if !run.reshape_copies[i] => {
                    store.hold(s);
                    storage_of[out.0 as usize] = Some(s);
                }
                _ => {
                    let bytes = run.sizes[out.0 as usize];
                    let s = store.alloc(bytes, Category::Activations);
                    storage_of[out.0 as usize] = Some(s);
                    if first_step {
                        made_by(&mut producer, s, lines.of_node[i], true);
                    }
                    made = made.saturating_add(bytes);
                    made_storages.push(s);
                }
            }
            // Only float and complex tensors require grad: integer and bool ones never do
            // (topk's and sort's indices).
            requires_grad[out.0 as usize] = needs_grad && graph.tensor(out).dtype.is_differentiable();
        }
        // A leaf made to require grad is held by its `AccumulateGrad` node, which the graph keeps
        // until it is dropped after backward, whatever the program rebinds (measured: Granite's
        // embedding output under `enable_input_require_grads()`, rebound by its multiplier,
        // tests/fixtures/calibration's `granite_small`).
        if needs_grad
            && node.op == Op::RequiresGrad
            && let Some(s) = outputs.first().and_then(|t| storage_of[t.0 as usize])
        {
            store.hold(s);
            graph_held.push(s);
        }
        // A function that keeps its input on `ctx` keeps it inside a non-reentrant checkpoint
        // segment too; a reentrant segment's forward runs under `no_grad`, which records no
        // function (measured: LLM.int8 layers, tests/fixtures/calibration/measure_int8.py).
        if needs_grad
            && !(run.config.reentrant && segment != 0)
            && behaviour.ctx_input
            && let Some(s) = inputs.first().and_then(|t| storage_of[t.0 as usize])
        {
            store.hold(s);
            graph_held.push(s);
            if first_step {
                kept.push(s);
                if run.segment[i] != 0 && !store.kept_past_checkpoint.contains(&s) {
                    store.kept_past_checkpoint.push(s);
                }
            }
        }
        let mut extra_saved = Vec::new();
        // Copies the kernel made that autograd does not keep.
        let mut unkept = Vec::new();
        // The half copies of this op's weights that autograd saves (held for backward).
        let mut weight_copies = Vec::new();
        // The copies autocast makes of inputs, by input (half ones of float32 inputs for a half
        // op, float32 ones of half inputs for a float op): the op reads (and saves) the copy.
        let mut input_copies: Vec<(usize, usize)> = Vec::new();
        // Autocast runs a lower-precision op on half copies of its float32 arguments
        // (`cached_cast` in PyTorch's autocast_mode.cpp). A parameter's copy (a leaf that
        // requires grad, under `no_grad` too) goes to the cast cache and lives until the
        // autocast region exits: one copy per parameter, however many ops use it. The op
        // saves its weight's copy, not its bias's (derivatives.yaml: convolution and addmm
        // save the weight and the input). An activation's copy is made per op.
        if config.precision.mixed() && node.autocast() == Autocast::Half {
            let share = match node.args.values.get("share") {
                // `share` defaults to "": a weight of its own.
                Some(ArgValue::Str(key)) if !key.is_empty() => Some(key.as_str()),
                _ => None,
            };
            for weight in &node.result.weights {
                let key = match share {
                    Some(key) => CastKey::Shared(key, weight.name),
                    None => CastKey::Own(i, weight.name),
                };
                let copy = *cast_cache.entry(key).or_insert_with(|| {
                    let s = store.alloc(product(&[known(Some(weight.numel.clone())), 2]), Category::Activations);
                    if first_step {
                        made_by(&mut producer, s, lines.of_node[i], true);
                    }
                    s
                });
                // `linear` is addmm, whose generated code saves its weight (`mat2`) for the
                // input's gradient only: a first layer on the model's input keeps no copy
                // (measured: the calibration mlp under amp with accumulation,
                // tests/fixtures/calibration/memory_amp_accum.json).
                let for_the_input =
                    node.op != Op::Linear || inputs.first().is_some_and(|x| requires_grad[x.0 as usize]);
                if weight.name != "bias" && !weight.name.ends_with("_bias") && for_the_input {
                    weight_copies.push(copy);
                }
            }
            for (k, &input) in inputs.iter().enumerate() {
                if run.sizes[input.0 as usize] == product(&[4, known(graph.tensor(input).numel())])
                    && graph.tensor(input).dtype.is_float()
                {
                    let copy = store.alloc(product(&[known(graph.tensor(input).numel()), 2]), Category::Activations);
                    input_copies.push((k, copy));
                }
            }
        }
        // An op autocast runs in float32 reads float32 copies of its half inputs (its `fp32`
        // policy), made per op; it saves the copy where it saves the input (measured: `pow` in
        // Phi's `gelu_new` under autocast, tests/fixtures/calibration's `phi_small`).
        if config.precision.mixed() && node.autocast_casts_inputs() {
            for (k, &input) in inputs.iter().enumerate() {
                if matches!(run.dtypes[input.0 as usize], DType::F16 | DType::BF16) {
                    let copy = store.alloc(product(&[known(graph.tensor(input).numel()), 4]), Category::Activations);
                    input_copies.push((k, copy));
                }
            }
        }
        if records {
            for &s in &extra_saved {
                saved[i].push(s);
            }
            for &s in &weight_copies {
                store.hold(s);
                saved[i].push(s);
            }
            for s in behaviour.saved.as_slice() {
                // A copy of an input autocast cast is a copy of the half cast (matmul's
                // contiguous copy of a transposed float32 operand is a half one).
                let made_bytes =
                    |s: &Saved| match s.copied_input().and_then(|k| input_copies.iter().find(|(j, _)| *j == k)) {
                        Some(&(_, copy)) => Some(store.bytes[copy]),
                        None => s.made_bytes(inputs, &run.sizes),
                    };
                if !s.kept(inputs, &requires_grad, run.trains(i)) {
                    // A copy the kernel made that nothing keeps is freed when it returns.
                    if let Some(bytes) = made_bytes(s).filter(|_| s.made_when_unkept()) {
                        unkept.push(store.alloc(bytes, Category::Activations));
                    }
                    continue;
                }
                let storage = match s.unconditional() {
                    // Autograd saves the half copy the op ran on, not the float32 input.
                    Saved::Input(k) => match input_copies.iter().find(|(j, _)| *j == k) {
                        Some(&(_, copy)) => {
                            if !extra_saved.contains(&copy) {
                                extra_saved.push(copy);
                                saved[i].push(copy);
                            }
                            None
                        }
                        None => inputs.get(k).and_then(|t| storage_of[t.0 as usize]),
                    },
                    Saved::Output(k) => outputs.get(k).and_then(|t| storage_of[t.0 as usize]),
                    made => made_bytes(&made).map(|bytes| {
                        let s = store.alloc(bytes, Category::Activations);
                        extra_saved.push(s);
                        s
                    }),
                };
                if let Some(storage) = storage {
                    if !extra_saved.contains(&storage) {
                        store.hold(storage);
                    }
                    saved[i].push(storage);
                }
            }
        }
        // Tensors the kernel makes for backward even when nothing records it: freed at once.
        // So are the input copies that nothing saved.
        let mut scratch: Vec<usize> =
            input_copies.iter().map(|&(_, copy)| copy).filter(|copy| !extra_saved.contains(copy)).collect();
        scratch.append(&mut unkept);
        if !records {
            scratch.append(&mut extra_saved);
            if behaviour.extras_always_made {
                for s in behaviour.saved.as_slice().iter().filter(|s| s.made_when_unkept()) {
                    if let Some(bytes) = s.made_bytes(inputs, &run.sizes) {
                        scratch.push(store.alloc(bytes, Category::Activations));
                    }
                }
            }
        }
        let mut workspace = conv_workspace(node, graph, config.conv_algorithm);
        if config.cudnn_benchmark && first_step {
            workspace = workspace.max(benchmark_workspace(node, graph));
        }
        let input_sized = inputs.first().map_or(0, |x| run.sizes[x.0 as usize]);
        let transient = run
            .weight_transient(i, Pass::Forward)
            .saturating_add(if records { behaviour.scratch.recording } else { behaviour.scratch.not_recording })
            .saturating_add(input_sized.saturating_mul(i128::from(behaviour.forward_scratch)));
        let w = (workspace > 0).then(|| store.alloc(workspace, Category::Workspace));
        let t = (transient > 0).then(|| store.alloc(transient, Category::Activations));
        store.check(op, Some(site));
        for s in w.into_iter().chain(t).chain(scratch) {
            store.release(s);
        }
        if first_step {
            let line = lines.line(lines.of_node[i]);
            line.workspace = line.workspace.max(workspace);
            // Without autograd (`no_grad`), and in a checkpointed segment's first forward, a
            // line costs what it makes; a recording run's line outside a segment costs what
            // autograd keeps of it (counted once, below), also when its op records nothing
            // itself (a frozen or integer prefix whose output a later op saves).
            if !recording || segment != 0 {
                line.activations = line.activations.saturating_add(made);
                charged_as_made.append(&mut made_storages);
            }
            for &s in &extra_saved {
                made_by(&mut producer, s, lines.of_node[i], true);
            }
            kept.extend(saved[i].iter().copied());
            // What a GPTQ layer saves is its dequantized weight.
            if records && node.op == Op::LinearInt4 && run.segment[i] == 0 {
                store.dequantized_weights_kept.extend(extra_saved.iter().copied());
            }
        }
        release_dropped(run, store, storage_of, i);
    }
    if first_step {
        // Each kept storage once (several nodes may save one). A checkpointed segment that
        // recorded keeps its inputs for its recomputation, as autograd keeps a saved tensor.
        let checkpointed = segment_inputs
            .iter()
            .filter(|(segment, _)| recorded_segments.contains(*segment))
            .flat_map(|(_, held)| held.iter().copied());
        let mut counted = vec![false; store.bytes.len()];
        for s in charged_as_made {
            counted[s] = true;
        }
        for s in kept.into_iter().chain(checkpointed) {
            // An input is counted once, as what its `input` line makes (at its allocation).
            if !std::mem::replace(&mut counted[s], true)
                && store.category[s] != Category::Inputs
                && let Some(&Some(line)) = producer.get(s)
            {
                let line = lines.line(line);
                line.activations = line.activations.saturating_add(store.bytes[s]);
            }
        }
    }
    // A dead branch whose last reference went after the last node.
    for &d in graph.nodes.len().checked_sub(1).and_then(|last| run.dead_after.get(&last)).into_iter().flatten() {
        for s in std::mem::take(&mut saved[d]) {
            store.release(s);
        }
    }
    // A segment that recorded nothing (no input or parameter requires grad) saved no hook,
    // so nothing keeps its inputs after the forward pass.
    segment_inputs.retain(|segment, held| {
        let recorded = recorded_segments.contains(segment);
        if !recorded {
            for &s in held.iter() {
                store.release(s);
            }
        }
        recorded
    });
    Forward { saved, requires_grad, segment_inputs, cast_cache: cast_cache.into_values().collect(), graph_held }
}

/// Frees what the program drops after node `i` (the elaborator's release points).
fn release_dropped(run: &Run<'_>, store: &mut Store, storage_of: &[Option<usize>], i: usize) {
    for t in run.releases(i) {
        if let Some(s) = storage_of[t.0 as usize] {
            store.release(s);
        }
    }
}

/// Recomputes a checkpoint segment (`nodes`, in execution order) before its backward: its
/// nodes run again with autograd recording; what they save is held (in `forward.saved`) until
/// their backward. What the recomputation makes is made in backward, so it counts as
/// backward temporaries, as the calibration harness counts it. Returns what
/// the reentrant variant holds until the segment's backward has run (its recomputed outputs,
/// the `outputs` of `CheckpointFunction.backward`, and what its functions keep on `ctx`);
/// the non-reentrant one holds nothing past the recomputation.
pub(super) fn recompute(
    run: &Run<'_>,
    store: &mut Store,
    forward: &mut Forward,
    storage_of: &[Option<usize>],
    nodes: &[usize],
) -> Vec<usize> {
    let graph = run.graph;
    let mut recomputed: HashMap<TensorId, usize> = HashMap::new();
    let mut allocated: Vec<(TensorId, usize)> = Vec::new();
    // What the recomputation allocated, by the node after which the program drops it: looked
    // up per node rather than scanned (a segment can be a whole model of thousands of ops).
    let mut dropped_after: HashMap<usize, Vec<usize>> = HashMap::new();
    // What the recomputed functions keep on their `ctx`: the recomputation's graph, and so
    // they, go when it ends.
    let mut ctx_held: Vec<usize> = Vec::new();
    // Non-reentrant `checkpoint` stops the recomputation once it has saved what the forward
    // pass saved: at the last node that saves something, before its kernel when all it saves
    // are its inputs (autograd saves them before running it), after it otherwise. The rest of
    // the segment is not run again. The reentrant variant runs the whole function again.
    let reentrant = run.config.reentrant;
    let last = if reentrant {
        nodes.len().checked_sub(1)
    } else {
        nodes.iter().rposition(|&j| saves_for_backward(run, &forward.requires_grad, j).is_some())
    };
    let stops_before_kernel =
        !reentrant && last.is_some_and(|n| saves_for_backward(run, &forward.requires_grad, nodes[n]) == Some(true));
    // `nodes` is in execution order: whether a node is in the segment is a binary search.
    let inside = |node: u32| nodes.binary_search(&(node as usize)).is_ok();
    let storage =
        |t: TensorId, recomputed: &HashMap<TensorId, usize>| recomputed.get(&t).copied().or(storage_of[t.0 as usize]);
    for (n, &j) in nodes.iter().enumerate() {
        if last.is_none_or(|last| n > last) {
            break;
        }
        if n % CHECK_EVERY == CHECK_EVERY - 1 {
            (run.check)();
        }
        let node = &graph.nodes[j];
        store.at_node(j);
        let behaviour = &run.behaviours[j];
        let (inputs, outputs) = (&node.inputs[..], &node.outputs[..]);
        let runs_kernel = !(stops_before_kernel && Some(n) == last);
        let outputs = if runs_kernel { outputs } else { &[][..] };
        // A `parameter` or `buffer` op reads module state: the recomputation binds it to the
        // state's storage, as the forward pass does, and allocates nothing.
        let state = match node.op {
            Op::Parameter => run.params.of_node[j].map(|(s, _)| s),
            Op::Buffer => run.params.buffer_of_node[j],
            _ => None,
        };
        for &out in outputs {
            // A view or an in-place result holds its base's storage as long as the program
            // holds it, as in the forward pass: an in-place op's input can be dropped (`y`
            // rebound by `y = add(y, x, inplace=true)`) while its result lives on.
            // A reshape whose input's strides allow no view is a copy, as in the forward pass.
            let base = behaviour
                .alias
                .filter(|_| !run.reshape_copies[j])
                .and_then(|a| inputs.get(a))
                .and_then(|&t| storage(t, &recomputed));
            let s = match base.or(state) {
                Some(base) => {
                    store.hold(base);
                    base
                }
                None => store.alloc(run.sizes[out.0 as usize], Category::BackwardTemporaries),
            };
            recomputed.insert(out, s);
            allocated.push((out, s));
            if let Some(after) = graph.released_after[out.0 as usize].filter(|&r| r as usize >= j) {
                dropped_after.entry(after as usize).or_default().push(s);
            }
        }
        if behaviour.ctx_input
            && run.records(j, &forward.requires_grad)
            && let Some(s) = inputs.first().and_then(|&t| storage(t, &recomputed))
        {
            store.hold(s);
            ctx_held.push(s);
        }
        for saved in behaviour.saved.as_slice().iter().filter(|s| s.kept(inputs, &forward.requires_grad, run.trains(j)))
        {
            let s = match saved.unconditional() {
                Saved::Input(k) => inputs.get(k).and_then(|&t| storage(t, &recomputed)),
                Saved::Output(k) => outputs.get(k).and_then(|&t| storage(t, &recomputed)),
                made => {
                    if let Some(bytes) = made.made_bytes(inputs, &run.sizes) {
                        forward.saved[j].push(store.alloc(bytes, Category::BackwardTemporaries));
                    }
                    None
                }
            };
            if let Some(s) = s {
                store.hold(s);
                forward.saved[j].push(s);
            }
        }
        if !runs_kernel {
            break;
        }
        // What the kernel holds besides its results, as in the forward pass.
        let transient = run.weight_transient(j, Pass::Forward).saturating_add(behaviour.scratch.recording);
        let t = (transient > 0).then(|| store.alloc(transient, Category::BackwardTemporaries));
        store.check(&format!("{} (recompute)", node.op), Some(&node.origin.stmt));
        if let Some(t) = t {
            store.release(t);
        }
        // What the recomputation no longer needs is dropped as it goes.
        for s in dropped_after.remove(&j).unwrap_or_default() {
            store.release(s);
        }
    }
    // Results the forward pass already holds (the segment's outputs) are dropped at the end
    // (reentrant: once the segment's backward has run), and so is what the program would have
    // dropped after the nodes an early stop skipped.
    let mut held = Vec::new();
    for (t, s) in allocated {
        if !graph.released_after[t.0 as usize].is_some_and(inside) {
            held.push(s);
        }
    }
    for (_, dropped) in dropped_after.into_iter().filter(|&(after, _)| inside(after as u32)) {
        held.extend(dropped);
    }
    held.extend(ctx_held);
    if reentrant {
        return held;
    }
    for s in held {
        store.release(s);
    }
    Vec::new()
}

pub(super) fn run_backward(
    run: &Run<'_>,
    store: &mut Store,
    forward: &mut Forward,
    storage_of: &[Option<usize>],
    grads: &mut [Option<usize>],
    (loss_storages, loss, output): (&mut LossStorages, LossTensors, Option<TensorId>),
) {
    let (graph, config) = (run.graph, run.config);
    // Gradient storages of tensors, shared when a gradient passes through (views, add).
    // Gradient storage by tensor.
    let mut grad_of: Vec<Option<usize>> = vec![None; graph.tensors.len()];
    // The parameters whose gradient this pass made: a weight used twice (`share=`) gets two,
    // which the engine sums out of place in the accumulator's input buffer (`old + new`)
    // before `AccumulateGrad` stores the sum; a gradient from an earlier micro-batch is
    // added to in place.
    let mut made_here = vec![false; grads.len()];
    // How many ops train each weight: a weight's gradients wait in the input buffer
    // (temporaries) until the last of them arrives, and only their sum is `.grad`.
    let mut users_left = vec![0usize; grads.len()];
    for i in 0..graph.nodes.len() {
        if run.params.of_node[i].is_some() && run.trains(i) {
            users_left[run.params.index_of_node[i]] += 1;
        }
    }
    let mut root_grad = None;
    // The parameters whose half gradients wait for their autocast copy's cast (see below).
    let mut autocast_casts: Vec<(usize, Vec<(usize, i128)>)> = Vec::new();
    if let Some(o) = output {
        // dloss (a scalar), then the gradients of log_softmax and of the logits.
        let dloss = store.alloc(loss.scalar, Category::BackwardTemporaries);
        store.check("nll_loss backward", None);
        let dlog_probs = store.alloc(loss.log_probs, Category::BackwardTemporaries);
        store.check("nll_loss backward", None);
        // `torch.autograd.backward` holds the root gradient (`grad_tensors_`, the ones it
        // made) until the engine returns.
        root_grad = Some(dloss);
        // nll_loss's saved labels (the causal-LM loss's shifted copy) go with its node.
        if let Some(shifted) = loss_storages.shifted_labels.take() {
            store.release(shifted);
        }
        // log_softmax's backward reads its saved result while writing the logits' gradient
        // (of the float32 copy, under the causal-LM loss's upcast).
        let upcast = loss.upcast > 0;
        let dlogits = store.alloc(if upcast { loss.upcast } else { loss.logits }, Category::BackwardTemporaries);
        store.check("log_softmax backward", None);
        if let Some(log_probs) = loss_storages.log_probs.take() {
            store.release(log_probs);
        }
        store.release(dlog_probs);
        // `ToCopyBackward` casts the float32 gradient back to the logits' dtype.
        let dlogits = if upcast {
            let cast = store.alloc(loss.logits, Category::BackwardTemporaries);
            store.check("to backward (loss upcast)", None);
            store.release(dlogits);
            cast
        } else {
            dlogits
        };
        grad_of[o.0 as usize] = Some(dlogits);
    }
    let mut segment_nodes: BTreeMap<u32, Vec<usize>> = BTreeMap::new();
    for (i, &segment) in run.segment.iter().enumerate() {
        if segment != 0 {
            segment_nodes.entry(segment).or_default().push(i);
        }
    }
    let mut recomputed_segment = 0;
    // What a reentrant segment's backward holds until it has run (see [`recompute`]).
    let mut held_by_segment: Vec<usize> = Vec::new();
    // The peak's label, written into one buffer rather than allocated per node.
    let mut label = String::new();
    for (i, node) in graph.nodes.iter().enumerate().rev() {
        if i % CHECK_EVERY == 0 {
            (run.check)();
        }
        store.at_node(i);
        let behaviour = &run.behaviours[i];
        let (inputs, outputs) = (&node.inputs[..], &node.outputs[..]);
        let segment = run.segment[i];
        let has_grad = outputs.iter().any(|o| grad_of[o.0 as usize].is_some());
        // Non-reentrant `checkpoint` recomputes a segment when backward first unpacks one of
        // its saved tensors: ops before that (a residual `add`, a function that keeps what it
        // needs on `ctx`) run their backward first. The reentrant one recomputes it when the
        // gradient of its output reaches it (`CheckpointFunction.backward`).
        if segment != 0
            && segment != recomputed_segment
            && has_grad
            && (run.config.reentrant || saves_for_backward(run, &forward.requires_grad, i).is_some())
        {
            recomputed_segment = segment;
            held_by_segment = recompute(run, store, forward, storage_of, &segment_nodes[&segment]);
            store.at_node(i);
        }
        let mut weight_sums: Vec<(usize, i128, Option<usize>)> = Vec::new();
        // Gradients of inputs that already have one: each contribution is summed into a new
        // tensor once the op is done, as autograd's InputBuffer does (`old + new`).
        let mut contributions: Vec<(TensorId, usize)> = Vec::new();
        // Gradients computed at the output's size for a broadcast input, summed down after.
        let mut broadcast: Vec<TensorId> = Vec::new();
        if has_grad {
            let upstream = outputs.first().and_then(|o| grad_of[o.0 as usize]);
            label.clear();
            let _ = write!(label, "{} backward", node.op);
            // A backward of several nodes peaks before the last input gradient is made.
            if let Some(beyond) = behaviour.backward_staged.filter(|&b| b > 0) {
                let peak = store.alloc(beyond, Category::BackwardTemporaries);
                store.check(&label, Some(&node.origin.stmt));
                store.release(peak);
            }
            let mut fresh = Vec::new();
            for &input in behaviour.given_gradients(inputs) {
                if !forward.requires_grad[input.0 as usize] {
                    continue;
                }
                let existing = grad_of[input.0 as usize];
                let mut bytes = run.sizes[input.0 as usize];
                let full = outputs.first().map_or(0, |o| run.sizes[o.0 as usize]);
                if behaviour.grad == GradFlow::Broadcast && full > bytes {
                    bytes = full;
                    broadcast.push(input);
                }
                match (behaviour.grad, upstream, existing) {
                    (GradFlow::PassThrough, Some(g), None) => {
                        store.hold(g);
                        grad_of[input.0 as usize] = Some(g);
                    }
                    // The incoming gradient itself is the contribution.
                    (GradFlow::PassThrough, Some(g), Some(_)) => {
                        store.hold(g);
                        contributions.push((input, g));
                    }
                    (_, _, None) => {
                        let g = store.alloc(bytes, Category::BackwardTemporaries);
                        grad_of[input.0 as usize] = Some(g);
                    }
                    (_, _, Some(_)) => contributions.push((input, store.alloc(bytes, Category::BackwardTemporaries))),
                }
            }
            // A leaf made to require grad: `AccumulateGrad` stores what reaches it as its
            // `.grad` (stolen when nothing else holds it, else copied), which lives as long as
            // the tensor, held by the graph.
            if node.op == Op::RequiresGrad
                && let Some(g) = upstream
            {
                let grad = if store.holds[g] == 1 {
                    store.hold(g);
                    g
                } else {
                    store.alloc(store.bytes[g], Category::BackwardTemporaries)
                };
                forward.graph_held.push(grad);
            }
            if let Some((_, elements)) = run.params.of_node[i].filter(|_| run.trains(i)) {
                let index = run.params.index_of_node[i];
                let bytes = run.grad_bytes(elements, run.params.all[index].fp32);
                // A `parameter` op's output is the parameter itself: the gradient that reaches
                // it is what AccumulateGrad stores as `.grad`, stolen when nothing else holds
                // it (`use_count() <= 1`), else copied; one that reaches it again is added in
                // place. Measured: transformers' stacked experts, tests/fixtures/ops/measure_moe.py.
                let incoming = match (node.op, upstream) {
                    (Op::Parameter, Some(g)) if store.holds[g] == 1 && store.bytes[g] == bytes => Some(g),
                    _ => None,
                };
                // Under autocast the op multiplied half copies of its float32 parameters: its
                // backward makes their gradients in half (`grad_weight` of the copy), and each
                // copy's `ToCopyBackward` casts its gradient to float32 once the node is done
                // and has released what it saved (below), in every micro-batch. A parameter
                // with one user only: the gradients of a shared one are summed in the copy's
                // input buffer first.
                let cast_by_autocast = config.precision.mixed()
                    && node.autocast() == Autocast::Half
                    && users_left[index] == 1
                    && !made_here[index]
                    && bytes == product(&[elements, 4]);
                match (grads[index], incoming) {
                    (_, None) if cast_by_autocast => {
                        let halves = run.params.all[index]
                            .tensors
                            .iter()
                            .map(|&t| (store.alloc(product(&[t, 2]), Category::BackwardTemporaries), product(&[t, 4])))
                            .collect();
                        autocast_casts.push((index, halves));
                    }
                    (None, Some(g)) => {
                        if let Some(&o) = outputs.first() {
                            grad_of[o.0 as usize] = None;
                        }
                        store.recategorize(g, Category::Gradients);
                        grads[index] = Some(g);
                    }
                    (None, None) => {
                        let waits = users_left[index] > 1;
                        let category = if waits { Category::BackwardTemporaries } else { Category::Gradients };
                        grads[index] = Some(store.alloc(bytes, category));
                    }
                    // A second gradient in this pass: summed out of place once the op is done.
                    (Some(_), _) if made_here[index] => {
                        let contribution =
                            (node.op != Op::Parameter).then(|| store.alloc(bytes, Category::BackwardTemporaries));
                        weight_sums.push((index, bytes, contribution));
                    }
                    (Some(_), _) if node.op == Op::Parameter => {}
                    (Some(_), _) => fresh.push(store.alloc(bytes, Category::BackwardTemporaries)),
                }
                made_here[index] = true;
                users_left[index] = users_left[index].saturating_sub(1);
            }
            if let Some(&x) = inputs.first().filter(|x| forward.requires_grad[x.0 as usize]) {
                for _ in 0..behaviour.backward_scratch {
                    fresh.push(store.alloc(run.sizes[x.0 as usize], Category::BackwardTemporaries));
                }
            }
            // Held while any input's gradient is made (`minimum`'s masks for either operand,
            // one operand's after the other's).
            if behaviour.backward_scratch_bytes > 0
                && behaviour.differentiable(inputs).iter().any(|x| forward.requires_grad[x.0 as usize])
            {
                fresh.push(store.alloc(behaviour.backward_scratch_bytes, Category::BackwardTemporaries));
            }
            let workspace = conv_workspace(node, graph, config.conv_algorithm);
            let transient = run.weight_transient(i, Pass::Backward);
            fresh.extend((workspace > 0).then(|| store.alloc(workspace, Category::Workspace)));
            fresh.extend((transient > 0).then(|| store.alloc(transient, Category::BackwardTemporaries)));
            if behaviour.backward_staged.is_none() {
                store.check(&label, Some(&node.origin.stmt));
            }
            for s in fresh {
                store.release(s);
            }
        }
        // `validate_outputs` sums each full-size gradient to its input's size, one at a time.
        for input in broadcast {
            let reduced = store.alloc(run.sizes[input.0 as usize], Category::BackwardTemporaries);
            store.check("sum_to_size (broadcast gradient)", Some(&node.origin.stmt));
            let slot = match contributions.iter_mut().find(|(t, _)| *t == input) {
                Some((_, g)) => Some(g),
                None => grad_of[input.0 as usize].as_mut(),
            };
            // The full-size gradient was made above, so a slot holds it.
            if let Some(slot) = slot {
                store.release(std::mem::replace(slot, reduced));
            }
        }
        // The node is done: its outputs' gradients and its saved tensors are released, after
        // the engine has checked (and reduced) what it returned (measured:
        // tests/fixtures/ops/measure_einsum.py, `outer`, whose peak is the first reduction).
        for o in outputs {
            if let Some(g) = grad_of[o.0 as usize].take() {
                store.release(g);
            }
        }
        for &s in &forward.saved[i] {
            store.release(s);
        }
        forward.saved[i].clear();
        // Each half gradient of an autocast copy is cast to float32 (`ToCopyBackward`, the
        // weight's before the bias's), and `AccumulateGrad` stores the result as `.grad`
        // (measured: VGG-16's first classifier layer under amp at batch 32,
        // tests/fixtures/calibration/memory_precision.json, whose peak is the weight's
        // `_to_copy` with the bias's half gradient still live).
        for (index, halves) in autocast_casts.drain(..) {
            let mut casts = Vec::new();
            for &(half, bytes) in &halves {
                casts.push(store.alloc(bytes, Category::BackwardTemporaries));
                store.check("_to_copy (autocast cast backward)", Some(&node.origin.stmt));
                store.release(half);
            }
            // One storage for the parameter's gradient, as netc keeps its parameters; a later
            // micro-batch's is added into the `.grad` it has, in place (measured:
            // tests/fixtures/calibration/memory_amp_accum.json, whose peaks are these casts).
            let total = casts.iter().fold(0i128, |sum, &c| sum.saturating_add(store.bytes[c]));
            for c in casts {
                store.release(c);
            }
            if grads[index].is_none() {
                grads[index] = Some(store.alloc(total, Category::Gradients));
            }
        }
        // The engine then adds what the op returned for a tied weight into the accumulator's
        // input buffer, out of place.
        // The sum is a temporary of the engine's until `AccumulateGrad` takes the last one as
        // `.grad` (measured: a tied head and embedding, Qwen3 in memory_llm_families.json,
        // whose peak is this `add`: the three `[vocab, d]` tensors are none of them `.grad`).
        for (index, bytes, contribution) in weight_sums.drain(..) {
            let sum = store.alloc(bytes, Category::BackwardTemporaries);
            store.check("add (gradient accumulation)", Some(&node.origin.stmt));
            if let Some(old) = grads[index].replace(sum) {
                store.release(old);
            }
            if let Some(c) = contribution {
                store.release(c);
            }
            if users_left[index] == 0 {
                store.recategorize(sum, Category::Gradients);
            }
        }
        // Then each second contribution is summed with the gradient so far, into a new tensor
        // (PyTorch's `InputBuffer::add` runs `old + new` out of place; measured: the peak of a
        // LoRA layer without dropout, tests/fixtures/ops/measure_lora.py, is this `add`).
        for (input, contribution) in contributions {
            let sum = store.alloc(run.sizes[input.0 as usize], Category::BackwardTemporaries);
            store.check("add (gradient accumulation)", Some(&node.origin.stmt));
            if let Some(old) = grad_of[input.0 as usize].replace(sum) {
                store.release(old);
            }
            store.release(contribution);
        }
        // The segment's backward is done: its inputs, and what a reentrant one held, are no
        // longer held for it.
        if segment != 0 && segment_nodes[&segment].first() == Some(&i) {
            for s in
                forward.segment_inputs.remove(&segment).unwrap_or_default().into_iter().chain(held_by_segment.drain(..))
            {
                store.release(s);
            }
        }
    }
    // A weight some of whose users got no gradient: what did arrive is `.grad`.
    for (g, _) in grads.iter().zip(&made_here).filter(|(_, made)| **made) {
        if let Some(g) = *g {
            store.recategorize(g, Category::Gradients);
        }
    }
    for g in grad_of.into_iter().flatten().chain(root_grad) {
        store.release(g);
    }
}

/// What node `i`, run with inputs that require grad as `requires_grad` says, saves for its
/// backward: `None` for nothing; `Some(true)` when all of it is saved before its kernel runs
/// (its inputs, and the parameters a layer multiplies by, which it saves for its input's
/// gradient, frozen or not), `Some(false)` when the kernel's results are among it. A bitsandbytes
/// layer keeps its weight on `ctx` and saves nothing.
fn saves_for_backward(run: &Run<'_>, requires_grad: &[bool], i: usize) -> Option<bool> {
    let node = &run.graph.nodes[i];
    let behaviour = &run.behaviours[i];
    if !run.records(i, requires_grad) {
        return None;
    }
    let mut kept = behaviour.saved.as_slice().iter().filter(|s| s.kept(&node.inputs, requires_grad, run.trains(i)));
    match kept.next() {
        None if !node.result.weights.is_empty() && !behaviour.weights_on_ctx => Some(true),
        None => None,
        Some(first) => Some(std::iter::once(first).chain(kept).all(|s| matches!(s.unconditional(), Saved::Input(_)))),
    }
}

pub(super) fn run_step(run: &Run<'_>, store: &mut Store, state_made: &mut bool) {
    let config = run.config;
    let optimizer = config.optimizer;
    let label = match optimizer {
        Optimizer::Sgd => "sgd",
        Optimizer::Momentum => "sgd (momentum)",
        Optimizer::Adam => "adam",
        Optimizer::AdamW => "adamw",
        Optimizer::Adagrad => "adagrad",
        Optimizer::RmsProp => "rmsprop",
        Optimizer::Adafactor => "adafactor",
        Optimizer::Adam8bit => "adam8bit",
        Optimizer::PagedAdam8bit => "paged_adam8bit",
        Optimizer::PagedAdam32bit => "paged_adam32bit",
    };
    store.current_line = LineId::MAX;
    // State is created lazily, at the first step.
    if !*state_made {
        for (&elements, fp32) in
            run.params.all.iter().filter(|p| p.trained).flat_map(|p| p.tensors.iter().zip(std::iter::repeat(p.fp32)))
        {
            store.paged_optimizer_state = store.paged_optimizer_state.saturating_add(run.paged_state_bytes(elements));
            let state = run.state_bytes(elements, fp32);
            if state > 0 {
                store.alloc(state, Category::OptimizerState);
                store.check(label, None);
            }
            if matches!(optimizer, Optimizer::Adam | Optimizer::AdamW) {
                // `state["step"]`: a float32 scalar tensor per parameter tensor.
                store.alloc(4, Category::OptimizerState);
            }
        }
        // 8-bit Adam's quantization maps, copied to the device at the first step (`.to(p.device)`).
        if run.eight_bit_maps() && run.on_cuda() {
            store.alloc(super::EIGHT_BIT_MAPS, Category::OptimizerState);
            store.check(label, None);
        }
        *state_made = true;
    }
    // Temporaries of the update, each the size of a (sharded) gradient, with the gradient's
    // element size.
    let sizes: Vec<(i128, i128)> = run
        .params
        .all
        .iter()
        .filter(|p| p.trained)
        .flat_map(|p| p.tensors.iter().map(move |&e| (run.grad_bytes(e, p.fp32), run.state_element(p.fp32))))
        .collect();
    let per_param_temporaries = match optimizer {
        Optimizer::Sgd | Optimizer::Momentum => 0,
        // denom = (exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(eps): two at once.
        Optimizer::Adam | Optimizer::AdamW => 2,
        Optimizer::Adagrad | Optimizer::RmsProp | Optimizer::Adafactor => 1,
        // bitsandbytes updates in one fused kernel (`optimizer_update_8bit_blockwise`, and on
        // CUDA `optimizer_update_32bit`).
        Optimizer::Adam8bit | Optimizer::PagedAdam8bit => 0,
        Optimizer::PagedAdam32bit if run.on_cuda() => 0,
        // On the CPU bitsandbytes' 32-bit update is eager torch (backends/cpu/ops.py,
        // `_optimizer_update_32bit_cpu`): `g.float() * gnorm_scale`, `state2.sqrt() + eps`
        // and `state1 / ...` live at once, float32, and go when it returns.
        Optimizer::PagedAdam32bit => {
            for &(bytes, element) in &sizes {
                let float32 = bytes / element.max(1) * 4;
                let temps: Vec<usize> = (0..3).map(|_| store.alloc(float32, Category::OptimizerTemporaries)).collect();
                store.check(label, None);
                for t in temps {
                    store.release(t);
                }
            }
            0
        }
    };
    if per_param_temporaries == 0 {
        store.check(label, None);
        return;
    }
    if config.foreach {
        // One list-wide temporary (`_foreach_sqrt` of every state tensor) per dtype: the
        // foreach path groups the tensors by device and dtype
        // (`_group_tensors_by_device_and_dtype`) and updates one group after the other.
        let mut groups: Vec<(i128, i128)> = Vec::new();
        for &(bytes, element) in &sizes {
            match groups.iter_mut().find(|(e, _)| *e == element) {
                Some((_, total)) => *total += bytes,
                None => groups.push((element, bytes)),
            }
        }
        if groups.is_empty() {
            store.check(label, None);
        }
        // The group's temporary is a local of the loop over groups (`exp_avg_sq_sqrt` in
        // `_multi_tensor_adamw`), rebound when the next group's is made: two groups' are live
        // then, as Python names are (measured: DeepSeek-V3's float32 router weights beside its
        // bf16 parameters, tests/fixtures/calibration's `deepseek_v3_small`).
        let mut previous: Option<usize> = None;
        for (_, total) in groups {
            let t = store.alloc(total, Category::OptimizerTemporaries);
            store.check(label, None);
            if let Some(p) = previous.replace(t) {
                store.release(p);
            }
        }
        if let Some(p) = previous {
            store.release(p);
        }
    } else {
        // torch.optim's for-loop implementations (`_single_tensor_adam`, ...) keep the last
        // temporary in a local (`denom`, `std`, `avg`) that the next parameter's rebinds: it
        // lives until that one is made, as a Python name does. Measured: the peak of the for-loop
        // Adam is at a parameter's `div` with the previous parameter's `denom` still live
        // (tests/fixtures/ops/measure_lora.py; the calibration's mlp at batch 1).
        let keeps_local =
            matches!(optimizer, Optimizer::Adam | Optimizer::AdamW | Optimizer::Adagrad | Optimizer::RmsProp);
        let mut previous: Option<usize> = None;
        for &(bytes, _) in &sizes {
            let temps: Vec<usize> =
                (0..per_param_temporaries).map(|_| store.alloc(bytes, Category::OptimizerTemporaries)).collect();
            store.check(label, None);
            let (&kept, transient) = temps.split_last().expect("one temporary or more");
            for &t in transient {
                store.release(t);
            }
            if !keeps_local {
                store.release(kept);
            } else if let Some(p) = previous.replace(kept) {
                store.release(p);
            }
        }
        if let Some(p) = previous {
            store.release(p);
        }
    }
}
