//! Calls: what a called name refers to (block, op or model, through the file's scope), binding
//! arguments to parameters, and running a block call in a frame of its own.

use super::*;

impl<'db> Elaborator<'db, '_> {
    /// What `callee` refers to in the file of `ctx`, resolved once per elaboration.
    pub(super) fn callee(&mut self, callee: &'db str, ctx: &Ctx<'db>) -> Callee<'db> {
        if let Some(&resolved) = self.callees.get(&(ctx.file, callee)) {
            return resolved;
        }
        let resolved = self.resolve(callee, ctx.file);
        self.callees.insert((ctx.file, callee), resolved);
        resolved
    }

    pub(super) fn resolve(&mut self, callee: &str, file: SourceFile) -> Callee<'db> {
        let db = self.db;
        let scope: &'db Scope = self.scopes.entry(file).or_insert_with(|| file_scope(db, file));
        let def = scope.get(callee);
        let known = self.previous.as_ref().and_then(|r| r.previous.resolutions.get(&file)?.get(callee));
        if known.is_none() {
            let target = def.map(|d| (d.kind, d.file.clone(), d.item));
            self.resolutions.entry(file).or_default().insert(callee.into(), target);
        }
        let Some(def) = def else { return Callee::Other };
        let source = match self.sources.iter().find(|(name, _)| **name == def.file) {
            Some(&(_, source)) => source,
            None => {
                let source = lookup_file(db, &def.file);
                self.sources.push((&def.file, source));
                source
            }
        };
        let Some(source) = source else { return Callee::Other };
        // The item's field, not its `item_tree` query: the same dependency, without an
        // interned key and a memo to check per callee.
        let Some(arc) = item_of(db, source, def.item) else { return Callee::Other };
        let used = self.use_item(UsedItem { file: source, index: def.item, item: Arc::clone(arc) });
        match (def.kind, &**arc) {
            (DefKind::Op, Item::Op(decl)) => {
                self.param_names.push(decl.params.iter().map(|p| Arc::from(p.name.text.as_str())).collect());
                Callee::Op { decl, source, file: &def.file, item: def.item, names: self.param_names.len() - 1, used }
            }
            (DefKind::Block, Item::Block(block)) => {
                Callee::Block { block, source, file: &def.file, item: def.item, used }
            }
            _ => Callee::Other,
        }
    }

    /// The index of an item among those this elaboration read, added the first time (an
    /// item the previous elaboration read keeps its index, and now its current tree).
    pub(super) fn use_item(&mut self, used: UsedItem) -> u32 {
        match self.item_ids.get(&(used.file, used.index)) {
            Some(&id) => {
                self.items[id as usize] = used;
                id
            }
            None => {
                self.item_ids.insert((used.file, used.index), self.items.len() as u32);
                self.items.push(used);
                self.items.len() as u32 - 1
            }
        }
    }

    /// Notes that the innermost block call being run read an item.
    pub(super) fn touch(&mut self, used: u32) {
        if let Some(open) = self.open.last_mut()
            && !open.record.items.contains(&used)
        {
            open.record.items.push(used);
        }
    }

    /// A call of a built-in function: `min` or `max` of numbers or of a list of integers,
    /// `len` of a list.
    fn builtin_call(
        &mut self,
        builtin: Builtin,
        args: &'db [Arg],
        env: &Env<'db>,
        ctx: &Ctx<'db>,
    ) -> Result<Value, Stop> {
        if builtin.marks_a_call() {
            let Some(arg) = args.first() else { return Ok(Value::Unknown) };
            // `frozen(call, when=lora_r > 0)`: the mark applies where the condition holds, as
            // `if lora_r > 0 { frozen(call) } else { call }` would.
            let when = args.iter().find(|a| a.keyword.as_ref().is_some_and(|k| k.text == "when"));
            let applies = match when.filter(|_| builtin.takes_a_condition()) {
                None => true,
                Some(when) => match self.eval_in(&when.value, env, ctx)? {
                    Value::Bool(b) => b,
                    _ => {
                        self.undecided += 1;
                        false
                    }
                },
            };
            let mut marks = std::mem::take(&mut self.pending);
            match builtin {
                _ if !applies => {}
                Builtin::Frozen => marks.frozen = true,
                Builtin::Fp32 => marks.fp32 = true,
                Builtin::NoAutocast => marks.no_autocast = true,
                Builtin::Routed => {
                    if let Some((k, of)) = self.routed_share(args, env, ctx)? {
                        marks.routed = marks.routed.within(k, of).unwrap_or(marks.routed);
                    }
                }
                _ => marks.checkpoint = true,
            }
            if let ExprKind::Repeat { .. } = arg.value.kind {
                // A `repeat` is marked whole: one segment, as `checkpoint(nn.Sequential(...),
                // x)`, every layer's parameters frozen.
                let outer = self.enter(marks);
                let value = self.eval_in(&arg.value, env, ctx);
                self.leave(outer);
                return value;
            }
            // The marked call takes the marks once its arguments are evaluated: they are the
            // segment's inputs, as `checkpoint(layer, norm(x))` evaluates `norm(x)` first, and
            // `norm`'s parameters are not the layer's.
            self.pending = marks;
            let value = self.eval_in(&arg.value, env, ctx);
            self.pending = Marks::default();
            return value;
        }
        if builtin == Builtin::PastSeenTokens {
            return Ok(Value::Int(Dim::Known(self.request.cache.unwrap_or(0))));
        }
        if builtin == Builtin::Generating {
            return Ok(Value::Bool(self.request.generating));
        }
        if builtin == Builtin::Checkpointing {
            self.graph.reads_the_run = true;
            return Ok(Value::Bool(self.request.checkpointing));
        }
        if builtin == Builtin::Training {
            self.graph.reads_the_run = true;
            return Ok(Value::Bool(self.request.training));
        }
        if builtin == Builtin::AutocastDtype {
            self.graph.reads_the_run = true;
            let dtype = self.request.autocast.filter(|_| !self.no_autocast);
            return Ok(Value::Str(dtype.map_or("", |d| d.name()).into()));
        }
        if builtin == Builtin::Ceil {
            let Some(arg) = args.first() else { return Ok(Value::Unknown) };
            return Ok(match self.eval_in(&arg.value, env, ctx)? {
                value @ Value::Int(_) => value,
                value => match number(&value) {
                    Some(x) if x.is_finite() => Value::Int(Dim::Known(x.ceil() as i128)),
                    // A float of symbolic sizes: known once a scenario binds them.
                    _ => {
                        self.undecided += 1;
                        Value::Unknown
                    }
                },
            });
        }
        if builtin == Builtin::Listed {
            let [item, items] = args else { return Ok(Value::Unknown) };
            let (item, items) = (self.eval_in(&item.value, env, ctx)?, self.eval_in(&items.value, env, ctx)?);
            return Ok(match (item, items) {
                (Value::Str(item), Value::Str(items)) => Value::Bool(items.split(',').any(|t| t.trim() == item)),
                _ => Value::Unknown,
            });
        }
        if builtin == Builtin::Len {
            let Some(arg) = args.first() else { return Ok(Value::Unknown) };
            return Ok(match self.eval_in(&arg.value, env, ctx)? {
                Value::Ints(list) => Value::Int(Dim::Known(list.len() as i128)),
                Value::Tensors(list) => Value::Int(Dim::Known(list.len() as i128)),
                _ => Value::Unknown,
            });
        }
        let mut values = Vec::new();
        for arg in args {
            match self.eval_in(&arg.value, env, ctx)? {
                Value::Ints(list) if args.len() == 1 => values.extend(list.into_iter().map(Value::Int)),
                other => values.push(other),
            }
        }
        // The value kept keeps its own kind, as in Python: `min(2, 2.5)` is the integer 2.
        let mut best: Option<(Value, f64)> = None;
        for value in values {
            // `number` knows no symbolic dimension: they have no order until a scenario binds them.
            let Some(x) = number(&value) else {
                self.undecided += 1;
                return Ok(Value::Unknown);
            };
            best = match best {
                Some((b, y)) if builtin.keeps_first(y.total_cmp(&x)) => Some((b, y)),
                _ => Some((value, x)),
            };
        }
        let Some((best, _)) = best else {
            let site = self.site(ctx.name, ctx.item, args.first().map_or(ctx.stmt.get(), |a| a.id));
            self.error_at(Code::InvalidShape, &site, format!("`{}` of an empty list", builtin.name()));
            return Ok(Value::Unknown);
        };
        Ok(best)
    }

    /// The `k` and `of` of `routed(call, k, of)`: known integers with `1 <= k <= of` (an
    /// error otherwise, and no share; the checker has reported a missing or non-integer one).
    fn routed_share(&mut self, args: &'db [Arg], env: &Env<'db>, ctx: &Ctx<'db>) -> Result<Option<(u32, u32)>, Stop> {
        let [_, k, of] = args else { return Ok(None) };
        let (k_value, of_value) = (self.eval_in(&k.value, env, ctx)?, self.eval_in(&of.value, env, ctx)?);
        let (Value::Int(Dim::Known(k_count)), Value::Int(Dim::Known(of_count))) = (k_value, of_value) else {
            return Ok(None);
        };
        match (u32::try_from(k_count), u32::try_from(of_count)) {
            (Ok(k), Ok(of)) if k >= 1 && k <= of => Ok(Some((k, of))),
            _ => {
                let site = self.site(ctx.name, ctx.item, k.value.id);
                let message = format!(
                    "`routed` needs 1 <= k <= of (a token runs k of the of alternatives), found k {k_count} and of {of_count}"
                );
                self.error_at(Code::InvalidShape, &site, message);
                Ok(None)
            }
        }
    }

    /// Enters a call with `marks`: a checkpoint segment begins, unless one is open (a mark
    /// inside a marked call is part of its segment), and the parameters it creates are frozen
    /// or float32. Returns what [`Elaborator::leave`] restores when the call returns.
    fn enter(&mut self, marks: Marks) -> (u32, bool, bool, bool, ActiveShare) {
        let outer = (self.segment, self.frozen, self.fp32, self.no_autocast, self.active);
        if marks.checkpoint && self.segment == 0 {
            self.segments += 1;
            self.segment = self.segments;
        }
        self.frozen |= marks.frozen;
        self.fp32 |= marks.fp32;
        self.no_autocast |= marks.no_autocast;
        // Shares of realistic sizes cannot overflow; one that would keeps the outer share.
        self.active = self.active.within(marks.routed.k, marks.routed.of).unwrap_or(self.active);
        outer
    }

    fn leave(&mut self, (segment, frozen, fp32, no_autocast, active): (u32, bool, bool, bool, ActiveShare)) {
        (self.segment, self.frozen, self.fp32, self.no_autocast, self.active) =
            (segment, frozen, fp32, no_autocast, active);
    }

    /// A call; `first`, if given, replaces the value of the first argument (for `repeat`).
    pub(super) fn call_with(
        &mut self,
        id: NodeId,
        callee: &'db str,
        args: &'db [Arg],
        env: &Env<'db>,
        ctx: &Ctx<'db>,
        first: Option<Value>,
    ) -> Result<Value, Stop> {
        // Taken before the arguments are evaluated: a call among them is not the marked one.
        let marks = std::mem::take(&mut self.pending);
        let resolved = self.callee(callee, ctx);
        if let Callee::Other = resolved
            && let Some(builtin) = Builtin::from_name(callee)
            && self.scopes.get(&ctx.file).is_some_and(|scope| scope.get(callee).is_none())
        {
            // A mark inside a mark (`checkpoint(frozen(layer(x)))`) hands both to the call.
            if builtin.marks_a_call() {
                self.pending = marks;
            }
            return self.builtin_call(builtin, args, env, ctx);
        }
        match resolved {
            Callee::Op { decl, source, file, item, names, used } => {
                self.touch(used);
                let bound = self.bind(&decl.params, args, env, ctx, (source, file, item), first)?;
                let Some(bound) = bound else { return Ok(Value::Unknown) };
                let outer = self.enter(marks);
                let value = self.op_call(decl, names, bound, id, ctx);
                self.leave(outer);
                value
            }
            Callee::Block { block, source, file, item, used } => {
                self.touch(used);
                if self.chain.len() >= MAX_CALL_DEPTH {
                    let message =
                        format!("block calls nested deeper than {MAX_CALL_DEPTH}: does `{callee}` call itself?");
                    return Err(self.stop_at_limit(ctx, id, message));
                }
                let bound = self.bind(&block.params, args, env, ctx, (source, file, item), first)?;
                let Some(bound) = bound else { return Ok(Value::Unknown) };
                let outer_marks = self.enter(marks);
                // The argument tensors, and whether the caller holds each.
                let inputs: Vec<(TensorId, bool)> = bound
                    .iter()
                    .flat_map(|(_, value, _)| value_tensors(value))
                    .map(|&t| (t, self.refs[t.0 as usize] > 0))
                    .collect();
                // A call that opens a checkpoint segment: the segment keeps its arguments.
                if self.segment != outer_marks.0 {
                    let segment = self.segment;
                    let args = inputs.iter().map(|&(tensor, _)| SegmentArg { segment, tensor });
                    self.graph.segment_args.extend(args);
                }
                if self.chain.is_empty() {
                    self.outer_calls += 1;
                    self.outer_call = self.outer_calls;
                } else if self.chain.len() == 1 {
                    self.inner_calls += 1;
                    self.inner_call = self.inner_calls;
                }
                self.chain.push(self.site(ctx.name, ctx.item, id));
                let (chain, occurrence, same_site) = self.begin_call();
                // A call of the model's body is also found by its callee and how many calls
                // of it came before, so that a line added above it (which renumbers the call
                // sites after it) does not make it run again.
                let callee_at = |at: u32| self.previous.as_ref().map(|r| r.previous.calls[at as usize].callee);
                let before = match same_site {
                    Some(at) if callee_at(at) == Some((source, item)) => Some((at, false)),
                    _ if self.chain.len() == 1 => self.moved_call((source, item)).map(|at| (at, true)),
                    _ => None,
                };
                if self.chain.len() == 1 {
                    *self.top_calls.entry((source, item)).or_insert(0) += 1;
                }
                let result = match self.reuse(before, occurrence, (source, item), &bound, &inputs) {
                    Some(value) => Ok(value),
                    None => {
                        let record = CallRecord {
                            chain,
                            occurrence,
                            callee: (source, item),
                            outer_call: self.outer_call,
                            segment: self.segment,
                            segments: (self.segments, 0),
                            frozen: self.frozen,
                            fp32: self.fp32,
                            no_autocast: self.no_autocast,
                            active: self.active,
                            inner_call: self.inner_call,
                            inner_calls: (self.inner_calls, 0),
                            args: bound.iter().map(|(name, value, _)| (Box::from(*name), value.clone())).collect(),
                            inputs,
                            nodes: (self.graph.nodes.len() as u32, 0),
                            tensors: (self.graph.tensors.len() as u32, 0),
                            stmt_values: (self.graph.stmt_values.len() as u32, 0),
                            segment_args: (self.graph.segment_args.len() as u32, 0),
                            input_releases: Vec::new(),
                            returned: Vec::new(),
                            result: Value::Unknown,
                            items: vec![used],
                            nested: (self.calls.len() as u32, 0),
                        };
                        let callee_ctx = Ctx { file: source, name: file, item, stmt: Default::default() };
                        self.run_block(block, bound, record, &callee_ctx)
                    }
                };
                self.chain.pop();
                self.shared_chain = None;
                if self.chain.is_empty() {
                    self.outer_call = 0;
                }
                if self.chain.len() <= 1 {
                    self.inner_call = 0;
                }
                self.leave(outer_marks);
                result
            }
            Callee::Other => Ok(Value::Unknown),
        }
    }

    /// Runs a block's body on its bound arguments, recording the call for the next
    /// elaboration.
    pub(super) fn run_block(
        &mut self,
        block: &'db Callable,
        bound: Bound<'db>,
        record: CallRecord,
        ctx: &Ctx<'db>,
    ) -> Result<Value, Stop> {
        self.counts.ran += 1;
        let diagnostics = self.graph.diagnostics.len();
        self.open.push(OpenCall { record, diagnostics, share_uses: self.share_uses, undecided: self.undecided });
        let mut inner = Env::new();
        for (name, value, _) in bound {
            self.assign(&mut inner, name, value);
        }
        let result = self.body(&block.body, &mut inner, ctx, false);
        if let Ok(result) = &result {
            // Dropping the frame releases the arguments nobody else holds: part of the call.
            self.drop_frame(inner, result.as_deref().unwrap_or(&[]));
        }
        let open = self.open.pop().expect("pushed above");
        let result = result?;
        let value = match result {
            Some(mut values) if values.len() == 1 => values.remove(0),
            // A value unknown after an earlier error (or a symbolic branch) makes the whole
            // result unknown, which an assignment to several names accepts quietly.
            Some(values) if values.iter().any(|v| matches!(v, Value::Unknown)) => Value::Unknown,
            Some(values) => Value::Tensors(
                values.into_iter().filter_map(|v| if let Value::Tensor(t) = v { Some(t) } else { None }).collect(),
            ),
            None => Value::Unknown,
        };
        self.close(open, &value);
        Ok(value)
    }

    /// Records a block call that returned `value`, unless its effects reach outside it
    /// (diagnostics, weights tied by key); the caller read what it read.
    pub(super) fn close(&mut self, open: OpenCall, value: &Value) {
        let mut record = open.record;
        for &used in &record.items {
            self.touch(used);
        }
        if self.graph.diagnostics.len() != open.diagnostics
            || self.share_uses != open.share_uses
            || self.undecided != open.undecided
        {
            return;
        }
        record.nodes.1 = self.graph.nodes.len() as u32;
        record.tensors.1 = self.graph.tensors.len() as u32;
        record.stmt_values.1 = self.graph.stmt_values.len() as u32;
        record.segment_args.1 = self.graph.segment_args.len() as u32;
        record.returned = value_tensors(value)
            .iter()
            .filter(|t| t.0 >= record.tensors.0)
            .map(|&t| (t, self.graph.released_after[t.0 as usize]))
            .collect();
        record.result = value.clone();
        record.nested.1 = self.calls.len() as u32;
        record.segments.1 = self.segments;
        record.inner_calls.1 = self.inner_calls;
        self.call_at(&Arc::clone(&record.chain), record.occurrence, self.calls.len() as u32);
        self.calls.push(Arc::new(record));
    }

    /// Binds call arguments to parameters, evaluating defaults. Returns each parameter's
    /// name, value and the node of the argument that gave it (for labels), or `None` if an
    /// argument is unknown. A name bound twice keeps its last value, in its first place.
    pub(super) fn bind(
        &mut self,
        params: &'db [Param],
        args: &'db [Arg],
        env: &Env<'db>,
        ctx: &Ctx<'db>,
        (def_source, def_file, def_item): (SourceFile, &'db FileName, u32),
        mut first: Option<Value>,
    ) -> Result<Option<Bound<'db>>, Stop> {
        let mut bound: Bound<'db> = Vec::with_capacity(params.len().max(args.len()));
        for (position, arg) in args.iter().enumerate() {
            let name = match &arg.keyword {
                Some(k) => k.text.as_str(),
                None => match params.get(position) {
                    Some(p) => p.name.text.as_str(),
                    None => return Ok(None),
                },
            };
            let value = match first.take() {
                Some(value) => value,
                None => self.eval_in(&arg.value, env, ctx)?,
            };
            match bound.iter_mut().find(|(n, _, _)| *n == name) {
                Some(slot) => *slot = (name, value, Some(arg.value.id)),
                None => bound.push((name, value, Some(arg.value.id))),
            }
        }
        for p in params {
            if bound.iter().any(|(n, _, _)| *n == p.name.text) {
                continue;
            }
            let Some(default) = &p.default else { return Ok(None) };
            let default_ctx = Ctx { file: def_source, name: def_file, item: def_item, stmt: Default::default() };
            let value = self.eval_in(default, &Env::new(), &default_ctx)?;
            bound.push((&p.name.text, value, None));
        }
        Ok(Some(bound))
    }
}
