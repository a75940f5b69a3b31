//! Where each tensor's elements lie in its storage: its strides, as PyTorch computes them.
//! A reshape is a view when PyTorch can express the new shape with strides over the same
//! storage (`at::detail::computeStride`), and a copy otherwise; `matmul` copies a batched
//! operand it cannot fold into `bmm`'s three dimensions. Both depend on the strides a tensor
//! inherited: a transpose swaps them, a slice keeps them, an elementwise op lays its output
//! out in its input's dimension order (TensorIterator), the efficient attention kernel
//! returns `[N, T, H, D]` memory seen as `[N, H, T, D]` and the other fused kernels lay their
//! output out like q.
//!
//! Strides are in elements. A tensor with a dimension that is not known has no strides
//! here: it is taken to be contiguous, as every tensor was before this module existed.

use crate::graph::{Graph, Node, TensorId};
use crate::op::Op;
use crate::shapes::ops::ArgValue;

/// How an op lays out an output it allocates (a view's layout follows from its input).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputLayout {
    /// Row-major.
    Contiguous,
    /// Gap-free, in the dimension order TensorIterator picks from the op's operands
    /// ([`elementwise_strides`]: its elementwise ops).
    LikeInput,
    /// `[N, T, H, D]` memory seen as `[N, H, T, D]` (the efficient attention kernel).
    HeadsInterleaved,
    /// `einsum`'s: its `bmm` result, `[batch, left, right]`, viewed and permuted back to the
    /// output's subscripts ([`einsum_plan`]).
    Einsum,
}

/// The strides of every tensor of a graph, by tensor id (`None`: contiguous, or a shape with
/// an unknown dimension).
#[derive(Debug, Clone, Default)]
pub struct Layouts {
    strides: Vec<Option<Vec<i128>>>,
}

impl Layouts {
    /// Every tensor contiguous (before any op has run).
    pub fn new(graph: &Graph) -> Layouts {
        Layouts { strides: vec![None; graph.tensors.len()] }
    }

    /// The strides of `t`, or `None` when its shape has an unknown dimension.
    pub fn strides(&self, graph: &Graph, t: TensorId) -> Option<Vec<i128>> {
        let shape = known_shape(graph, t)?;
        Some(self.strides[t.0 as usize].clone().unwrap_or_else(|| contiguous(&shape)))
    }

    /// The shape and strides of `t`, when its shape is known.
    pub fn shape_and_strides(&self, graph: &Graph, t: TensorId) -> Option<(Vec<i128>, Vec<i128>)> {
        Some((known_shape(graph, t)?, self.strides(graph, t)?))
    }

    /// Whether `t` is laid out row-major without gaps.
    pub fn is_contiguous(&self, graph: &Graph, t: TensorId) -> bool {
        match (known_shape(graph, t), self.strides[t.0 as usize].as_ref()) {
            (Some(shape), Some(strides)) => is_contiguous(&shape, strides),
            _ => true,
        }
    }

    /// Whether `reshape`/`flatten` node `node` (run with its input laid out as recorded) must
    /// copy: PyTorch's `reshape` is a view exactly when `computeStride` finds strides.
    pub fn reshape_copies(&self, graph: &Graph, node: &Node) -> bool {
        let (Some(&input), Some(&output)) = (node.inputs.first(), node.outputs.first()) else { return false };
        match (self.strides(graph, input), known_shape(graph, input), known_shape(graph, output)) {
            (Some(strides), Some(old), Some(new)) => view_strides(&old, &strides, &new).is_none(),
            _ => false,
        }
    }

