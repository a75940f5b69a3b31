//! The rules of ops that select, rank and encode elements by index (`topk`, `gather`,
//! `one_hot`) and make tensors from sizes (`arange`).

use super::*;

/// `topk(x, k, dim)`: the `k` largest along `dim` and their int64 indices, each `x`'s shape
/// with `k` along `dim`.
pub(super) fn topk(args: &Args) -> OpOutcome {
    let x = args.tensor("x")?;
    let d = axis(args, "dim", x.rank())?;
    let count = args.int("k")?;
    if let (Some(c), Some(size)) = (count.known(), x.shape[d].known())
        && (c < 0 || c > size)
    {
        return Err(
            error(format!("topk of {c} from a dimension of size {size}")).blame("k", format!("valid: 0 to {size}"))
        );
    }
    let mut shape = x.shape.clone();
    shape[d] = count;
    Ok(OpResult {
        outputs: vec![TensorType::new(x.dtype, shape.clone()), TensorType::new(DType::I64, shape)],
        weights: Vec::new(),
        buffers: Vec::new(),
        macs: k(0),
    })
}

/// `gather(x, dim, index)`: `index`'s shape, `x`'s dtype; `index` is int64 of `x`'s rank and
/// no larger than `x` outside `dim`.
pub(super) fn gather(args: &Args) -> OpOutcome {
    let (x, index) = (args.tensor("x")?, args.tensor("index")?);
    let d = axis(args, "dim", x.rank())?;
    if index.dtype != DType::I64 {
        return Err(error(format!("gather needs an i64 index, found {index}")).blame("index", format!("{index}")));
    }
    if index.rank() != x.rank() {
        return Err(error(format!("gather's index {index} must have the rank of {x}"))
            .blame("index", format!("{}-D", index.rank()))
            .blame("x", format!("{}-D", x.rank())));
    }
    for (i, (a, b)) in index.shape.iter().zip(&x.shape).enumerate() {
        if let (Some(a), Some(b)) = (a.known(), b.known())
            && i != d
            && a > b
        {
            return Err(error(format!("gather's index {index} is larger than {x} in dimension {i}"))
                .blame("index", format!("{index}")));
        }
    }
    Ok(OpResult::one(TensorType::new(x.dtype, index.shape.clone())))
}

/// `one_hot(x, classes)`: an integer tensor encoded as int64 with a last dimension of
/// `classes`.
pub(super) fn one_hot(args: &Args) -> OpOutcome {
    let x = args.tensor("x")?;
    if x.dtype.is_float() || x.dtype == DType::Bool {
        return Err(error(format!("one_hot encodes integer tensors, found {x}")).blame("x", format!("{x}")));
    }
    let classes = args.int("classes")?;
    at_least(args, "classes", &classes, 1)?;
    let mut shape = x.shape.clone();
    shape.push(classes);
    Ok(OpResult::one(TensorType::new(DType::I64, shape)))
}

/// `arange(n, dtype)`: `[n]`, `0..n`, of `dtype`.
pub(super) fn arange(args: &Args) -> OpOutcome {
    let n = args.int("n")?;
    if let Some(v) = n.known()
        && v < 0
    {
        return Err(error(format!("arange of a negative length {v}")).blame("n", "here"));
    }
    let dtype = args.dtype("dtype")?;
    Ok(OpResult::one(TensorType::new(dtype, vec![n])))
}

/// `torch.outer(a, b)`: two vectors `[n]` and `[m]` to `[n, m]`, every product of an element of
/// `a` with one of `b` (PyTorch computes `a.reshape(-1, 1) * b`).
pub(super) fn outer(args: &Args) -> OpOutcome {
    let (a, b) = (args.tensor("a")?, args.tensor("b")?);
    for (name, t) in [("a", a), ("b", b)] {
        if t.rank() != 1 {
            return Err(error(format!("outer takes two vectors, but `{name}` is {t}")).blame(name, "not 1-D"));
        }
    }
    Ok(OpResult::one(TensorType::new(a.dtype, vec![a.shape[0].clone(), b.shape[0].clone()])))
}

