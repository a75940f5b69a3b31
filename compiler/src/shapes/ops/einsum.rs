//! `einsum(equation, [a, b])`, as `at::einsum` (aten/src/ATen/native/Linear.cpp) runs it: the
//! equation parsed into labels, every operand aligned to one order of labels (the output's
//! first, then the summed ones in label order), and, for two operands, `sumproduct_pair`:
//! each operand permuted to `[batch, own, summed]` and reshaped to three dimensions for one
//! `bmm`, whose result is viewed back and permuted to the output. The memory model
//! (`costs::autograd`) reads [`Contraction`] to tell which reshapes copy.

use std::collections::BTreeMap;

use super::*;

/// A label's index: `A`-`Z` are 0-25 and `a`-`z` 26-51, as PyTorch orders them; the
/// dimensions an ellipsis covers are 52 onwards (from the left of the broadcast ellipsis).
type Label = usize;

const ELLIPSIS: Label = 52;

/// A parsed equation, with the operands' shapes.
#[derive(Debug, Clone)]
pub struct Contraction {
    /// Each operand's label per dimension.
    pub operands: Vec<Vec<Label>>,
    /// The output's labels, in order.
    pub output: Vec<Label>,
    /// Every label's size (the broadcast of its sizes), by label.
    pub sizes: BTreeMap<Label, Dim>,
    /// Each operand's dimensions.
    pub shapes: Vec<Vec<Dim>>,
}

/// How a label of a two-operand contraction is handled by `sumproduct_pair`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// In both operands and in the output: `bmm`'s batch.
    Batch,
    /// In the first operand only (and the output).
    Left,
    /// In the second operand only (and the output), or of size 1 in both.
    Right,
    /// In both operands, not in the output: `bmm`'s inner dimension.
    Summed,
    /// In one operand only and not in the output: summed out before the product.
    PreSummed,
}

impl Contraction {
    /// Every label in `at::einsum`'s order: the output's, then the others by label.
    pub fn order(&self) -> Vec<Label> {
        let mut order = self.output.clone();
        for label in self.sizes.keys() {
            if !order.contains(label) {
                order.push(*label);
            }
        }
        order
    }

    /// Whether operand `i` has `label` with a size other than 1.
    pub fn has(&self, i: usize, label: Label) -> bool {
        self.operands[i].iter().position(|&l| l == label).is_some_and(|d| self.shapes[i][d] != k(1))
    }

    /// The role of each label of [`Contraction::order`], for two operands.
    pub fn roles(&self) -> Vec<(Label, Role)> {
        self.order()
            .into_iter()
            .map(|label| {
                let (l, r) = (self.has(0, label), self.has(1, label));
                let role = match (self.output.contains(&label), l, r) {
                    (false, true, true) => Role::Summed,
                    (false, _, _) => Role::PreSummed,
                    (true, true, true) => Role::Batch,
                    (true, true, false) => Role::Left,
                    (true, false, _) => Role::Right,
                };
                (label, role)
            })
            .collect()
    }
}

/// The subscript character of a label (`.` for the dimensions of an ellipsis).
fn subscript(label: Label) -> char {
    match label {
        0..=25 => (b'A' + label as u8) as char,
        26..=51 => (b'a' + (label - 26) as u8) as char,
        _ => '.',
    }
}

/// The label of a subscript character.
fn label_of(c: char) -> Option<Label> {
    match c {
        'A'..='Z' => Some(c as usize - 'A' as usize),
        'a'..='z' => Some(c as usize - 'a' as usize + 26),
        _ => None,
    }
}

/// One operand's subscripts (`bhqd`, `...ij`) as labels for a tensor of `rank` dimensions;
/// `ellipsis` is how many dimensions the equation's ellipsis covers at most (right-aligned).
fn subscripts(text: &str, rank: usize, what: &str) -> Result<(Vec<Label>, Option<usize>), String> {
    let (before, after, has_ellipsis) = match text.split_once("...") {
        Some((b, a)) => (b, a, true),
        None => (text, "", false),
    };
    let letters = |part: &str| -> Result<Vec<Label>, String> {
        part.chars()
            .filter(|c| !c.is_whitespace())
            .map(|c| label_of(c).ok_or_else(|| format!("`{c}` in {what} is not a letter or `...`")))
            .collect()
    };
    let (head, tail) = (letters(before)?, letters(after)?);
    if after.contains("...") {
        return Err(format!("{what} has more than one `...`"));
    }
    let named = head.len() + tail.len();
    let covered = match (has_ellipsis, rank.checked_sub(named)) {
        (_, None) | (false, Some(1..)) => {
            return Err(format!("{what} name {named} dimensions, but the operand has {rank}"));
        }
        (false, Some(_)) => None,
        (true, Some(n)) => Some(n),
    };
    let mut labels = head;
    // Shifted right once the widest ellipsis is known (they align to the right).
    labels.extend((0..covered.unwrap_or(0)).map(|j| ELLIPSIS + j));
    labels.extend(tail);
    Ok((labels, covered))
}