    /// Records the strides of `node`'s outputs. `view` tells whether its outputs share its
    /// first input's storage (a view or an in-place result), `copies` whether a reshape
    /// copied instead, `made` how the op lays out an output it allocates.
    pub fn record(&mut self, graph: &Graph, node: &Node, view: bool, copies: bool, made: OutputLayout) {
        let input = node.inputs.first().copied();
        let input_strides = input.and_then(|t| self.strides(graph, t));
        for &out in node.outputs.iter() {
            let shape = known_shape(graph, out);
            let strides = match (input_strides.as_ref(), shape.as_ref()) {
                // An elementwise op lays its output out as TensorIterator orders the
                // dimensions of all its operands, not its first operand's alone.
                (Some(_), Some(shape)) if made == OutputLayout::LikeInput && !view => {
                    let operands: Vec<_> =
                        node.inputs.iter().filter_map(|&t| self.shape_and_strides(graph, t)).collect();
                    Some(elementwise_strides(&operands, shape))
                }
                (Some(strides), Some(shape)) => output_strides(graph, node, view && !copies, made, strides, shape),
                _ => None,
            };
            // Contiguous strides are recorded as `None`, so that unknown and plain agree.
            self.strides[out.0 as usize] =
                strides.filter(|s| shape.as_ref().is_none_or(|shape| !is_contiguous(shape, s)));
        }
    }
}

/// The strides of an output of `node` whose shape is `shape`, given its first input's.
fn output_strides(
    graph: &Graph,
    node: &Node,
    view: bool,
    made: OutputLayout,
    input: &[i128],
    shape: &[i128],
) -> Option<Vec<i128>> {
    let rank = input.len();
    let dim = |name: &str| match node.args.values.get(name) {
        Some(ArgValue::Int(d)) => d.known().map(|d| if d < 0 { d + rank as i128 } else { d } as usize),
        _ => None,
    };
    match node.op {
        Op::Transpose if view => {
            let (a, b) = (dim("a")?, dim("b")?);
            let mut strides = input.to_vec();
            (a < rank && b < rank).then(|| strides.swap(a, b))?;
            Some(strides)
        }
        Op::Permute if view => match node.args.values.get("dims") {
            Some(ArgValue::Ints(dims)) => dims
                .iter()
                .map(|d| d.known().map(|d| if d < 0 { d + rank as i128 } else { d } as usize))
                .map(|d| d.and_then(|d| input.get(d).copied()))
                .collect(),
            _ => None,
        },
        Op::Slice if view => {
            let mut strides = input.to_vec();
            let step = match node.args.values.get("step") {
                Some(ArgValue::Int(s)) => s.known()?,
                _ => 1,
            };
            let stride = strides.get_mut(dim("dim")?)?;
            *stride = stride.saturating_mul(step);
            Some(strides)
        }
        Op::Split | Op::SplitSizes | Op::Narrow if view => Some(input.to_vec()),
        // The pairs' stride-1 dimension goes; the other strides count complex elements,
        // two floats each (`view_as_complex` requires them even).
        Op::ViewAsComplex if view => {
            let (_, outer) = input.split_last()?;
            Some(outer.iter().map(|s| s / 2).collect())
        }
        Op::ViewAsReal if view => Some(input.iter().map(|s| s.saturating_mul(2)).chain([1]).collect()),
        Op::Select if view => {
            let mut strides = input.to_vec();
            let d = dim("dim")?;
            (d < strides.len()).then(|| strides.remove(d))?;
            Some(strides)
        }
        // New leading dimensions, and dimensions of size 1 repeated, have stride 0.
        Op::Expand if view => {
            let old = node.inputs.first().and_then(|&t| known_shape(graph, t))?;
            let lead = shape.len().checked_sub(old.len())?;
            Some(
                (0..shape.len())
                    .map(|i| match i.checked_sub(lead) {
                        Some(j) if old[j] == shape[i] => input[j],
                        _ => 0,
                    })
                    .collect(),
            )
        }
        Op::Flatten | Op::Reshape | Op::Unsqueeze | Op::Squeeze if view => {
            let old = node.inputs.first().and_then(|&t| known_shape(graph, t))?;
            view_strides(&old, input, shape)
        }
        // A one-operand `einsum` that sums nothing permutes its operand's dimensions.
        Op::Einsum if view => {
            let Some(ArgValue::Str(equation)) = node.args.values.get("equation") else { return None };
            let operand = graph.tensor(*node.inputs.first()?);
            let contraction = crate::shapes::ops::einsum::parse(equation, &[operand]).ok()?;
            let labels = &contraction.operands[0];
            contraction.output.iter().map(|l| labels.iter().position(|x| x == l).map(|d| input[d])).collect()
        }
        // An in-place op's result is its input.
        _ if view => Some(input.to_vec()),
        _ => match made {
            OutputLayout::Contiguous => None,
            OutputLayout::LikeInput => (input.len() == shape.len()).then(|| dense_like(input, shape)),
            OutputLayout::Einsum => einsum_plan(graph, node, None).map(|plan| plan.output_strides),
            OutputLayout::HeadsInterleaved => match *shape {
                [_, h, t, d] => Some(vec![t.saturating_mul(h).saturating_mul(d), d, h.saturating_mul(d), 1]),
                _ => None,
            },
        },
    }
}

