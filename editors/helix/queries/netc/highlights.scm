; Generated from editors/tree-sitter-net/queries/highlights.scm for Helix (its scope names) by
; editors/tree-sitter-net/editor_queries.py: edit that file and run this script.

(identifier) @variable

; A `##` comment documents the item below it (spec/language.md, section 2.3).
((comment) @comment
  (#not-match? @comment "^##"))
((comment) @comment.line.documentation
  (#match? @comment.line.documentation "^##"))

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
] @keyword.control.conditional

[
  "for"
  "in"
  "repeat"
] @keyword.control.repeat

"return" @keyword.control.return

[
  "and"
  "or"
  "not"
] @keyword.operator

(setting_key) @variable.other.member

(string) @string
(integer) @constant.numeric.integer
(float) @constant.numeric.float
(boolean) @constant.builtin.boolean
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
  function: (identifier) @function)

(parameter
  name: (identifier) @variable.parameter)
(keyword_argument
  name: (identifier) @variable.parameter)

(field_expression
  field: (identifier) @variable.other.member)

(module_path
  (identifier) @namespace)

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