/// `sort(x, dim)`: the values along `dim` in order (`x`'s type) and their int64 indices.
pub(super) fn sort(args: &Args) -> OpOutcome {
    let x = args.tensor("x")?;
    axis(args, "dim", x.rank())?;
    Ok(OpResult {
        outputs: vec![x.clone(), TensorType::new(DType::I64, x.shape.clone())],
        weights: Vec::new(),
        buffers: Vec::new(),
        macs: k(0),
    })
}

/// Requires an integer index tensor (PyTorch's advanced indexing takes int64 or int32; a
/// bool mask would make a size that depends on the data).
fn integer_index<'a>(args: &'a Args, name: &str, op: &str) -> Result<&'a TensorType, OpError> {
    let index = args.tensor(name)?;
    if !matches!(index.dtype, DType::I64 | DType::I32) {
        return Err(error(format!("{op} needs an i64 or i32 index, found {index}"))
            .blame(name, format!("{index}"))
            .help("a bool mask selects a number of rows known only from the data"));
    }
    Ok(index)
}

/// `index(x, indices)`, `x[indices]`: the rows of `x` (along its first dimension) at each
/// index, `indices.shape + x.shape[1:]`.
pub(super) fn index(args: &Args) -> OpOutcome {
    let x = args.tensor("x")?;
    let indices = integer_index(args, "indices", "index")?;
    if x.rank() == 0 {
        return Err(error(format!("cannot index a scalar {x}")).blame("x", format!("{x}")));
    }
    let shape = indices.shape.iter().chain(&x.shape[1..]).cloned().collect();
    Ok(OpResult::one(TensorType::new(x.dtype, shape)))
}

/// `index_put(x, indices, values)`, `x[indices] = values`: `x`'s type; `values` broadcasts
/// to the rows it writes (`indices.shape + x.shape[1:]`).
pub(super) fn index_put(args: &Args) -> OpOutcome {
    let x = args.tensor("x")?;
    let indices = integer_index(args, "indices", "index_put")?;
    let values = args.tensor("values")?;
    if x.rank() == 0 {
        return Err(error(format!("cannot index a scalar {x}")).blame("x", format!("{x}")));
    }
    let rows: Vec<Dim> = indices.shape.iter().chain(&x.shape[1..]).cloned().collect();
    let written = TensorType::new(x.dtype, rows);
    let fits = broadcast(values, &written).is_ok_and(|b| {
        b.shape.len() == written.shape.len() && !b.shape.iter().zip(&written.shape).any(|(a, b)| a.certainly_differs(b))
    });
    if !fits {
        return Err(error(format!("index_put writes {written} but the values are {values}"))
            .blame("values", format!("{values}"))
            .blame("indices", format!("{indices}")));
    }
    Ok(OpResult::one(x.clone()))
}

/// `empty_like(x)`: a tensor of `x`'s type.
pub(super) fn empty_like(args: &Args) -> OpOutcome {
    Ok(OpResult::one(args.tensor("x")?.clone()))
}

/// `x`'s shape without dimension `d`, or with it of size 1 when `keepdim`.
fn reduced_shape(x: &TensorType, d: usize, keepdim: bool) -> Vec<Dim> {
    let mut shape = x.shape.clone();
    if keepdim {
        shape[d] = k(1);
    } else {
        shape.remove(d);
    }
    shape
}

/// `argmax(x, dim, keepdim)`: the int64 index of the largest element along `dim`.
pub(super) fn argmax(args: &Args) -> OpOutcome {
    let x = args.tensor("x")?;
    let d = axis(args, "dim", x.rank())?;
    Ok(OpResult::one(TensorType::new(DType::I64, reduced_shape(x, d, args.bool("keepdim")?))))
}