/// How `at::einsum` runs a node of two operands: whether `sumproduct_pair`'s reshape of each
/// operand to `[batch, own, summed]` copies it, the elements of an operand summed over a
/// subscript only it has before the product (a new tensor), and the output's strides.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EinsumPlan {
    /// Per operand: its reshape for `bmm` copies it.
    pub copies: [bool; 2],
    /// Per operand: the elements of its pre-summed form, when it has one.
    pub pre_summed: [Option<i128>; 2],
    /// The output's strides.
    pub output_strides: Vec<i128>,
    /// Whether a subscript is summed over by the product: else `at::einsum` multiplies
    /// (`mul`), with no `bmm`.
    pub contracts: bool,
}

/// The [`EinsumPlan`] of an `einsum` node of two operands with known shapes; `layouts` gives
/// the operands' strides (`None`: only the output's strides are wanted).
pub fn einsum_plan(graph: &Graph, node: &Node, layouts: Option<&Layouts>) -> Option<EinsumPlan> {
    use crate::shapes::ops::einsum::{Role, parse};
    let Some(ArgValue::Str(equation)) = node.args.values.get("equation") else { return None };
    let [a, b] = node.inputs[..] else { return None };
    let contraction = parse(equation, &[graph.tensor(a), graph.tensor(b)]).ok()?;
    let shapes = [known_shape(graph, a)?, known_shape(graph, b)?];
    let roles = contraction.roles();
    let size = |label: usize| contraction.sizes.get(&label).and_then(|d| d.known());
    let of = |role: Role| roles.iter().filter(move |(_, r)| *r == role).map(|(l, _)| *l);
    let contracts = roles.iter().any(|(_, r)| *r == Role::Summed);
    let mut plan = EinsumPlan { copies: [false; 2], pre_summed: [None; 2], output_strides: Vec::new(), contracts };
    // The result: `[batch, left, 1 per summed, right]` row-major, seen in the output's order.
    let result: Vec<usize> = of(Role::Batch).chain(of(Role::Left)).chain(of(Role::Right)).collect();
    let sizes: Vec<i128> = result.iter().map(|&l| size(l)).collect::<Option<_>>()?;
    let strides = contiguous(&sizes);
    plan.output_strides = contraction
        .output
        .iter()
        .map(|l| result.iter().position(|r| r == l).map(|i| strides[i]))
        .collect::<Option<_>>()?;
    let Some(layouts) = layouts else { return Some(plan) };
    for (i, t) in [a, b].into_iter().enumerate() {
        let labels = &contraction.operands[i];
        let own = if i == 0 { Role::Left } else { Role::Right };
        let other = if i == 0 { Role::Right } else { Role::Left };
        let summed_away: Vec<usize> = of(Role::PreSummed)
            .filter(|l| labels.iter().position(|x| x == l).is_some_and(|d| shapes[i][d] != 1))
            .collect();
        if !summed_away.is_empty() {
            let kept = labels.iter().zip(&shapes[i]).filter(|(l, _)| !summed_away.contains(l)).map(|(_, &d)| d);
            plan.pre_summed[i] = Some(kept.product());
            continue;
        }
        // The operand's dimensions in `bmm`'s order; subscripts it lacks have size 1.
        // `[batch, left, summed, right]` for the first operand, `[batch, summed, right, left]`
        // for the second (`lpermutation` and `rpermutation`).
        let order: Vec<usize> = if i == 0 {
            of(Role::Batch).chain(of(own)).chain(of(Role::Summed)).chain(of(other)).collect()
        } else {
            of(Role::Batch).chain(of(Role::Summed)).chain(of(own)).chain(of(other)).collect()
        };
        let own_strides = layouts.strides(graph, t)?;
        let (mut shape, mut stride) = (Vec::new(), Vec::new());
        for l in &order {
            match labels.iter().position(|x| x == l) {
                Some(d) => {
                    shape.push(shapes[i][d]);
                    stride.push(own_strides[d]);
                }
                None => {
                    shape.push(1);
                    stride.push(1);
                }
            }
        }
        let product = |role: Role| -> Option<i128> { of(role).map(size).try_fold(1i128, |p, s| Some(p * s?)) };
        let three = if i == 0 {
            [product(Role::Batch)?, product(own)?, product(Role::Summed)?]
        } else {
            [product(Role::Batch)?, product(Role::Summed)?, product(own)?]
        };
        // Sizes of `other`'s subscripts are 1 here, so `bmm`'s shape covers every element.
        plan.copies[i] = view_strides(&shape, &stride, &three).is_none();
    }
    Some(plan)
}

