; Generated from editors/tree-sitter-net/queries/highlights.scm for Neovim by
; editors/tree-sitter-net/editor_queries.py: edit that file and run this script.

(identifier) @variable

; A `##` comment documents the item below it (spec/language.md, section 2.3).
((comment) @comment
  (#not-match? @comment "^##"))
((comment) @comment.documentation
  (#match? @comment.documentation "^##"))

[
  "use"
  "op"
  "block"
  "model"
  "train"
  "infer"
  "input"
  "buffer"
] @keyword

[
  "if"
  "else"
] @keyword.conditional

[
  "for"
  "in"
  "repeat"
] @keyword.repeat

"return" @keyword.return

[
  "and"
  "or"
  "not"
] @keyword.operator

(setting_key) @property

(string) @string
(integer) @number
(float) @number.float
(boolean) @boolean
(unit) @type.builtin

(type
  name: (identifier) @type)

(block
  name: (identifier) @function)
(model
  name: (identifier) @function)
(op
  name: (identifier) @function)
(scenario
  name: (identifier) @label)
(outputs
  (identifier) @type)

(call
  function: (identifier) @function.call)

(parameter
  name: (identifier) @variable.parameter)
(keyword_argument
  name: (identifier) @variable.parameter)

(field_expression
  field: (identifier) @property)

(module_path
  (identifier) @module)

[
  "=="
  "!="
  "<"
  "<="
  ">"
  ">="
  "+"
  "-"
  "*"
  "**"
  "/"
  "//"
  "%"
  "@"
  "="
  "->"
  ".."
] @operator

[
  "("
  ")"
  "["
  "]"
  "{"
  "}"
] @punctuation.bracket

[
  ","
  ";"
  ":"
  "."
] @punctuation.delimiter

