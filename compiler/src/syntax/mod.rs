//! Syntax: the lexer, the syntax tree and the parser of `.net` files.
//!
//! `parse(file, text)` never fails: it returns the tree, the node positions and the syntax
//! errors. The tree carries no positions (see [`ast`]), so it is equal across edits of
//! whitespace and comments.

pub mod ast;
pub mod incremental;
pub mod lexer;
pub mod parser;
pub mod settings;

pub use ast::*;
pub use lexer::{Comment, Token, TokenKind};
pub use parser::{CONTEXTUAL_KEYWORDS, KEYWORDS, MAX_NESTING, Parse, parse};