/// Row-major strides of `shape`.
pub fn contiguous(shape: &[i128]) -> Vec<i128> {
    let mut strides = vec![1i128; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        strides[i] = strides[i + 1].saturating_mul(shape[i + 1].max(1));
    }
    strides
}

/// Whether `strides` are the row-major strides of `shape` (size-1 dimensions may have any).
pub fn is_contiguous(shape: &[i128], strides: &[i128]) -> bool {
    let mut expected = 1;
    for (&size, &stride) in shape.iter().zip(strides).rev() {
        if size != 1 && stride != expected {
            return false;
        }
        expected = expected.saturating_mul(size);
    }
    true
}

/// Gap-free strides for the output of an elementwise op of `shape` over `operands` (each a
/// shape and strides), in the dimension order TensorIterator gives it
/// (`TensorIteratorBase::reorder_dimensions`): the dimensions sorted innermost first by an
/// insertion sort from the last one, where two dimensions are compared by the first operand
/// that has neither broadcast (stride 0 after broadcasting), the smaller stride inner, and on
/// equal strides the larger size outer. So `weight * h`, a `[D]` weight over a transposed `h`,
/// takes `h`'s order: the weight broadcasts over every dimension it would decide.
pub fn elementwise_strides(operands: &[(Vec<i128>, Vec<i128>)], shape: &[i128]) -> Vec<i128> {
    let rank = shape.len();
    // Each operand's strides over the output's dimensions: 0 where it broadcasts.
    let broadcast: Vec<Vec<i128>> = operands
        .iter()
        .filter(|(s, st)| s.len() <= rank && s.len() == st.len())
        .map(|(own, strides)| {
            let lead = rank - own.len();
            (0..rank)
                .map(|i| match i.checked_sub(lead) {
                    Some(j) if !(own[j] == 1 && shape[i] != 1) => strides[j],
                    _ => 0,
                })
                .collect()
        })
        .collect();
    let should_swap = |d0: usize, d1: usize| -> std::cmp::Ordering {
        use std::cmp::Ordering::*;
        for strides in &broadcast {
            let (s0, s1) = (strides[d0], strides[d1]);
            if s0 == 0 || s1 == 0 {
                continue;
            }
            if s0 != s1 {
                return s0.cmp(&s1);
            }
            if shape[d0] > shape[d1] {
                return Greater;
            }
        }
        Equal
    };
    // Innermost first, starting from the last dimension.
    let mut perm: Vec<usize> = (0..rank).rev().collect();
    for i in 1..rank {
        let mut d1 = i;
        for d0 in (0..i).rev() {
            match should_swap(perm[d0], perm[d1]) {
                std::cmp::Ordering::Greater => {
                    perm.swap(d0, d1);
                    d1 = d0;
                }
                std::cmp::Ordering::Less => break,
                std::cmp::Ordering::Equal => {}
            }
        }
    }
    let mut strides = vec![0; rank];
    let mut next = 1i128;
    for d in perm {
        strides[d] = next;
        next = next.saturating_mul(shape[d].max(1));
    }
    strides
}

