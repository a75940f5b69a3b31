/**
 * @file Tree-sitter grammar for netc's `.net` files (spec/language.md, sections 2 and 3).
 *
 * It is for editors (syntax colouring, folding, text objects), not a second compiler: it
 * accepts every program netc's parser accepts, and is looser where only a diagnostic would
 * tell the difference (an operator at the end of a line joins the next line here; netc
 * reports E0104). Where the two disagree on a file that netc accepts, this grammar is wrong.
 *
 * Line breaks end statements, settings and items, as in Go's grammar: `\n` is a token where
 * a statement may end and whitespace elsewhere, which is exactly "inside (...) and [...]
 * line breaks are ignored".
 */

/// <reference types="tree-sitter-cli/dsl" />
// @ts-check

const PREC = {
  or: 1,
  and: 2,
  not: 3,
  compare: 4,
  range: 5,
  sum: 6,
  product: 7,
  unary: 8,
  power: 9,
  postfix: 10,
};

/** Scenario settings that are a key alone. */
const FLAG_KEYS = ['no_grad', 'eval', 'checkpoint', 'reentrant', 'prepare_kbit', 'fsdp', 'cudnn_benchmark'];
/** Scenario settings that are a key and a value. */
const VALUE_KEYS = [
  'model',
  'batch',
  'seq',
  'precision',
  'optimizer',
  'loss',
  'cache',
  'context',
  'new_tokens',
  'cache_block',
  'cache_dtype',
  'grad_accum',
  'data_parallel',
  'zero',
  'device',
  'overhead',
  'budget',
  'margin',
  'host_budget',
  'conv_algorithm',
];

/** Comma-separated, at least one, with an optional trailing comma. */
const commaSep1 = (rule) => seq(rule, repeat(seq(',', rule)), optional(','));
/** Comma-separated, possibly empty, with an optional trailing comma. */
const commaSep = (rule) => optional(commaSep1(rule));

