//! Room on the stack for recursions that the input drives.
//!
//! The parser's nesting and elaboration's block calls are bounded (`MAX_NESTING`,
//! `MAX_CALL_DEPTH`), but the bounds multiply: a block call inside a nested expression inside
//! a block call, 64 calls deep, needs more than the 2 MiB a thread gets by default once a
//! debug build's frames are counted. [`grow`] gives such a recursion a fresh segment before
//! the thread's stack runs out, as rustc's `ensure_sufficient_stack` does.

/// The stack a recursive step may still use before [`grow`] starts a new segment: more than
/// the deepest frames between two guarded calls (an expression's evaluation through a call's
/// binding into the callee's body) in a debug build.
const RED_ZONE: usize = 256 * 1024;

/// The size of each new segment.
const SEGMENT: usize = 4 * 1024 * 1024;

/// Runs `f`, on a new stack segment if fewer than 256 KiB of this one are left.
/// Call it at the top of each step of a recursion whose depth the input sets.
pub fn grow<R>(f: impl FnOnce() -> R) -> R {
    stacker::maybe_grow(RED_ZONE, SEGMENT, f)
}
