//! The rules of elementwise math on one tensor (`exp`, `log`, `sin`, `cos`, `sqrt`, `rsqrt`,
//! `neg`), of powers (`pow`), of choosing elements by a mask (`masked_fill`, `where`), of comparisons and
//! their masks (`lt`, ..., `bitwise_and`), of filled tensors (`new_zeros`, `new_ones`), of
//! stochastic depth (`drop_path`) and of complex numbers from polar coordinates (`polar`).

use super::*;

/// `exp(x)`, `log(x)`, ...: the shape kept; an integer input gives float32, as PyTorch's
/// type promotion for these functions does (`neg` keeps any dtype).
pub(super) fn elementwise_math(op: Op, args: &Args) -> OpOutcome {
    let x = args.tensor("x")?;
    // `neg`, `floor` and `abs` keep an integer's dtype (`floor` of an integer is a copy of
    // it); the transcendental ones compute an integer in float32.
    let keeps_dtype = matches!(op, Op::Neg | Op::Floor | Op::Abs);
    let dtype = if x.dtype.is_float() || keeps_dtype { x.dtype } else { DType::F32 };
    if keeps_dtype && x.dtype == DType::Bool {
        let (what, help) = match op {
            Op::Neg => ("neg of a bool tensor: PyTorch has no negation for bools", "use logical not"),
            Op::Abs => ("abs of a bool tensor: PyTorch has no abs for bools", "convert it to a number type first"),
            _ => ("floor of a bool tensor: PyTorch has no floor for bools", "convert it to a number type first"),
        };
        return Err(error(what).blame("x", format!("{x}")).help(help));
    }
    Ok(OpResult::one(TensorType::new(dtype, x.shape.clone())))
}

/// `pow(x, exponent)`: the operands broadcast and meet in `torch.result_type`'s dtype, a number
/// counting as a 0-dim tensor of float32 or int64 (`bf16 ** 2.0` stays bf16, `i32 ** 2.0` is
/// float32, `i32 ** 2` int32, `2 ** f32` float32).
pub(super) fn pow(args: &Args) -> OpOutcome {
    let operand = |name: &str| -> Result<TensorType, OpError> {
        match args.get(name)? {
            ArgValue::Tensor(t) => Ok(TensorType::clone(t)),
            ArgValue::Float(_) => Ok(TensorType::new(DType::F32, Vec::new())),
            ArgValue::Int(_) => Ok(TensorType::new(DType::I64, Vec::new())),
            _ => Err(error(format!("`{name}` must be a tensor or a number")).blame(name, "neither")),
        }
    };
    let (x, e) = (operand("x")?, operand("exponent")?);
    let is_tensor = |name: &str| matches!(args.get(name), Ok(ArgValue::Tensor(_)));
    if !is_tensor("x") && !is_tensor("exponent") {
        return Err(error("pow of two numbers: one operand must be a tensor")
            .blame("x", "a number")
            .help("compute the number in the language (`2.0 * 2.0`), or make a tensor with `full`"));
    }
    let out = broadcast(&x, &e).map_err(|err| err.blame("x", format!("{x}")).blame("exponent", format!("{e}")))?;
    let dtype = DType::result_type([(x.dtype, x.shape.is_empty()), (e.dtype, e.shape.is_empty())]).unwrap_or(out.dtype);
    Ok(OpResult::one(TensorType::new(dtype, out.shape)))
}

/// `masked_fill(x, mask, value)`: `x`'s shape; `mask` is a bool tensor that broadcasts to it
/// without growing it.
pub(super) fn masked_fill(args: &Args) -> OpOutcome {
    let (x, mask) = (args.tensor("x")?, args.tensor("mask")?);
    if mask.dtype != DType::Bool {
        return Err(error(format!("masked_fill needs a bool mask, found {mask}"))
            .blame("mask", format!("{mask}"))
            .help("declare the mask `bool` (a buffer or an input)"));
    }
    let out = broadcast(x, mask).map_err(|e| e.blame("x", format!("{x}")).blame("mask", format!("{mask}")))?;
    if out.shape != x.shape {
        return Err(error(format!(
            "masked_fill's mask {mask} would grow {x} to {out}: the fill is in the shape of `x`"
        ))
        .blame("mask", format!("{mask}")));
    }
    args.float("value")?;
    Ok(OpResult::one(x.clone()))
}

/// `where(condition, a, b)`: the broadcast of the three shapes; `condition` is bool. `a` and
/// `b` are tensors or numbers (`torch.where(mask, x, 0.0)`): a number is a wrapped scalar,
/// which takes the other operand's dtype unless it is a float beside an integer tensor (then
/// float32, as `torch.result_type`); two numbers give float32 (int64 for two integers).
pub(super) fn where_(args: &Args) -> OpOutcome {
    let c = args.tensor("condition")?;
    if c.dtype != DType::Bool {
        return Err(error(format!("where needs a bool condition, found {c}")).blame("condition", format!("{c}")));
    }
    let operand = |name: &str| -> Result<Result<&TensorType, bool>, OpError> {
        match args.get(name)? {
            ArgValue::Tensor(t) => Ok(Ok(t)),
            ArgValue::Float(_) => Ok(Err(true)),
            ArgValue::Int(_) => Ok(Err(false)),
            _ => Err(error(format!("`{name}` must be a tensor or a number")).blame(name, "neither")),
        }
    };
    let (a, b) = (operand("a")?, operand("b")?);
    let ab = match (a, b) {
        (Ok(a), Ok(b)) => broadcast(a, b).map_err(|e| e.blame("a", format!("{a}")).blame("b", format!("{b}")))?,
        (Ok(t), Err(float)) | (Err(float), Ok(t)) => {
            let dtype = if float && !t.dtype.is_float() { DType::F32 } else { t.dtype };
            TensorType::new(dtype, t.shape.clone())
        }
        (Err(a_float), Err(b_float)) => {
            TensorType::new(if a_float || b_float { DType::F32 } else { DType::I64 }, Vec::new())
        }
    };
    let out = broadcast(&ab, c).map_err(|e| e.blame("condition", format!("{c}")))?;
    Ok(OpResult::one(TensorType::new(ab.dtype, out.shape)))
}