/// `any(x, dim, keepdim)`: whether any element along `dim` is nonzero, bool.
pub(super) fn any(args: &Args) -> OpOutcome {
    let x = args.tensor("x")?;
    let d = axis(args, "dim", x.rank())?;
    Ok(OpResult::one(TensorType::new(DType::Bool, reduced_shape(x, d, args.bool("keepdim")?))))
}

/// `full(shape, value, dtype)`: a new tensor of `shape` filled with `value`.
pub(super) fn full(args: &Args) -> OpOutcome {
    // The fill value (a number, maybe a symbolic size) changes no byte.
    Ok(OpResult::one(TensorType::new(args.dtype("dtype")?, args.sizes("shape")?)))
}

/// `full_like(x, value, dtype)`: a new tensor of `x`'s shape filled with `value`, of `x`'s
/// dtype unless `dtype` names another.
pub(super) fn full_like(args: &Args) -> OpOutcome {
    let x = args.tensor("x")?;
    Ok(OpResult::one(TensorType::new(args.dtype_or("dtype", x.dtype)?, x.shape.clone())))
}

/// `stack(xs, dim)`: tensors of one shape joined along a new dimension `dim`.
pub(super) fn stack(args: &Args) -> OpOutcome {
    let xs = args.tensors("xs")?;
    let first = xs.first().ok_or_else(|| error("stack needs at least one tensor").blame("xs", "empty"))?;
    let d = axis(args, "dim", first.rank() + 1)?;
    for x in xs {
        if x.dtype != first.dtype
            || x.rank() != first.rank()
            || x.shape.iter().zip(&first.shape).any(|(a, b)| a.certainly_differs(b))
        {
            return Err(error(format!("stack needs tensors of one type, found {first} and {x}")).blame("xs", "here"));
        }
    }
    let mut shape = first.shape.clone();
    shape.insert(d, k(xs.len() as i128));
    Ok(OpResult::one(TensorType::new(first.dtype, shape)))
}

/// `scatter(x, dim, index, src)`: `x` with `src`'s elements written at `index` along `dim`
/// (`Tensor.scatter_`). Modelled for integer tensors (slot and token maps), which get no
/// gradient.
pub(super) fn scatter(args: &Args) -> OpOutcome {
    let x = args.tensor("x")?;
    axis(args, "dim", x.rank())?;
    let index = args.tensor("index")?;
    if index.dtype != DType::I64 {
        return Err(error(format!("scatter needs an i64 index, found {index}")).blame("index", format!("{index}")));
    }
    if index.rank() != x.rank() {
        return Err(error(format!("scatter's index {index} must have the rank of {x}"))
            .blame("index", format!("{}-D", index.rank())));
    }
    // A number written into any tensor (`scatter_(dim, index, 1)`); a tensor source only
    // between integer tensors, whose scatter has no gradient to model.
    if let ArgValue::Tensor(src) = args.get("src")? {
        if x.dtype.is_float() || src.dtype != x.dtype {
            return Err(error(format!(
                "scatter of a tensor is modelled for integer tensors of one dtype, found {x} and {src}"
            ))
            .blame("x", format!("{x}"))
            .help("a floating-point source's gradient is not modelled; a number may be written into any tensor"));
        }
        if src.rank() != x.rank() {
            return Err(error(format!("scatter's source {src} must have the rank of {x}"))
                .blame("src", format!("{}-D", src.rank())));
        }
    }
    Ok(OpResult::one(x.clone()))
}

/// `index_select(x, dim, index)`: the slices of `x` along `dim` at each index of a 1-D
/// integer `index`, which becomes that dimension.
pub(super) fn index_select(args: &Args) -> OpOutcome {
    let x = args.tensor("x")?;
    let d = axis(args, "dim", x.rank())?;
    let index = integer_index(args, "index", "index_select")?;
    if index.rank() != 1 {
        return Err(error(format!("index_select takes a 1-D index, found {index}")).blame("index", format!("{index}")));
    }
    let mut shape = x.shape.clone();
    shape[d] = index.shape[0].clone();
    Ok(OpResult::one(TensorType::new(x.dtype, shape)))
}
