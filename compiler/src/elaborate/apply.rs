//! Op application: an op call's bound arguments handed to the op's shape rule
//! ([`crate::shapes::ops::apply`]), the node added to the graph, or the rule's error reported
//! with labels on the arguments it blames.

use super::*;
use crate::semantics::ValueKind;
use crate::semantics::scope::param_kind;

impl<'db> Elaborator<'db, '_> {
    pub(super) fn op_call(
        &mut self,
        decl: &'db OpDecl,
        names: usize,
        bound: Bound<'db>,
        id: NodeId,
        ctx: &Ctx<'db>,
    ) -> Result<Value, Stop> {
        let mut args = Args::default();
        let mut inputs = Vec::new();
        // Parameters in declaration order, so inputs are in a stable order.
        for (p, name) in decl.params.iter().zip(&self.param_names[names]) {
            let Some((_, value, _)) = bound.iter().find(|(n, _, _)| *n == p.name.text) else { continue };
            let arg = match value {
                Value::Tensor(t) => {
                    inputs.push(*t);
                    ArgValue::Tensor(Arc::clone(&self.graph.tensors[t.0 as usize]))
                }
                Value::Tensors(ts) => {
                    inputs.extend(ts.iter().copied());
                    ArgValue::Tensors(ts.iter().map(|t| self.graph.tensor(*t).clone()).collect())
                }
                // One integer for an op's list of integers (`mean(y, dim=1)`) is that list.
                Value::Int(d) if param_kind(p) == ValueKind::IntList => ArgValue::Ints(vec![d.clone()]),
                Value::Int(d) => ArgValue::Int(d.clone()),
                Value::Float(f) => ArgValue::Float(*f),
                Value::Bool(b) => ArgValue::Bool(*b),
                Value::Str(s) => ArgValue::Str(s.clone()),
                Value::Ints(v) => ArgValue::Ints(v.clone()),
                Value::Size(_) | Value::Unknown => {
                    self.undecided += 1;
                    return Ok(Value::Unknown);
                }
            };
            args.values.insert(name.clone(), arg);
        }
        let Some(op) = Op::from_name(&decl.name.text) else {
            let err = OpError {
                message: format!("op `{}` is declared but netc has no semantics for it", decl.name.text),
                blame: Vec::new(),
                help: Some(
                    "write it as a block that calls `kernel(...)` with its output shape, parameters, MACs and what it saves (spec/ops.md)".to_string(),
                ),
                symbolic: false,
            };
            self.op_error(&decl.name.text, err, id, ctx, Blame::Bound(&bound));
            return Ok(Value::Unknown);
        };
        // A cache's length is the run's, not the call's: the scenario's `context`.
        if let (Op::KvCache, Some(cached)) = (op, self.request.cache) {
            args.values.insert(ops::CACHED_TOKENS, ArgValue::Int(Dim::Known(cached)));
        }
        self.apply_with_sites(op, id, ctx, (args, inputs), Blame::Bound(&bound))
    }

    /// The arguments of an elementwise op between tensor `id` and a Python number (a float
    /// when `float`). The number is a wrapped number: it changes the result's dtype only when
    /// it is of a higher kind, to the default dtype of that kind (`i64[n] * 0.5` is float32,
    /// `bf16[] * 2.0` stays bf16, `i32[n] * 2` stays int32).
    pub(super) fn scalar_args(&self, id: TensorId, float: bool) -> (Args, Vec<TensorId>) {
        let t = self.graph.tensor(id);
        let number = if float { DType::F32 } else { DType::I64 };
        let scalar =
            if DType::result_type([(t.dtype, false), (number, true)]) == Some(t.dtype) { t.dtype } else { number };
        let [a, b, inplace] = self.operator_names.clone();
        let mut args = Args::default();
        args.values.insert(a, ArgValue::Tensor(Arc::clone(&self.graph.tensors[id.0 as usize])));
        args.values.insert(b, ArgValue::Tensor(Arc::new(TensorType::new(scalar, Vec::new()))));
        args.values.insert(inplace, ArgValue::Bool(false));
        (args, vec![id])
    }

    pub(super) fn apply_op(
        &mut self,
        op: Op,
        id: NodeId,
        ctx: &Ctx,
        args: (Args, Vec<TensorId>),
    ) -> Result<Value, Stop> {
        self.apply_with_sites(op, id, ctx, args, Blame::Pairs(&[]))
    }

    /// Applies an op's rule; on success adds the node, on failure reports the error with
    /// labels on the blamed arguments (`sites`: the argument node of each parameter).
    pub(super) fn apply_with_sites(
        &mut self,
        op: Op,
        id: NodeId,
        ctx: &Ctx,
        (args, inputs): (Args, Vec<TensorId>),
        sites: Blame<'_, 'db>,
    ) -> Result<Value, Stop> {
        // A long elaboration (a large `repeat`) stops as soon as an edit makes its result stale.
        if self.graph.nodes.len() % 1024 == 1023 {
            self.db.unwind_if_revision_cancelled();
        }
        if self.graph.nodes.len() >= MAX_NODES {
            return Err(self.stop_at_limit(ctx, id, format!("the model has more than {MAX_NODES} ops")));
        }
        // Every tensor's bytes were counted when it was made, so an output of an input's type
        // (elementwise ops: most of a model) is not counted again; with symbolic dimensions a
        // count multiplies polynomials.
        let counted = |t: &TensorType| inputs.iter().any(|&i| self.graph.tensor(i) == t) || t.bytes().is_some();
        let outcome = ops::apply(op, &args).and_then(|result| match result.outputs.iter().find(|t| !counted(t)) {
            Some(t) => Err(OpError {
                message: format!("integer overflow: an output of this `{op}` ({t}) has more bytes than can be counted"),
                blame: Vec::new(),
                help: None,
                symbolic: false,
            }),
            None => Ok(result),
        });
        match outcome {
            Ok(mut result) => {
                let mut params = result.params().unwrap_or(Dim::Known(0));
                if let Some((key, weight)) = tied_weight(&args, &result) {
                    self.share_uses += 1;
                    match self.tied.tie(key, weight, params) {
                        Ok(owned) => params = owned,
                        Err(message) => {
                            let site = self.site(ctx.name, ctx.item, id);
                            self.error_at(Code::InvalidShape, &site, message);
                            return Ok(Value::Unknown);
                        }
                    }
                }
                // The output types move to the graph's tensors (the node names them in `outputs`).
                let types = std::mem::take(&mut result.outputs);
                let outputs: Arc<[TensorId]> = types.into_iter().map(|t| self.new_tensor(t)).collect();
                let stmt = self.site(ctx.name, ctx.item, ctx.stmt.get());
                let expr = self.site(ctx.name, ctx.item, id);
                let origin = self.origin(expr, stmt);
                let inputs: Arc<[TensorId]> = inputs.into();
                self.graph.nodes.push(Arc::new(Node {
                    op,
                    args: Arc::new(args),
                    inputs: Arc::clone(&inputs),
                    outputs: Arc::clone(&outputs),
                    result: Arc::new(result),
                    params,
                    origin,
                }));
                // Temporaries this node consumed are dropped once it returns.
                for &t in inputs.iter() {
                    if self.refs[t.0 as usize] == 0 {
                        self.release(t);
                    }
                }
                Ok(match *outputs {
                    [one] => Value::Tensor(one),
                    _ => Value::Tensors(outputs.to_vec()),
                })
            }
            // A count the rule needs known, symbolic while the dimensions are unbound: the
            // graph cannot decide it, as an `if` on `N` cannot; a scenario elaborates at its sizes.
            Err(err) if err.symbolic && !self.request.require_bound => {
                self.undecided += 1;
                Ok(Value::Unknown)
            }
            Err(err) => {
                self.op_error(op.name(), err, id, ctx, sites);
                Ok(Value::Unknown)
            }
        }
    }

    pub(super) fn op_error(&mut self, op: &str, err: OpError, id: NodeId, ctx: &Ctx, sites: Blame<'_, 'db>) {
        let code = if err.message.starts_with("integer overflow") { Code::IntegerOverflow } else { Code::InvalidShape };
        let site = self.site(ctx.name, ctx.item, id);
        let mut d = Diagnostic::new(code, err.message.clone(), &site.file, site.place())
            .with_primary_message(format!("in this `{op}`"));
        for (param, label) in &err.blame {
            if let Some(node) = sites.node(param)
                && !label.is_empty()
            {
                d = d.with_label(ctx.name, Place::Node(NodeRef { item: ctx.item, node: node.0 }), label.clone());
            }
        }
        if let Some(help) = err.help {
            d = d.with_help(help);
        }
        self.report(d);
    }
}