/// A comparison (`a < b`, ...), `logical_and(a, b)` or `logical_or(a, b)`: the broadcast of
/// the two shapes, bool. `b` may be a number (`x > 0`). `bitwise_and(a, b)` and
/// `bitwise_or(a, b)` need bool or integer operands and keep their promoted dtype (bool for
/// two masks).
pub(super) fn compare(op: Op, args: &Args) -> OpOutcome {
    let a = args.tensor("a")?;
    let out = match args.get("b")? {
        ArgValue::Tensor(b) => broadcast(a, b).map_err(|e| e.blame("a", format!("{a}")).blame("b", format!("{b}")))?,
        ArgValue::Float(_) | ArgValue::Int(_) => a.clone(),
        _ => return Err(error("`b` must be a tensor or a number").blame("b", "neither")),
    };
    if matches!(op, Op::BitwiseAnd | Op::BitwiseOr) {
        for name in ["a", "b"] {
            if let ArgValue::Tensor(t) = args.get(name)? {
                no_float_bits(op, t, name)?;
            }
        }
    }
    if matches!(op, Op::BitwiseAnd | Op::BitwiseOr) {
        // Bool masks give a mask; integers PyTorch's promotion of the two dtypes.
        let dtype = match args.get("b")? {
            ArgValue::Tensor(b) => a.dtype.promote(b.dtype),
            _ => a.dtype,
        };
        return Ok(OpResult::one(out.with_dtype(dtype)));
    }
    Ok(OpResult::one(out.with_dtype(DType::Bool)))
}

/// A bitwise op's operand must be bool or an integer (PyTorch has no bitwise ops on floats).
fn no_float_bits(op: Op, t: &TensorType, name: &str) -> Result<(), OpError> {
    if t.dtype.is_float() {
        let symbol = match op {
            Op::BitwiseOr => "`|`",
            Op::BitwiseNot => "`~`",
            _ => "`&`",
        };
        return Err(error(format!("{} of a floating-point tensor {t}", op.name()))
            .blame(name, format!("{t}"))
            .help(format!("{symbol} takes bool masks or integers")));
    }
    Ok(())
}

/// `bitwise_not(x)` (`~x`): `x`'s shape and dtype, bool or integer; `logical_not(x)`: `x`'s
/// shape, bool, of any dtype.
pub(super) fn negate_mask(op: Op, args: &Args) -> OpOutcome {
    let x = args.tensor("x")?;
    if op == Op::BitwiseNot {
        no_float_bits(op, x, "x")?;
        return Ok(OpResult::one(x.clone()));
    }
    Ok(OpResult::one(x.with_dtype(DType::Bool)))
}

/// `new_zeros(x, shape, dtype)`, `new_ones(...)`: a new tensor of `shape`, of `x`'s dtype
/// unless `dtype` names another.
pub(super) fn new_filled(args: &Args) -> OpOutcome {
    let x = args.tensor("x")?;
    Ok(OpResult::one(TensorType::new(args.dtype_or("dtype", x.dtype)?, args.sizes("shape")?)))
}

/// `drop_path(x, p, mode)`: `x`'s shape; `p` a probability, `mode` `"row"` or `"batch"`.
pub(super) fn drop_path(args: &Args) -> OpOutcome {
    let x = args.tensor("x")?;
    let p = args.float("p")?;
    if !(0.0..=1.0).contains(&p) {
        return Err(error(format!("drop probability must be between 0 and 1, found {p}")).blame("p", "here"));
    }
    let mode = args.str("mode")?;
    if mode != "row" && mode != "batch" {
        return Err(error(format!("unknown stochastic depth mode `{mode}`")).blame("mode", "\"row\" or \"batch\""));
    }
    if x.rank() == 0 {
        return Err(error("drop_path needs a batch dimension").blame("x", format!("{x}")));
    }
    Ok(OpResult::one(x.clone()))
}

/// `polar(abs, angle)` (torch.polar): complex numbers `abs * (cos(angle) + i sin(angle))`;
/// both float32 (complex64 out) or both float64 (complex128), their shapes broadcast.
pub(super) fn polar(args: &Args) -> OpOutcome {
    let (abs, angle) = (args.tensor("abs")?, args.tensor("angle")?);
    let blame = |e: OpError| e.blame("abs", format!("{abs}")).blame("angle", format!("{angle}"));
    let dtype = match abs.dtype.complex() {
        Some(dtype) if abs.dtype == angle.dtype => dtype,
        _ => {
            return Err(blame(error(format!(
                "polar takes two float32 or two float64 tensors, found {abs} and {angle}"
            ))));
        }
    };
    let out = broadcast(abs, angle).map_err(blame)?;
    Ok(OpResult::one(out.with_dtype(dtype)))
}