/// Parses `equation` for operands of `shapes`, checking what `at::einsum` checks.
pub fn parse(equation: &str, shapes: &[&TensorType]) -> Result<Contraction, OpError> {
    let blame = |message: String| error(message).blame("equation", "the subscripts");
    let (lhs, rhs) = match equation.split_once("->") {
        Some((l, r)) => (l, Some(r)),
        None => (equation, None),
    };
    let parts: Vec<&str> = lhs.split(',').collect();
    if parts.len() != shapes.len() {
        return Err(blame(format!(
            "the equation has subscripts for {} operand{}, but {} are given",
            parts.len(),
            if parts.len() == 1 { "" } else { "s" },
            shapes.len()
        ))
        .blame("xs", format!("{} tensors", shapes.len())));
    }
    let mut operands = Vec::new();
    let mut widest = 0;
    for (i, (part, t)) in parts.iter().zip(shapes).enumerate() {
        let (labels, covered) = subscripts(part, t.rank(), &format!("operand {i}'s subscripts `{}`", part.trim()))
            .map_err(|m| blame(m).blame("xs", format!("{t}")))?;
        let covered = covered.unwrap_or(0);
        widest = widest.max(covered);
        operands.push((labels, covered));
    }
    let operands: Vec<Vec<Label>> = operands
        .into_iter()
        .map(|(labels, covered)| {
            labels.into_iter().map(|l| if l >= ELLIPSIS { l + (widest - covered) } else { l }).collect()
        })
        .collect();
    for (i, labels) in operands.iter().enumerate() {
        let mut seen = Vec::new();
        for &l in labels.iter().filter(|&&l| l < ELLIPSIS) {
            if seen.contains(&l) {
                return Err(blame(format!(
                    "operand {i} repeats a subscript (a diagonal): netc has no rule for einsum's diagonals"
                ))
                .help("take the diagonal with other ops, or declare the op with `kernel(...)`"));
            }
            seen.push(l);
        }
    }
    let mut sizes: BTreeMap<Label, Dim> = BTreeMap::new();
    for (i, (labels, t)) in operands.iter().zip(shapes).enumerate() {
        for (&label, size) in labels.iter().zip(&t.shape) {
            let entry = sizes.entry(label).or_insert_with(|| size.clone());
            if *entry == k(1) {
                *entry = size.clone();
            } else if *size != k(1) && entry.certainly_differs(size) {
                return Err(blame(format!(
                    "subscript `{}` is {entry} in one operand and {size} in operand {i}: einsum needs equal sizes (or 1)",
                    subscript(label)
                ))
                .blame("xs", format!("{t}")));
            }
        }
    }
    let ellipsis: Vec<Label> = (ELLIPSIS..ELLIPSIS + widest).collect();
    let output = match rhs {
        Some(rhs) => {
            let (head, tail, covered) = match rhs.split_once("...") {
                Some((h, t)) => (h, t, true),
                None => (rhs, "", false),
            };
            let mut out = Vec::new();
            for part in [head, "...", tail] {
                if part == "..." {
                    if covered {
                        out.extend(ellipsis.iter().copied());
                    }
                    continue;
                }
                for c in part.chars().filter(|c| !c.is_whitespace()) {
                    let l =
                        label_of(c).ok_or_else(|| blame(format!("`{c}` in the output is not a letter or `...`")))?;
                    if out.contains(&l) {
                        return Err(blame(format!("the output repeats the subscript `{c}`")));
                    }
                    if !sizes.contains_key(&l) {
                        return Err(blame(format!("the output's subscript `{c}` is in no operand")));
                    }
                    out.push(l);
                }
            }
            if !covered && !ellipsis.is_empty() {
                return Err(blame("the output must keep the operands' `...` dimensions".to_string()));
            }
            out
        }
        // Implicit output: the ellipsis, then every subscript used once, in label order.
        None => {
            let once = sizes.keys().copied().filter(|&l| {
                l < ELLIPSIS && operands.iter().map(|ls| ls.iter().filter(|&&x| x == l).count()).sum::<usize>() == 1
            });
            ellipsis.iter().copied().chain(once).collect()
        }
    };
    let shapes = shapes.iter().map(|t| t.shape.clone()).collect();
    Ok(Contraction { operands, output, sizes, shapes })
}

/// `einsum(equation, xs)`: one or two operands (PyTorch contracts more left to right, which
/// is several calls here), of one dtype. MACs are `bmm`'s for two operands with a summed
/// subscript (the product of every size but those summed out beforehand); none otherwise
/// (`mul` makes an outer product, `sum` a one-operand contraction).
pub(super) fn einsum(args: &Args) -> OpOutcome {
    let xs = args.tensors("xs")?;
    let equation = args.str("equation")?;
    if xs.is_empty() || xs.len() > 2 {
        return Err(error(format!("einsum here takes one or two operands, found {}", xs.len()))
            .blame("xs", format!("{} tensors", xs.len()))
            .help("contract two at a time, as PyTorch does left to right: einsum(\"ij,jk->ik\", [einsum(..., [a, b]), c])"));
    }
    if let Some(other) = xs.iter().find(|t| t.dtype != xs[0].dtype) {
        return Err(error(format!("einsum's operands have different dtypes: {} and {other}", xs[0]))
            .blame("xs", "one dtype for all"));
    }
    let refs: Vec<&TensorType> = xs.iter().collect();
    let contraction = parse(equation, &refs)?;
    let shape: Vec<Dim> = contraction.output.iter().map(|l| contraction.sizes[l].clone()).collect();
    // `bmm` runs when a subscript is summed by the product; its MACs are every size but
    // those summed out beforehand.
    let roles = if xs.len() == 2 { contraction.roles() } else { Vec::new() };
    let macs = if roles.iter().any(|(_, r)| *r == Role::Summed) {
        roles
            .iter()
            .filter(|(_, r)| *r != Role::PreSummed)
            .try_fold(k(1), |acc, (l, _)| acc.mul(&contraction.sizes[l]))
            .ok()?
    } else {
        k(0)
    };
    Ok(OpResult { outputs: vec![TensorType::new(xs[0].dtype, shape)], weights: Vec::new(), buffers: Vec::new(), macs })
}
