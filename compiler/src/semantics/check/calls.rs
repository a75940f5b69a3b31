//! The checks of calls: what the callee is (op, block, model), arity, keywords, the kinds
//! of arguments against the parameters', and `repeat n f(x)`'s count and callee.

use super::*;

impl<'a> ItemChecker<'a> {
    pub(super) fn call_kind(
        &mut self,
        id: NodeId,
        callee: &Name,
        args: &[Arg],
        env: &Env,
        targets: usize,
    ) -> ValueKind {
        let builtin = self.builtin_called(callee);
        if let Some(mark) = builtin.filter(|b| b.marks_a_call()) {
            return self.mark_kind(mark, id, args, env, targets);
        }
        let arg_kinds: Vec<ValueKind> = args.iter().map(|a| self.expr_kind(&a.value, env)).collect();
        if let Some(builtin) = builtin {
            return self.builtin_kind(id, builtin, args, &arg_kinds);
        }
        let Some(def) = self.resolve_callee(callee, &[DefKind::Op, DefKind::Block]) else {
            return if targets > 1 { ValueKind::Tensors(targets as u32) } else { ValueKind::Unknown };
        };
        let sig = def.signature.clone().expect("ops and blocks have signatures");
        self.check_call_args(id, callee, &def, &sig, args, &arg_kinds);
        match sig.outputs {
            Outputs::Fixed(1) => ValueKind::Tensor,
            Outputs::Fixed(n) => ValueKind::Tensors(n),
            Outputs::Variadic if targets > 1 => ValueKind::Tensors(targets as u32),
            Outputs::Variadic if sig.broken => ValueKind::Unknown,
            Outputs::Variadic => ValueKind::TensorList,
        }
    }

    /// The built-in function a call of `callee` calls: one of that name, unless the file's scope
    /// defines the name (a definition or an import shadows a built-in, as in Python).
    fn builtin_called(&self, callee: &Name) -> Option<Builtin> {
        Builtin::from_name(&callee.text).filter(|_| !self.scope.names.contains_key(callee.text.as_str()))
    }

    /// The kind of `checkpoint(call)`, `frozen(call)`, `fp32(call)` or `routed(call, k, of)`:
    /// that of the call it marks (a block, an op or a `repeat`), which may return several
    /// tensors where the statement assigns several names.
    fn mark_kind(&mut self, mark: Builtin, id: NodeId, args: &[Arg], env: &Env, targets: usize) -> ValueKind {
        if mark == Builtin::Routed {
            return self.routed_kind(id, args, env, targets);
        }
        self.marked_call_kind(mark, id, args, env, targets)
    }