/// Gap-free strides for `shape` that order the dimensions as `like` orders them (outermost:
/// largest stride; ties keep the dimension order), as TensorIterator allocates an output.
pub fn dense_like(like: &[i128], shape: &[i128]) -> Vec<i128> {
    let mut order: Vec<usize> = (0..shape.len()).collect();
    // Innermost first: smallest stride first, later dimension first on ties.
    order.sort_by(|&a, &b| like[a].cmp(&like[b]).then(b.cmp(&a)));
    let mut strides = vec![0; shape.len()];
    let mut next = 1i128;
    for d in order {
        strides[d] = next;
        next = next.saturating_mul(shape[d].max(1));
    }
    strides
}

/// The strides under which a tensor of `old` shape and `strides` can be seen as `new`
/// without a copy, or `None` when it cannot (`computeStride` in ATen's TensorUtils.cpp):
/// the old dimensions split into chunks that are each contiguous, and every chunk must be
/// the product of a run of new dimensions.
pub fn view_strides(old: &[i128], strides: &[i128], new: &[i128]) -> Option<Vec<i128>> {
    if old.contains(&0) || old.is_empty() {
        return Some(contiguous(new));
    }
    let mut new_strides = vec![0; new.len()];
    let mut view_d = new.len() as isize - 1;
    let mut chunk_base_stride = *strides.last()?;
    let (mut tensor_numel, mut view_numel) = (1i128, 1i128);
    for tensor_d in (0..old.len()).rev() {
        tensor_numel = tensor_numel.saturating_mul(old[tensor_d]);
        let chunk_ends = tensor_d == 0
            || (old[tensor_d - 1] != 1 && strides[tensor_d - 1] != tensor_numel.saturating_mul(chunk_base_stride));
        if chunk_ends {
            while view_d >= 0 && (view_numel < tensor_numel || new[view_d as usize] == 1) {
                new_strides[view_d as usize] = view_numel.saturating_mul(chunk_base_stride);
                view_numel = view_numel.saturating_mul(new[view_d as usize]);
                view_d -= 1;
            }
            if view_numel != tensor_numel {
                return None;
            }
            if tensor_d > 0 {
                chunk_base_stride = strides[tensor_d - 1];
                tensor_numel = 1;
                view_numel = 1;
            }
        }
    }
    (view_d == -1).then_some(new_strides)
}

/// Whether the first `count` dimensions of a tensor of `shape` and `strides` merge into one
/// without a copy: `reshape` to `[product of those, the rest...]` is a view. This is how
/// `matmul` folds a batched operand for `bmm` (or `mm`), copying one that does not fold.
pub fn merges_leading(shape: &[i128], strides: &[i128], count: usize) -> bool {
    if count > shape.len() {
        return false;
    }
    let merged = shape[..count].iter().fold(1i128, |p, &d| p.saturating_mul(d));
    let folded: Vec<i128> = std::iter::once(merged).chain(shape[count..].iter().copied()).collect();
    view_strides(shape, strides, &folded).is_some()
}

