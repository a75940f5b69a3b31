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