    /// The kind of a mark whose only argument is the call it marks, with an optional `when=`
    /// condition after it.
    fn marked_call_kind(&mut self, mark: Builtin, id: NodeId, args: &[Arg], env: &Env, targets: usize) -> ValueKind {
        let (name, signature) = (mark.name(), mark.signature());
        // The form the help shows: the condition is optional.
        let plain = format!("{name}(block(x, ...))");
        let args = match args {
            [call @ Arg { keyword: None, .. }, Arg { keyword: Some(kw), value, .. }] if kw.text == "when" => {
                let kind = self.expr_kind(value, env);
                if !kind.fits(ValueKind::Bool) {
                    self.error(Code::ArgumentKind, value.id, format!("`when` is {}, not a bool", kind.describe()))
                        .help = Some(format!("give a condition: `{name}(linear(x, 10), when=lora_r > 0)`"));
                }
                std::slice::from_ref(call)
            }
            _ => args,
        };
        match args {
            [Arg { keyword: None, value, .. }] => match &value.kind {
                ExprKind::Call { callee, .. } if self.builtin_called(callee).is_some_and(|b| !b.marks_a_call()) => {
                    let message =
                        format!("`{name}` marks a call of a block or an op, but `{}` computes a number", callee.text);
                    self.error(Code::ArgumentKind, value.id, message).help =
                        Some(format!("mark the call that makes the tensors: `{plain}`"));
                    ValueKind::Unknown
                }
                ExprKind::Call { callee, args } => self.call_kind(value.id, callee, args, env, targets),
                ExprKind::Repeat { count, call } => self.repeat_kind(count, call, env),
                _ => {
                    let kind = self.expr_kind(value, env);
                    let message = format!("`{name}` marks a call, but this is {}", kind.describe());
                    let what = match mark {
                        Builtin::Frozen => "whose parameters are frozen",
                        Builtin::Fp32 => "whose parameters are float32",
                        Builtin::NoAutocast => "that runs outside autocast",
                        Builtin::Routed => "that makes one expert",
                        _ => "whose activations are recomputed in backward",
                    };
                    self.error(Code::ArgumentKind, value.id, message).help =
                        Some(format!("wrap the call {what}: `{plain}`"));
                    ValueKind::Unknown
                }
            },
            [] => {
                self.error(Code::MissingArgument, id, format!("`{name}` needs the call it marks")).help =
                    Some(format!("call it as `{plain}`"));
                ValueKind::Unknown
            }
            [Arg { keyword: Some(kw), .. }, ..] => {
                self.error(Code::UnknownKeyword, kw.id, format!("`{name}` takes the call it marks by position")).help =
                    Some(format!("give the call first: `{plain}`"));
                ValueKind::Unknown
            }
            [_, .., Arg { keyword: Some(kw), .. }] if kw.text != "when" => {
                for arg in args {
                    self.expr_kind(&arg.value, env);
                }
                self.error(Code::UnknownKeyword, kw.id, format!("`{name}` has no argument `{}`", kw.text)).help =
                    Some(format!("its one keyword is `when`: `{signature}`"));
                ValueKind::Unknown
            }
            [first, rest @ ..] => {
                // PyTorch's spelling, `checkpoint(layer, x)`: the callee is not a value here.
                let callee = match &first.value.kind {
                    ExprKind::Name(name) => Some(name.text.clone()),
                    _ => None,
                };
                let evaluated = if callee.is_some() { rest } else { args };
                for arg in evaluated {
                    self.expr_kind(&arg.value, env);
                }
                let message = format!("`{name}` marks one call, but {} arguments were given", args.len());
                self.error(Code::TooManyArguments, id, message).help = Some(match callee {
                    Some(callee) if mark == Builtin::Checkpoint => format!(
                        "write the call inside: `checkpoint({callee}(...))` runs what `torch.utils.checkpoint.checkpoint({callee}, ...)` runs"
                    ),
                    Some(callee) => format!("write the call inside: `{name}({callee}(...))`"),
                    None => format!("the arguments belong to the call inside: `{plain}`"),
                });
                ValueKind::Unknown
            }
        }
    }

    /// The kind of `routed(call, k, of)`: the marked call's (checked as `frozen`'s), with two
    /// integers by position after it.
    fn routed_kind(&mut self, id: NodeId, args: &[Arg], env: &Env, targets: usize) -> ValueKind {
        let signature = Builtin::Routed.signature();
        if let Some(kw) = args.iter().find_map(|a| a.keyword.as_ref()) {
            self.error(Code::UnknownKeyword, kw.id, "`routed` takes no keyword arguments").help =
                Some(format!("give the counts by position: `{signature}`"));
        }
        let kind = self.marked_call_kind(Builtin::Routed, id, &args[..args.len().min(1)], env, targets);
        for arg in args.iter().skip(1).take(2) {
            let count = self.expr_kind(&arg.value, env);
            if !matches!(count, ValueKind::Int | ValueKind::Unknown) {
                let message = format!("`routed` counts experts with an integer, but this is {}", count.describe());
                self.error(Code::ArgumentKind, arg.value.id, message).help = Some(format!("call it as `{signature}`"));
            }
        }
        match args.len() {
            0 => {}
            1 | 2 => {
                let message = "`routed` needs how many experts a token runs and how many there are";
                self.error(Code::MissingArgument, id, message).help = Some(format!("call it as `{signature}`"));
            }
            3 => {}
            n => {
                for arg in &args[3..] {
                    self.expr_kind(&arg.value, env);
                }
                let message = format!("`routed` takes a call and two counts, but {n} arguments were given");
                self.error(Code::TooManyArguments, id, message).help = Some(format!("call it as `{signature}`"));
            }
        }
        kind
    }