/// The shape of `t`, when every dimension is known.
pub fn known_shape(graph: &Graph, t: TensorId) -> Option<Vec<i128>> {
    graph.tensor(t).shape.iter().map(|d| d.known()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn view_strides_follow_computestride() {
        // [N, T, H, D] = [4, 100, 4, 64] transposed to [N, H, T, D]: folding N and H is a copy,
        // folding T and D is not possible either, but swapping back and merging H, D is a view.
        let transposed = [25_600, 64, 256, 1];
        assert_eq!(view_strides(&[4, 4, 100, 64], &transposed, &[16, 100, 64]), None);
        assert_eq!(
            view_strides(&[4, 100, 4, 64], &contiguous(&[4, 100, 4, 64]), &[4, 100, 256]),
            Some(vec![25_600, 256, 1])
        );
        // A fused attention output transposed back to [N, T, H, D] is contiguous: a view.
        assert_eq!(view_strides(&[4, 100, 4, 64], &[25_600, 256, 64, 1], &[4, 100, 256]), Some(vec![25_600, 256, 1]));
        // Row-major [N, H, T, D] transposed to [N, T, H, D] and merged: a copy.
        assert_eq!(view_strides(&[4, 100, 4, 64], &[25_600, 64, 6_400, 1], &[4, 100, 256]), None);
        // Size-1 dimensions never break a view.
        assert_eq!(view_strides(&[1, 8], &[3, 1], &[8]), Some(vec![1]));
        // `unsqueeze` and `squeeze` of a transposed tensor stay views and keep it transposed
        // (a later reshape to `[2, 32]` copies).
        let unsqueezed = view_strides(&[2, 8, 4], &[32, 1, 8], &[2, 1, 8, 4]).expect("a view");
        assert!(!is_contiguous(&[2, 1, 8, 4], &unsqueezed));
        assert_eq!(view_strides(&[2, 1, 8, 4], &unsqueezed, &[2, 8, 4]), Some(vec![32, 1, 8]));
        assert_eq!(view_strides(&[2, 1, 8, 4], &unsqueezed, &[2, 32]), None);
    }

    /// TensorIterator orders an elementwise output by its operands in turn, skipping one
    /// that broadcasts over the dimensions compared: a `[D]` weight times a transposed
    /// `[N, H, S, D]` view (Apertus's `q_norm` after the transpose) is laid out as the view,
    /// `[N, S, H, D]` memory; two contiguous operands give a contiguous result; and the first
    /// operand decides where both have a say.
    #[test]
    fn elementwise_outputs_follow_tensor_iterators_order() {
        let transposed = (vec![4, 16, 2048, 64], vec![2048 * 16 * 64, 64, 16 * 64, 1]);
        let weight = (vec![64], vec![1]);
        let shape = [4, 16, 2048, 64];
        assert_eq!(elementwise_strides(&[weight.clone(), transposed.clone()], &shape), transposed.1);
        assert_eq!(elementwise_strides(&[transposed.clone(), weight], &shape), transposed.1);
        let plain = (shape.to_vec(), contiguous(&shape));
        assert_eq!(elementwise_strides(&[plain.clone(), plain.clone()], &shape), plain.1);
        assert_eq!(elementwise_strides(&[plain.clone(), transposed.clone()], &shape), plain.1);
        assert_eq!(elementwise_strides(&[transposed.clone(), plain], &shape), transposed.1);
    }

    #[test]
    fn dense_like_keeps_the_dimension_order() {
        assert_eq!(dense_like(&[25_600, 64, 256, 1], &[4, 4, 100, 64]), vec![25_600, 64, 256, 1]);
        // A slice's gaps are closed: [4, 100, 768] sliced to 256 columns.
        assert_eq!(dense_like(&[76_800, 768, 1], &[4, 100, 256]), vec![25_600, 256, 1]);
        assert!(is_contiguous(&[4, 100, 256], &dense_like(&[76_800, 768, 1], &[4, 100, 256])));
    }
}
