//! Evaluation: a model's inputs and body, statement by statement, and expressions (names,
//! literals, arithmetic on integers, dimensions and tensors), as Python would run them: a
//! name holds its value until rebound or its frame returns.

use super::*;

impl<'db> Elaborator<'db, '_> {
    pub(super) fn model(&mut self, model: &'db Callable) -> Result<(), Stop> {
        let file = self.request.file;
        let ctx = Ctx { file, name: file.name(self.db), item: self.request.item, stmt: Default::default() };
        let mut env = Env::new();
        for p in &model.params {
            let value = match self.request.args.get(p.name.text.as_str()) {
                Some(v) => v.clone(),
                None => match &p.default {
                    Some(d) => self.eval_in(d, &Env::new(), &ctx)?,
                    None => Value::Unknown,
                },
            };
            self.assign(&mut env, &p.name.text, value);
        }
        let outputs = self.body(&model.body, &mut env, &ctx, true)?;
        self.drop_frame(env, outputs.as_deref().unwrap_or(&[]));
        // The model's inputs and outputs are held by the caller for the whole run.
        for (_, t) in &self.graph.inputs {
            self.graph.released_after[t.0 as usize] = None;
        }
        if let Some(outputs) = &outputs {
            for &t in tensors_of(outputs).iter() {
                self.graph.released_after[t.0 as usize] = None;
            }
        }
        if let Some(outputs) = outputs {
            for v in outputs {
                match v {
                    Value::Tensor(t) => self.graph.outputs.push(t),
                    Value::Tensors(ts) => self.graph.outputs.extend(ts),
                    Value::Unknown => self.undecided += 1,
                    _ => {}
                }
            }
        }
        Ok(())
    }

    /// Runs a body; returns the returned values if it returned.
    pub(super) fn body(
        &mut self,
        body: &'db Body,
        env: &mut Env<'db>,
        ctx: &Ctx<'db>,
        is_model: bool,
    ) -> Result<Option<Vec<Value>>, Stop> {
        for stmt in &body.stmts {
            let stmt_site = self.site(ctx.name, ctx.item, stmt.id);
            let stmt_start = self.graph.tensors.len() as u32;
            match &stmt.kind {
                StmtKind::Input { name, ty } => {
                    if !is_model {
                        continue;
                    }
                    let value = self.input(name.text.as_str(), ty, env, ctx)?;
                    if let Value::Tensor(t) = value {
                        self.graph.inputs.push((name.text.to_string(), t));
                        if let TypeExpr::Tensor { dims, .. } = ty
                            && dims.iter().any(|d| mentions(d, "N"))
                        {
                            self.graph.batched_inputs.push(t);
                        }
                        self.record(stmt_site, stmt_start, Arc::from([t]));
                    }
                    self.assign(env, &name.text, value);
                }
                StmtKind::Assign { targets, values: exprs } if exprs.len() > 1 => {
                    // Python's tuple: every value is made before any name is rebound.
                    let mut values = Vec::with_capacity(exprs.len());
                    for value in exprs {
                        values.push(self.eval_stmt_expr(value, env, ctx, stmt.id, 1)?);
                    }
                    if values.len() != targets.len() {
                        values = vec![Value::Unknown; targets.len()];
                    }
                    self.bind_targets(env, targets, values, stmt_site, stmt_start);
                }
                StmtKind::Assign { targets, values: exprs } => {
                    let value = &exprs[0];
                    let v = self.eval_stmt_expr(value, env, ctx, stmt.id, targets.len())?;
                    let values = match (targets.len(), v) {
                        (1, v) => vec![v],
                        (n, Value::Tensors(ts)) if ts.len() == n => ts.into_iter().map(Value::Tensor).collect(),
                        (n, Value::Ints(ds)) if ds.len() == n => ds.into_iter().map(Value::Int).collect(),
                        (n, list @ (Value::Tensors(_) | Value::Ints(_))) => {
                            // A variadic op (split) or a list: the checks know the rest.
                            let count = match &list {
                                Value::Ints(ds) => ds.len(),
                                _ => value_tensors(&list).len(),
                            };
                            let message = match &value.kind {
                                ExprKind::Call { .. } => {
                                    format!("this call returns {count} tensors, but {n} names are assigned")
                                }
                                _ => format!("this list has {count} items, but {n} names are assigned"),
                            };
                            let site = self.site(ctx.name, ctx.item, value.id);
                            self.error_at(Code::OutputCount, &site, message);
                            vec![Value::Unknown; n]
                        }
                        (n, _) => vec![Value::Unknown; n],
                    };
                    self.bind_targets(env, targets, values, stmt_site, stmt_start);
                }
                StmtKind::Return { values } => {
                    let mut out = Vec::new();
                    for v in values {
                        out.push(self.eval_stmt_expr(v, env, ctx, stmt.id, 1)?);
                    }
                    let tensors = tensors_of(&out);
                    if !tensors.is_empty() {
                        self.record(stmt_site, stmt_start, tensors);
                    }
                    return Ok(Some(out));
                }
                StmtKind::If { cond, then_body, else_body } => {
                    let c = self.eval_stmt_expr(cond, env, ctx, stmt.id, 1)?;
                    let branch = match c {
                        Value::Bool(true) => Some(then_body),
                        Value::Bool(false) => else_body.as_ref(),
                        _ => {
                            // Undecidable (symbolic) or already wrong: skip both branches.
                            self.undecided += 1;
                            None
                        }
                    };
                    if let Some(b) = branch
                        && let Some(ret) = self.body(b, env, ctx, is_model)?
                    {
                        return Ok(Some(ret));
                    }
                }
                StmtKind::For { var, iter, body } => {
                    let Some(values) = self.loop_values(iter, env, ctx, stmt.id)? else { continue };
                    // The loop holds what it runs over until it ends, as Python's iterator
                    // holds its list: `for t in split(x, 4)` keeps the parts alive.
                    let held = Value::Tensors(values.iter().flat_map(value_tensors).copied().collect());
                    self.hold(&held);
                    let new: Arc<[TensorId]> =
                        value_tensors(&held).iter().copied().filter(|t| t.0 >= stmt_start).collect();
                    if !new.is_empty() {
                        self.record(stmt_site, stmt_start, new);
                    }
                    for value in values {
                        // The previous value of a rebound name is released here, as a Python
                        // loop (and nn.Sequential) releases it.
                        self.assign(env, &var.text, value);
                        if let Some(ret) = self.body(body, env, ctx, is_model)? {
                            return Ok(Some(ret));
                        }
                    }
                    self.drop_refs(&held, &[]);
                }
            }
        }
        Ok(None)
    }

    /// The values a `for` loop binds its variable to, in order; `None` when they cannot be
    /// known (an unbound dimension, a value already in error).
    fn loop_values(
        &mut self,
        iter: &'db ForIter,
        env: &Env<'db>,
        ctx: &Ctx<'db>,
        stmt: NodeId,
    ) -> Result<Option<Vec<Value>>, Stop> {
        let values = match iter {
            ForIter::Range { start, end } => {
                let a = self.eval_stmt_expr(start, env, ctx, stmt, 1)?;
                let b = self.eval_stmt_expr(end, env, ctx, stmt, 1)?;
                let (a, b) = match (a, b) {
                    (Value::Int(Dim::Known(a)), Value::Int(Dim::Known(b))) => (a, b),
                    (Value::Int(_), Value::Int(_)) => {
                        if self.request.require_bound {
                            let site = self.site(ctx.name, ctx.item, end.id);
                            self.error_at(Code::InvalidShape, &site, "the range depends on an unbound dimension");
                        }
                        self.undecided += 1;
                        return Ok(None);
                    }
                    _ => {
                        self.undecided += 1;
                        return Ok(None);
                    }
                };
                let count = b.saturating_sub(a).max(0);
                // Checked before a value is made: `for i in 0..1000000000` must not build a
                // list of a billion integers.
                if count > MAX_NODES as i128 {
                    let message = format!("the loop would run {count} times; a model may have at most {MAX_NODES} ops");
                    return Err(self.stop_at_limit(ctx, end.id, message));
                }
                (a..b).map(|i| Value::Int(Dim::Known(i))).collect()
            }
            ForIter::Each(list) => match self.eval_stmt_expr(list, env, ctx, stmt, 1)? {
                Value::Ints(v) => v.into_iter().map(Value::Int).collect(),
                Value::Tensors(v) => v.into_iter().map(Value::Tensor).collect(),
                _ => {
                    self.undecided += 1;
                    return Ok(None);
                }
            },
        };
        Ok(Some(values))
    }

    /// Binds an assignment's names, left to right, to its values, and records the tensors the
    /// statement made.
    fn bind_targets(
        &mut self,
        env: &mut Env<'db>,
        targets: &'db [crate::syntax::Name],
        values: Vec<Value>,
        stmt_site: Site,
        stmt_start: u32,
    ) {
        let tensors = tensors_of(&values);
        if !tensors.is_empty() {
            self.record(stmt_site, stmt_start, tensors);
        }
        for (target, v) in targets.iter().zip(values) {
            self.assign(env, &target.text, v);
        }
    }

    /// Records what a statement produced; `start` is the tensor count when it began.
    pub(super) fn record(&mut self, stmt: Site, start: u32, tensors: Arc<[TensorId]>) {
        let origin = self.origin(stmt.clone(), stmt);
        self.graph.stmt_values.push(StmtValue { origin, tensors, first_new: TensorId(start) });
    }

    pub(super) fn input(
        &mut self,
        name: &str,
        ty: &'db TypeExpr,
        env: &mut Env<'db>,
        ctx: &Ctx<'db>,
    ) -> Result<Value, Stop> {
        let TypeExpr::Tensor { dtype, dims, .. } = ty else { return Ok(Value::Unknown) };
        let Some(dtype) = DType::from_name(&dtype.text) else { return Ok(Value::Unknown) };
        let mut shape = Vec::new();
        for dim in dims {
            let v = match &dim.kind {
                ExprKind::Name(n) if !env.contains_key(n.text.as_str()) => {
                    let value = match self.request.dims.get(n.text.as_str()) {
                        Some(v) => Dim::Known(*v),
                        None if self.request.require_bound => {
                            self.unbound_dimension(&n.text, name, ctx, dim.id);
                            return Ok(Value::Unknown);
                        }
                        None => Dim::var(&n.text),
                    };
                    env.insert(&n.text, Value::Int(value.clone()));
                    Value::Int(value)
                }
                _ => self.eval_in(dim, env, &ctx.at_stmt(NodeId::default()))?,
            };
            let problem = match &v {
                Value::Float(_) | Value::Bool(_) | Value::Str(_) => {
                    format!("a dimension of input `{name}` is not an integer")
                }
                Value::Int(d) => match d.known().filter(|v| *v < 1) {
                    Some(bad) => format!("dimension {bad} of input `{name}` is not positive"),
                    None => {
                        shape.push(d.clone());
                        continue;
                    }
                },
                _ => return Ok(Value::Unknown),
            };
            let site = self.site(ctx.name, ctx.item, dim.id);
            self.error_at(Code::InvalidShape, &site, problem);
            return Ok(Value::Unknown);
        }
        let t = TensorType::new(dtype, shape);
        if t.bytes().is_none() {
            let site = self.site(ctx.name, ctx.item, ty.id());
            self.error_at(
                Code::IntegerOverflow,
                &site,
                format!("input `{name}` has more bytes than can be counted (2^127)"),
            );
            return Ok(Value::Unknown);
        }
        Ok(Value::Tensor(self.new_tensor(t)))
    }

    pub(super) fn unbound_dimension(&mut self, dim: &str, input: &str, ctx: &Ctx, node: NodeId) {
        let how = match dim {
            "N" => "`batch 32`".to_string(),
            "S" => "`seq 512`".to_string(),
            other => format!("`dim {other} = ...`"),
        };
        let site = self.site(ctx.name, ctx.item, node);
        let mut d = Diagnostic::new(
            Code::UnboundDimension,
            format!("dimension `{dim}` of input `{input}` is not bound by {}", self.request.context),
            &site.file,
            site.place(),
        )
        .with_primary_message("unbound here")
        .with_help(format!("add {how} to the scenario"));
        if let Some(blame) = &self.request.blame {
            d = d.with_label(&blame.file, blame.place(), "this scenario runs the model");
        }
        self.graph.diagnostics.push(d);
    }

    /// Evaluates the expression of a statement: a call here may return several tensors.
    pub(super) fn eval_stmt_expr(
        &mut self,
        e: &'db Expr,
        env: &Env<'db>,
        ctx: &Ctx<'db>,
        stmt: NodeId,
        targets: usize,
    ) -> Result<Value, Stop> {
        let _ = targets;
        let saved = ctx.stmt.replace(stmt);
        let v = self.eval_in(e, env, ctx);
        ctx.stmt.set(saved);
        v
    }

    /// Evaluates `e`. Each expression is a step of the recursion a program drives (a call
    /// evaluates its callee's body, whose expressions make calls), so each gets stack room.
    pub(super) fn eval_in(&mut self, e: &'db Expr, env: &Env<'db>, ctx: &Ctx<'db>) -> Result<Value, Stop> {
        crate::stack::grow(|| self.eval_expr(e, env, ctx))
    }

    fn eval_expr(&mut self, e: &'db Expr, env: &Env<'db>, ctx: &Ctx<'db>) -> Result<Value, Stop> {
        if self.stopped {
            return Err(Stop);
        }
        Ok(match &e.kind {
            ExprKind::Int(v) => Value::Int(Dim::Known(*v as i128)),
            ExprKind::Float(bits) => Value::Float(f64::from_bits(*bits)),
            ExprKind::Bool(b) => Value::Bool(*b),
            ExprKind::Str(s) => Value::Str(s.clone()),
            ExprKind::Size { .. } | ExprKind::Error => Value::Unknown,
            ExprKind::Name(n) => env.get(n.text.as_str()).cloned().unwrap_or(Value::Unknown),
            ExprKind::List(elems) => {
                let mut ints = Vec::new();
                let mut tensors = Vec::new();
                for x in elems {
                    match self.eval_in(x, env, ctx)? {
                        Value::Int(d) => ints.push(d),
                        Value::Tensor(t) => tensors.push(t),
                        _ => return Ok(Value::Unknown),
                    }
                }
                if tensors.is_empty() { Value::Ints(ints) } else { Value::Tensors(tensors) }
            }
            ExprKind::Unary { op, operand } => {
                let v = self.eval_in(operand, env, ctx)?;
                match (op, v) {
                    (UnaryOp::Neg, Value::Int(d)) => match Dim::Known(0).sub(&d) {
                        Some(d) => Value::Int(d),
                        None => self.overflow(ctx, e.id),
                    },
                    (UnaryOp::Neg, Value::Float(f)) => Value::Float(-f),
                    (UnaryOp::Neg, Value::Tensor(t)) => {
                        self.apply_op(Op::Mul, e.id, ctx, self.scalar_args(t, false))?
                    }
                    (UnaryOp::Not, Value::Bool(b)) => Value::Bool(!b),
                    _ => Value::Unknown,
                }
            }
            ExprKind::Binary { op, lhs, rhs } => {
                let l = self.eval_in(lhs, env, ctx)?;
                // Python's `and` and `or` short-circuit: the right side is not evaluated when the
                // left decides (`k > 0 and n % k == 0` with `k` 0 divides nothing).
                match (op, &l) {
                    (BinaryOp::And, Value::Bool(false)) => Value::Bool(false),
                    (BinaryOp::Or, Value::Bool(true)) => Value::Bool(true),
                    _ => {
                        let r = self.eval_in(rhs, env, ctx)?;
                        self.binary(*op, l, r, e, lhs, rhs, ctx)?
                    }
                }
            }
            ExprKind::Field { base, field } => match (self.eval_in(base, env, ctx)?, field.text.as_str()) {
                (Value::Tensor(t), "shape") => Value::Ints(self.graph.tensor(t).shape.clone()),
                (Value::Tensor(t), "ndim") => Value::Int(Dim::Known(self.graph.tensor(t).rank() as i128)),
                _ => Value::Unknown,
            },
            ExprKind::Index { base, index } => {
                let (b, i) = (self.eval_in(base, env, ctx)?, self.eval_in(index, env, ctx)?);
                let (len, i) = match (&b, i) {
                    (Value::Ints(v), Value::Int(Dim::Known(i))) => (v.len() as i128, i),
                    (Value::Tensors(v), Value::Int(Dim::Known(i))) => (v.len() as i128, i),
                    _ => return Ok(Value::Unknown),
                };
                let at = if i < 0 { i + len } else { i };
                if at < 0 || at >= len {
                    let site = self.site(ctx.name, ctx.item, index.id);
                    self.error_at(Code::InvalidShape, &site, format!("index {i} is out of range for {len} elements"));
                    return Ok(Value::Unknown);
                }
                match b {
                    Value::Ints(v) => Value::Int(v[at as usize].clone()),
                    Value::Tensors(v) => {
                        // `topk(x, k)[1]`: the tuple is a temporary, so the tensors not taken
                        // are dropped here unless something else holds them.
                        for (i, &t) in v.iter().enumerate() {
                            if i != at as usize && self.refs[t.0 as usize] == 0 {
                                self.release(t);
                            }
                        }
                        Value::Tensor(v[at as usize])
                    }
                    _ => Value::Unknown,
                }
            }
            ExprKind::Call { callee, args } => self.call_with(e.id, callee.text.as_str(), args, env, ctx, None)?,
            ExprKind::Repeat { count, call } => {
                let n = match self.eval_in(count, env, ctx)? {
                    Value::Int(Dim::Known(n)) => n,
                    Value::Int(_) => {
                        if self.request.require_bound {
                            let site = self.site(ctx.name, ctx.item, count.id);
                            self.error_at(Code::InvalidShape, &site, "`repeat` count depends on an unbound dimension");
                        }
                        self.undecided += 1;
                        return Ok(Value::Unknown);
                    }
                    _ => {
                        self.undecided += 1;
                        return Ok(Value::Unknown);
                    }
                };
                if n < 0 {
                    let site = self.site(ctx.name, ctx.item, count.id);
                    self.error_at(
                        Code::InvalidRepeat,
                        &site,
                        format!("`repeat` count must not be negative, found {n}"),
                    );
                    return Ok(Value::Unknown);
                }
                let ExprKind::Call { callee, args } = &call.kind else { return Ok(Value::Unknown) };
                let Some(first) = args.first() else { return Ok(Value::Unknown) };
                let mut current = self.eval_in(&first.value, env, ctx)?;
                for i in 0..n {
                    let before = self.graph.nodes.len();
                    let input = current.clone();
                    // Each repetition feeds the previous result as the first argument.
                    current = self.call_with(call.id, callee.text.as_str(), args, env, ctx, Some(current))?;
                    if self.stopped {
                        return Err(Stop);
                    }
                    let per_call = (self.graph.nodes.len() - before) as i128;
                    // A repetition that made nothing and gave back its input (a value already
                    // in error, a block that only returns its argument) is a fixed point:
                    // every later one would do the same. `repeat 2147483647` after an
                    // earlier error once spun for minutes here.
                    if per_call == 0 && current == input {
                        break;
                    }
                    // Repetitions that make no op and change their value still take time: at
                    // most as many as a model has ops. (`repeat` takes and gives one tensor, so
                    // no checked program gets here; an elaboration after errors might.)
                    if i == 0 && per_call == 0 && n > MAX_NODES as i128 {
                        let message =
                            format!("`repeat {n}` would make {n} calls; a model may have at most {MAX_NODES}");
                        return Err(self.stop_at_limit(ctx, count.id, message));
                    }
                    // The first repetition tells how many ops each one makes: a count that
                    // would pass the limit stops here, not after building the ops up to it.
                    if i == 0 && per_call > 0 && before as i128 + per_call.saturating_mul(n) > MAX_NODES as i128 {
                        let total = per_call.saturating_mul(n);
                        let message = format!(
                            "`repeat {n}` would make {total} ops ({per_call} per repetition); a model may have at most {MAX_NODES}"
                        );
                        return Err(self.stop_at_limit(ctx, count.id, message));
                    }
                }
                current
            }
        })
    }

    /// An integer expression whose value depends on a dimension no scenario bound yet
    /// (`N < 8`, `2 ** N`; `what` says what cannot be done): an error where every value must
    /// be known, else left undecided.
    fn undecidable(&mut self, ctx: &Ctx, node: NodeId, what: &str, a: &Dim, op: BinaryOp, b: &Dim) -> Value {
        if self.request.require_bound {
            let site = self.site(ctx.name, ctx.item, node);
            self.error_at(Code::InvalidShape, &site, format!("cannot {what} `{a} {} {b}`", op.symbol()));
        }
        Value::Unknown
    }

    pub(super) fn overflow(&mut self, ctx: &Ctx, node: NodeId) -> Value {
        let site = self.site(ctx.name, ctx.item, node);
        self.error_at(Code::IntegerOverflow, &site, "integer overflow");
        Value::Unknown
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn binary(
        &mut self,
        op: BinaryOp,
        l: Value,
        r: Value,
        e: &Expr,
        lhs: &Expr,
        rhs: &Expr,
        ctx: &Ctx,
    ) -> Result<Value, Stop> {
        use Value::*;
        // An arithmetic operator or a comparison on a tensor (and a tensor or a number on the
        // right) is an elementwise op; a comparison's result is a mask.
        if let Some(name) = tensor_op(op) {
            match (&l, &r) {
                (Tensor(a), Tensor(b)) => {
                    let [a_name, b_name, inplace] = self.operator_names.clone();
                    let mut args = Args::default();
                    args.values.insert(a_name, ArgValue::Tensor(Arc::clone(&self.graph.tensors[a.0 as usize])));
                    args.values.insert(b_name, ArgValue::Tensor(Arc::clone(&self.graph.tensors[b.0 as usize])));
                    args.values.insert(inplace, ArgValue::Bool(false));
                    let sites = [("a", lhs.id), ("b", rhs.id)];
                    return self.apply_with_sites(name, e.id, ctx, (args, vec![*a, *b]), Blame::Pairs(&sites));
                }
                (Tensor(t), Int(_) | Float(_)) => {
                    return self.apply_op(name, e.id, ctx, self.scalar_args(*t, matches!(r, Float(_))));
                }
                _ => {}
            }
        }
        // `x ** e` with a tensor on either side is torch.pow, as `pow(x, e)` writes it.
        if op == BinaryOp::Pow && (matches!(l, Tensor(_)) || matches!(r, Tensor(_))) {
            let mut args = Args::default();
            let mut inputs = Vec::new();
            for (name, value) in [("x", &l), ("exponent", &r)] {
                let arg = match value {
                    Tensor(t) => {
                        inputs.push(*t);
                        ArgValue::Tensor(Arc::clone(&self.graph.tensors[t.0 as usize]))
                    }
                    Int(d) => ArgValue::Int(d.clone()),
                    Float(f) => ArgValue::Float(*f),
                    // A kind error the checker reported, or a value still undecided.
                    _ => {
                        self.undecided += 1;
                        return Ok(Unknown);
                    }
                };
                args.values.insert(Arc::<str>::from(name), arg);
            }
            let sites = [("x", lhs.id), ("exponent", rhs.id)];
            return self.apply_with_sites(Op::Pow, e.id, ctx, (args, inputs), Blame::Pairs(&sites));
        }
        Ok(match (op, l, r) {
            (_, Unknown, _) | (_, _, Unknown) => {
                // An operand of a tensor op, or of a value something else will consume.
                self.undecided += 1;
                Unknown
            }
            (BinaryOp::Or, Bool(a), Bool(b)) => Bool(a || b),
            (BinaryOp::And, Bool(a), Bool(b)) => Bool(a && b),
            (BinaryOp::Eq | BinaryOp::Ne, a, b) if !matches!(a, Int(_)) || !matches!(b, Int(_)) => {
                let eq = match (&a, &b) {
                    (Float(x), Int(Dim::Known(y))) | (Int(Dim::Known(y)), Float(x)) => *x == *y as f64,
                    _ => a == b,
                };
                Bool(if op == BinaryOp::Eq { eq } else { !eq })
            }
            (
                BinaryOp::Eq | BinaryOp::Ne | BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge,
                Int(a),
                Int(b),
            ) => {
                let Some(diff) = a.sub(&b) else { return Ok(self.overflow(ctx, e.id)) };
                match diff.known() {
                    Some(d) => Bool(match op {
                        BinaryOp::Eq => d == 0,
                        BinaryOp::Ne => d != 0,
                        BinaryOp::Lt => d < 0,
                        BinaryOp::Le => d <= 0,
                        BinaryOp::Gt => d > 0,
                        _ => d >= 0,
                    }),
                    None => self.undecidable(ctx, e.id, "decide", &a, op, &b),
                }
            }
            (BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge, a, b) => {
                let (x, y) = match (number(&a), number(&b)) {
                    (Some(x), Some(y)) => (x, y),
                    _ => return Ok(Unknown),
                };
                Bool(match op {
                    BinaryOp::Lt => x < y,
                    BinaryOp::Le => x <= y,
                    BinaryOp::Gt => x > y,
                    _ => x >= y,
                })
            }
            // Python's list concatenation; `[]` is a list of integers until a tensor joins it.
            (BinaryOp::Add, Ints(a), Ints(b)) => Ints(a.into_iter().chain(b).collect()),
            (BinaryOp::Add, Tensors(a), Tensors(b)) => Tensors(a.into_iter().chain(b).collect()),
            (BinaryOp::Add, Ints(a), Tensors(b)) if a.is_empty() => Tensors(b),
            (BinaryOp::Add, Tensors(a), Ints(b)) if b.is_empty() => Tensors(a),
            (BinaryOp::Pow, Int(a), Int(b)) => match b.known() {
                // Python's `2 ** -1` is the float 0.5; `0 ** -1` divides by zero.
                Some(exponent) if exponent < 0 => match a.known() {
                    Some(0) => {
                        let site = self.site(ctx.name, ctx.item, rhs.id);
                        self.error_at(Code::InvalidShape, &site, "zero to a negative power (division by zero)");
                        Unknown
                    }
                    Some(base) => Float((base as f64).powf(exponent as f64)),
                    None => self.undecidable(ctx, e.id, "compute", &a, op, &b),
                },
                Some(exponent) => match a.pow(exponent as u128) {
                    Some(d) => Int(d),
                    None => self.overflow(ctx, e.id),
                },
                None => self.undecidable(ctx, e.id, "compute", &a, op, &b),
            },
            (op, Int(a), Int(b)) => {
                let result = match op {
                    BinaryOp::Add => a.add(&b),
                    BinaryOp::Sub => a.sub(&b),
                    BinaryOp::Mul => a.mul(&b),
                    BinaryOp::Div | BinaryOp::FloorDiv | BinaryOp::Rem if b == Dim::Known(0) => {
                        let site = self.site(ctx.name, ctx.item, rhs.id);
                        self.error_at(Code::InvalidShape, &site, "division by zero");
                        return Ok(Unknown);
                    }
                    BinaryOp::Div | BinaryOp::FloorDiv => a.floor_div(&b),
                    BinaryOp::Rem => a.rem(&b),
                    _ => return Ok(Unknown),
                };
                match result {
                    Some(d) => Int(d),
                    None => self.overflow(ctx, e.id),
                }
            }
            (op, a @ (Int(_) | Float(_)), b @ (Int(_) | Float(_))) => {
                let (x, y) = (number(&a).unwrap_or(0.0), number(&b).unwrap_or(0.0));
                Float(match op {
                    BinaryOp::Add => x + y,
                    BinaryOp::Sub => x - y,
                    BinaryOp::Mul => x * y,
                    BinaryOp::Div => x / y,
                    BinaryOp::FloorDiv => (x / y).floor(),
                    BinaryOp::Pow => {
                        // Python raises where the real power does not exist or is too large.
                        let fault = if x == 0.0 && y < 0.0 {
                            Some("zero to a negative power (division by zero)")
                        } else if x < 0.0 && y.fract() != 0.0 {
                            Some("a negative number to a fractional power is a complex number")
                        } else if !x.powf(y).is_finite() && x.is_finite() && y.is_finite() {
                            Some("the power is too large for a float")
                        } else {
                            None
                        };
                        if let Some(fault) = fault {
                            let site = self.site(ctx.name, ctx.item, e.id);
                            self.error_at(Code::InvalidShape, &site, fault);
                            return Ok(Unknown);
                        }
                        x.powf(y)
                    }
                    _ => return Ok(Unknown),
                })
            }
            (BinaryOp::MatMul, Tensor(a), Tensor(b)) => {
                let [a_name, b_name, _] = self.operator_names.clone();
                let mut args = Args::default();
                args.values.insert(a_name, ArgValue::Tensor(Arc::clone(&self.graph.tensors[a.0 as usize])));
                args.values.insert(b_name, ArgValue::Tensor(Arc::clone(&self.graph.tensors[b.0 as usize])));
                let sites = [("a", lhs.id), ("b", rhs.id)];
                self.apply_with_sites(Op::Matmul, e.id, ctx, (args, vec![a, b]), Blame::Pairs(&sites))?
            }
            (
                op @ (BinaryOp::Add | BinaryOp::Sub | BinaryOp::Mul | BinaryOp::Div),
                number @ (Int(_) | Float(_)),
                Tensor(t),
            ) => {
                let name = tensor_op(op).unwrap_or(Op::Add);
                self.apply_op(name, e.id, ctx, self.scalar_args(t, matches!(number, Float(_))))?
            }
            _ => Unknown,
        })
    }
}

/// Whether `expr` reads the name `name` (a dimension of an input's declared shape).
fn mentions(expr: &Expr, name: &str) -> bool {
    match &expr.kind {
        ExprKind::Name(n) => n.text == name,
        ExprKind::Unary { operand, .. } => mentions(operand, name),
        ExprKind::Binary { lhs, rhs, .. } => mentions(lhs, name) || mentions(rhs, name),
        ExprKind::Call { args, .. } => args.iter().any(|a| mentions(&a.value, name)),
        ExprKind::List(items) => items.iter().any(|e| mentions(e, name)),
        ExprKind::Field { base, .. } => mentions(base, name),
        ExprKind::Index { base, index } => mentions(base, name) || mentions(index, name),
        ExprKind::Repeat { count, call } => mentions(count, name) || mentions(call, name),
        ExprKind::Int(_)
        | ExprKind::Float(_)
        | ExprKind::Bool(_)
        | ExprKind::Str(_)
        | ExprKind::Size { .. }
        | ExprKind::Error => false,
    }
}