    /// The kind of a call of a built-in function: `min` and `max` of two or more numbers or of
    /// one list of integers, `len` of one list; arguments by position.
    fn builtin_kind(&mut self, id: NodeId, builtin: Builtin, args: &[Arg], kinds: &[ValueKind]) -> ValueKind {
        let name = builtin.name();
        if let Some(kw) = args.iter().find_map(|a| a.keyword.as_ref()) {
            self.error(Code::UnknownKeyword, kw.id, format!("`{name}` takes no keyword arguments")).help =
                Some(format!("give the values by position: `{}`", builtin.signature()));
            return ValueKind::Unknown;
        }
        match builtin {
            Builtin::PastSeenTokens => return self.no_arguments(id, builtin, args, ValueKind::Int),
            Builtin::AutocastDtype => return self.no_arguments(id, builtin, args, ValueKind::Str),
            Builtin::Generating | Builtin::Checkpointing | Builtin::Training => {
                return self.no_arguments(id, builtin, args, ValueKind::Bool);
            }
            Builtin::Ceil => {
                let number = |k: ValueKind| matches!(k, ValueKind::Int | ValueKind::Float | ValueKind::Unknown);
                return self.one_argument(id, builtin, args, kinds, number, ("number", ValueKind::Int));
            }
            Builtin::Len => {
                let list = |k: ValueKind| matches!(k, ValueKind::IntList | ValueKind::TensorList | ValueKind::Unknown);
                return self.one_argument(id, builtin, args, kinds, list, ("list", ValueKind::Int));
            }
            Builtin::Listed => return self.listed_kind(id, args, kinds),
            _ => {}
        }
        match kinds {
            [] => {
                self.error(Code::MissingArgument, id, format!("`{name}` needs two or more numbers, or a list")).help =
                    Some(format!("call it as `{}`", builtin.signature()));
                ValueKind::Unknown
            }
            [ValueKind::IntList | ValueKind::Unknown] => ValueKind::Int,
            [one] => {
                let message = format!("`{name}` of one value takes a list of integers, but this is {}", one.describe());
                self.error(Code::ArgumentKind, args[0].value.id, message).help =
                    Some(format!("give two or more numbers: `{}`", builtin.signature()));
                ValueKind::Unknown
            }
            _ => {
                let mut result = ValueKind::Int;
                for (arg, kind) in args.iter().zip(kinds) {
                    match kind {
                        ValueKind::Int => {}
                        ValueKind::Float => result = ValueKind::Float,
                        ValueKind::Unknown => {}
                        other => {
                            let message = format!("`{name}` compares numbers, but this is {}", other.describe());
                            self.error(Code::ArgumentKind, arg.value.id, message);
                            result = ValueKind::Unknown;
                        }
                    }
                }
                result
            }
        }
    }

    /// `listed(item, items)`: two strings, a boolean.
    fn listed_kind(&mut self, id: NodeId, args: &[Arg], kinds: &[ValueKind]) -> ValueKind {
        let signature = Builtin::Listed.signature();
        for (arg, kind) in args.iter().zip(kinds) {
            if !matches!(kind, ValueKind::Str | ValueKind::Unknown) {
                let message = format!("`listed` compares strings, but this is {}", kind.describe());
                self.error(Code::ArgumentKind, arg.value.id, message).help = Some(format!("call it as `{signature}`"));
            }
        }
        match args.len() {
            2 => {}
            0 | 1 => {
                let message = "`listed` needs a name and a comma-separated list of names";
                self.error(Code::MissingArgument, id, message).help = Some(format!("call it as `{signature}`"));
            }
            n => {
                let message = format!("`listed` takes two strings, but {n} arguments were given");
                self.error(Code::TooManyArguments, id, message).help = Some(format!("call it as `{signature}`"));
            }
        }
        ValueKind::Bool
    }