module.exports = grammar({
  name: 'net',

  // `\n` is listed here and used as a token: where a statement may end it is a separator,
  // elsewhere (inside brackets, after an operator) it is skipped like a space.
  extras: ($) => [$.comment, /[ \t\r\f\uFEFF]/, '\n'],

  word: ($) => $.identifier,

  conflicts: ($) => [
    // `}` then line breaks then `else`: the `if` goes on only if `else` comes.
    [$.if_statement],
  ],

  rules: {
    source_file: ($) => repeat(choice($._item, $._separator)),

    _separator: (_) => choice('\n', ';'),

    _item: ($) => choice($.use, $.op, $.block, $.model, $.scenario),

    use: ($) => seq('use', field('path', choice($.string, $.module_path))),
    module_path: ($) => seq($.identifier, repeat(seq('.', $.identifier))),

    op: ($) =>
      seq('op', field('name', $.identifier), field('parameters', $.parameters), optional(seq('->', field('outputs', $.outputs)))),
    outputs: ($) => choice($.identifier, seq('(', commaSep($.identifier), ')')),

    block: ($) => seq('block', field('name', $.identifier), field('parameters', $.parameters), field('body', $.body)),
    model: ($) => seq('model', field('name', $.identifier), field('parameters', $.parameters), field('body', $.body)),

    parameters: ($) => seq('(', commaSep($.parameter), ')'),
    parameter: ($) =>
      seq(field('name', $._name), optional(seq(':', field('type', $.type))), optional(seq('=', field('default', $._expression)))),

    type: ($) =>
      choice(
        field('name', $.identifier),
        seq('[', $.type, optional(','), ']'),
        seq(field('name', $.identifier), $.shape),
      ),
    shape: ($) => seq('[', commaSep($._expression), ']'),

    body: ($) => seq('{', repeat(choice($._statement, $._separator)), '}'),

    _statement: ($) =>
      choice($.input_statement, $.buffer_statement, $.assignment, $.return_statement, $.if_statement, $.for_statement),

    // `input` and `buffer` start their statements only there: elsewhere they are names.
    input_statement: ($) => seq('input', field('name', $._name), ':', field('type', $.type)),
    buffer_statement: ($) =>
      seq(
        'buffer',
        field('name', $._name),
        ':',
        field('type', $.type),
        repeat(seq(',', $.keyword_argument)),
      ),
    // `a, b = x, y` is Python's tuple assignment.
    assignment: ($) => seq(field('left', commaSep1Strict($._name)), '=', field('right', commaSep1Strict($._expression))),
    return_statement: ($) => seq('return', commaSep1Strict($._expression)),
    if_statement: ($) =>
      seq(
        'if',
        field('condition', $._expression),
        field('consequence', $.body),
        optional(seq(repeat('\n'), 'else', field('alternative', choice($.body, $.if_statement)))),
      ),
    for_statement: ($) =>
      seq('for', field('variable', $._name), 'in', field('iterable', choice($.range, $._expression)), field('body', $.body)),
    // `a..b`, half-open; only as what a `for` runs over.
    range: ($) => prec.left(PREC.range, seq(field('start', $._expression), '..', field('end', $._expression))),

    _expression: ($) =>
      choice(
        $._name,
        $.integer,
        $.float,
        $.size,
        $.string,
        $.boolean,
        $.list,
        $.parenthesized_expression,
        $.call,
        $.field_expression,
        $.index_expression,
        $.unary_expression,
        $.not_expression,
        $.binary_expression,
        $.repeat_expression,
      ),

    binary_expression: ($) =>
      choice(
        prec.left(PREC.or, seq(field('left', $._expression), field('operator', 'or'), field('right', $._expression))),
        prec.left(PREC.and, seq(field('left', $._expression), field('operator', 'and'), field('right', $._expression))),
        ...['==', '!=', '<', '<=', '>', '>='].map((op) =>
          prec.left(PREC.compare, seq(field('left', $._expression), field('operator', op), field('right', $._expression))),
        ),
        ...['+', '-'].map((op) =>
          prec.left(PREC.sum, seq(field('left', $._expression), field('operator', op), field('right', $._expression))),
        ),
        ...['*', '/', '//', '%', '@'].map((op) =>
          prec.left(PREC.product, seq(field('left', $._expression), field('operator', op), field('right', $._expression))),
        ),
        // Python's `**`: above a unary minus on its left (`-x ** 2`), one on its right (`2 ** -1`).
        prec.right(PREC.power, seq(field('left', $._expression), field('operator', '**'), field('right', $._expression))),
      ),
    not_expression: ($) => prec(PREC.not, seq('not', field('operand', $._expression))),
    unary_expression: ($) => prec(PREC.unary, seq('-', field('operand', $._expression))),

    // A call only right after a name (spec/language.md, section 3).
    call: ($) => prec(PREC.postfix, seq(field('function', $._name), field('arguments', $.arguments))),
    arguments: ($) => seq('(', commaSep(choice($.keyword_argument, $._expression)), ')'),
    keyword_argument: ($) => seq(field('name', $._name), '=', field('value', $._expression)),
    field_expression: ($) => prec(PREC.postfix, seq(field('value', $._expression), '.', field('field', $.identifier))),
    index_expression: ($) => prec(PREC.postfix, seq(field('value', $._expression), '[', field('index', $._expression), optional(','), ']')),
    // `repeat N f(x)`: the count is a postfix expression, the second a call.
    repeat_expression: ($) =>
      prec.right(
        PREC.postfix,
        seq(
          'repeat',
          field(
            'count',
            choice(
              $._name,
              $.integer,
              $.float,
              $.size,
              $.string,
              $.boolean,
              $.parenthesized_expression,
              $.field_expression,
              $.index_expression,
            ),
          ),
          field('call', $.call),
        ),
      ),

    parenthesized_expression: ($) => seq('(', $._expression, optional(','), ')'),
    list: ($) => seq('[', commaSep($._expression), ']'),

    scenario: ($) =>
      seq(
        field('kind', choice('train', 'infer')),
        field('name', $.identifier),
        '{',
        repeat(choice($.setting, '\n', ';', ',')),
        '}',
      ),
    // The keys of compiler/src/syntax/settings.rs (`SETTINGS`), by form. They are keywords
    // only inside a scenario (`batch = relu(x)` is an assignment in a body), and a word there
    // that is not a key is an error, as netc's E0107.
    setting: ($) =>
      choice(
        field('key', alias(choice(...FLAG_KEYS), $.setting_key)),
        seq(field('key', alias(choice(...VALUE_KEYS), $.setting_key)), field('value', choice($._expression, $._scenario_size))),
        seq(field('key', alias('dim', $.setting_key)), field('name', $.identifier), '=', field('value', $._expression)),
        seq(field('key', alias('dataloader', $.setting_key)), field('arguments', $.arguments)),
      ),
    // In a scenario any name right after a number is its unit (section 2.8): `budget 8 gb` is
    // a size with a wrong unit (netc's E0301), not a syntax error.
    _scenario_size: ($) =>
      alias(seq(field('value', choice($.integer, $.float)), field('unit', alias($.identifier, $.unit))), $.size),

    // A name; `input` and `buffer` are names except where they start their statements.
    _name: ($) => choice($.identifier, alias('input', $.identifier), alias('buffer', $.identifier)),

    identifier: (_) => /[A-Za-z_][A-Za-z0-9_]*/,
    integer: (_) => /[0-9][0-9_]*/,
    float: (_) => /[0-9][0-9_]*(\.[0-9][0-9_]*([eE][+-]?[0-9][0-9_]*)?|[eE][+-]?[0-9][0-9_]*)/,
    // A number and a unit (section 2.8). Units are keywords only right after a number, so
    // `repeat 2 basic(x)` is a repeat and `B` is a name elsewhere.
    size: ($) => seq(field('value', choice($.integer, $.float)), field('unit', $.unit)),
    unit: (_) => choice('B', 'KB', 'MB', 'GB', 'TB', 'KiB', 'MiB', 'GiB', 'TiB'),
    string: (_) => /"([^"\\\n]|\\.)*"/,
    boolean: (_) => choice('true', 'false'),
    comment: (_) => token(seq('#', /[^\n]*/)),
  },
});

/** `a, b, c`: at least one, no trailing comma (assignment targets, returned values). */
function commaSep1Strict(rule) {
  return seq(rule, repeat(seq(',', rule)));
}