    /// A built-in that takes no arguments (`past_seen_tokens()`, `generating()`): its value
    /// is of `kind`.
    fn no_arguments(&mut self, id: NodeId, builtin: Builtin, args: &[Arg], kind: ValueKind) -> ValueKind {
        if !args.is_empty() {
            self.error(Code::TooManyArguments, id, format!("`{}` takes no arguments", builtin.name()));
        }
        kind
    }

    /// A built-in of one argument whose kind `accepts` (`noun` names what it must be; `result`
    /// is the kind of the value): `len(list)`, `ceil(x)`.
    fn one_argument(
        &mut self,
        id: NodeId,
        builtin: Builtin,
        args: &[Arg],
        kinds: &[ValueKind],
        accepts: impl Fn(ValueKind) -> bool,
        (noun, result): (&str, ValueKind),
    ) -> ValueKind {
        let name = builtin.name();
        match kinds {
            [one] if accepts(*one) => {}
            [other] => {
                let message = format!("`{name}` takes a {noun}, but this is {}", other.describe());
                self.error(Code::ArgumentKind, args[0].value.id, message);
            }
            _ => {
                let message = format!("`{name}` takes one {noun}, but {} were given", args.len());
                self.error(Code::TooManyArguments, id, message);
            }
        }
        result
    }

    /// Checks the arguments of a call against a signature: arity, keywords, kinds.
    pub fn check_call_args(
        &mut self,
        call_id: NodeId,
        callee: &Name,
        def: &Definition,
        sig: &Signature,
        args: &[Arg],
        arg_kinds: &[ValueKind],
    ) {
        if sig.broken {
            return;
        }
        let def_place = Place::Node(NodeRef { item: def.item, node: def.name_node.0 });
        let mut given: Vec<Option<NodeId>> = vec![None; sig.params.len()];
        let mut seen_keyword = false;
        // After an arity error, which parameter an argument meant is a guess: do not also
        // report missing arguments.
        let mut arity_reported = false;
        for (position, (arg, kind)) in args.iter().zip(arg_kinds).enumerate() {
            let index = match &arg.keyword {
                None => {
                    if seen_keyword {
                        self.error(
                            Code::PositionalAfterKeyword,
                            arg.id,
                            "positional argument after a keyword argument",
                        )
                        .help = Some("give the positional arguments first, or name this one".into());
                        arity_reported = true;
                        continue;
                    }
                    if position >= sig.params.len() {
                        let msg = format!(
                            "`{}` takes {} argument{}, but {} were given",
                            callee.text,
                            sig.params.len(),
                            if sig.params.len() == 1 { "" } else { "s" },
                            args.iter().filter(|a| a.keyword.is_none()).count()
                        );
                        let file = def.file.clone();
                        arity_reported = true;
                        self.error(Code::TooManyArguments, arg.id, msg).with_label_mut(
                            &file,
                            def_place.clone(),
                            format!("defined as `{}`", sig.render(&callee.text)),
                        );
                        break;
                    }
                    position
                }
                Some(kw) => {
                    seen_keyword = true;
                    match sig.params.iter().position(|p| p.name == kw.text) {
                        Some(index) => index,
                        None => {
                            let suggestion = closest(&kw.text, sig.params.iter().map(|p| p.name.as_str()));
                            let msg = format!("`{}` has no parameter `{}`", callee.text, kw.text);
                            let file = def.file.clone();
                            let d = self.error(Code::UnknownKeyword, kw.id, msg).with_label_mut(
                                &file,
                                def_place.clone(),
                                format!("defined as `{}`", sig.render(&callee.text)),
                            );
                            d.help = suggestion.map(|s| format!("did you mean `{s}`?"));
                            continue;
                        }
                    }
                }
            };
            if let Some(first) = given[index] {
                let msg = format!("argument `{}` is given twice", sig.params[index].name);
                let file = self.file.clone();
                let at = self.at(first);
                self.error(Code::RepeatedArgument, arg.id, msg).with_label_mut(&file, at, "first given here");
                continue;
            }
            given[index] = Some(arg.id);
            let expected = sig.params[index].kind;
            // An op's list of integers takes one integer too, as PyTorch's `dim=1` for `dim=(1,)`.
            let one_for_a_list = def.kind == DefKind::Op && expected == ValueKind::IntList && *kind == ValueKind::Int;
            if !kind.fits(expected) && !one_for_a_list {
                let untyped = !sig.params[index].typed && expected == ValueKind::Tensor;
                let msg = format!(
                    "`{}` of `{}` takes {}, but this is {}",
                    sig.params[index].name,
                    callee.text,
                    expected.describe(),
                    kind.describe()
                );
                let d = self.error(Code::ArgumentKind, arg.value.id, msg);
                if untyped {
                    d.help = Some(format!(
                        "`{}` has no type, so it takes a tensor; declare its type: `{}: {}`",
                        sig.params[index].name,
                        sig.params[index].name,
                        kind.describe_type()
                    ));
                }
            }
        }
        let missing: Vec<&str> = sig
            .params
            .iter()
            .zip(&given)
            .filter(|(p, g)| !p.has_default && g.is_none())
            .map(|(p, _)| p.name.as_str())
            .collect();
        if !missing.is_empty() && !arity_reported {
            let list: Vec<String> = missing.iter().map(|m| format!("`{m}`")).collect();
            let msg = format!(
                "missing argument{} {} in call of `{}`",
                if missing.len() == 1 { "" } else { "s" },
                list.join(", "),
                callee.text
            );
            let file = def.file.clone();
            self.error(Code::MissingArgument, call_id, msg).with_label_mut(
                &file,
                def_place,
                format!("defined as `{}`", sig.render(&callee.text)),
            );
        }
    }

    pub(super) fn repeat_kind(&mut self, count: &Expr, call: &Expr, env: &Env) -> ValueKind {
        let count_kind = self.expr_kind(count, env);
        if !count_kind.fits(ValueKind::Int) {
            self.error(
                Code::InvalidRepeat,
                count.id,
                format!("`repeat` needs an integer count, not {}", count_kind.describe()),
            );
        } else if let ExprKind::Unary { op: UnaryOp::Neg, operand } = &count.kind
            && let ExprKind::Int(n) = operand.kind
            && n > 0
        {
            self.error(Code::InvalidRepeat, count.id, format!("`repeat` count must not be negative, found -{n}"));
        }
        let ExprKind::Call { callee, args } = &call.kind else { return ValueKind::Unknown };
        let kind = self.call_kind(call.id, callee, args, env, 1);
        if let Some(Binding::Unique(def)) = self.scope.names.get(callee.text.as_str())
            && let Some(sig) = &def.signature
            && !sig.broken
        {
            let first_is_tensor = sig.params.first().is_some_and(|p| p.kind == ValueKind::Tensor);
            if def.kind != DefKind::Block && def.kind != DefKind::Op {
                return ValueKind::Unknown;
            }
            if !first_is_tensor || sig.outputs != Outputs::Fixed(1) {
                let msg =
                    format!("`{}` cannot be repeated: it must take a tensor first and return one tensor", callee.text);
                self.error(Code::InvalidRepeat, call.id, msg).help =
                    Some("`repeat n f(x, ...)` feeds each call's result to the next call's first argument".into());
                return ValueKind::Unknown;
            }
            if args.first().is_none_or(|a| a.keyword.is_some()) {
                self.error(
                    Code::InvalidRepeat,
                    call.id,
                    "the repeated call needs its tensor as the first positional argument",
                );
            }
        }
        kind
    }
}
