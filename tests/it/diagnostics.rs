//! Snapshot tests of the error diagnostics: one realistic program per case, each with one
//! mistake, so that each snapshot shows the input and the one diagnostic it gets (in the
//! human and the short format). Every code of the catalogue that in-memory sources can
//! produce (E01xx, E02xx, E03xx) has at least one case; E0401/E0402 are about reading files
//! from disk and are not covered here.
//!
//! Several cases guard recoveries that once cascaded into a second error: their comment says
//! which.

use crate::support::{check, check_files, codes};

/// Asserts the snapshot of checking one file `main.net`.
macro_rules! case {
    ($name:ident, $src:expr) => {
        #[test]
        fn $name() {
            insta::assert_snapshot!(stringify!($name), check($src));
        }
    };
}

/// Asserts the snapshot of checking several files.
macro_rules! case_files {
    ($name:ident, $files:expr) => {
        #[test]
        fn $name() {
            insta::assert_snapshot!(stringify!($name), check_files($files));
        }
    };
}

/// A model the scenario cases run.
const RESNET: &str = r#"model resnet18(classes: int = 1000) {
    input x: f32[N, 3, 224, 224]
    y = maxpool2d(relu(batchnorm(conv2d(x, 64, k=7, stride=2, pad=3, bias=false))), 3, stride=2, pad=1)
    return linear(flatten(adaptive_avgpool2d(y, 1)), classes)
}

"#;

/// Checks [`RESNET`] followed by `scenario`.
fn scenario(scenario: &str) -> String {
    check(&format!("{RESNET}{scenario}"))
}

/// Asserts the snapshot of checking [`RESNET`] followed by a scenario.
macro_rules! scenario_case {
    ($name:ident, $src:expr) => {
        #[test]
        fn $name() {
            insta::assert_snapshot!(stringify!($name), scenario($src));
        }
    };
}

// ---------------------------------------------------------------------------------------
// E01xx: lexical and syntax errors

// A Rust habit: `?` after a call. The character is dropped and the line reads as if it were
// not there.
case!(
    e0101_invalid_character,
    r#"block basic(x, planes: int, stride: int = 1) {
    y = relu(batchnorm(conv2d(x, planes, k=3, stride=stride, pad=1, bias=false)))?
    y = batchnorm(conv2d(y, planes, k=3, pad=1, bias=false))
    return relu(y + x)
}
"#
);

// A run of invalid characters is one diagnostic, not one per character: here two no-break
// spaces pasted from a web page, shown escaped in the message.
case!(
    e0101_invalid_characters_run,
    "block head(x, classes: int) {\n    y = flatten(adaptive_avgpool2d(x, 1))\n    return linear(y,\u{a0}\u{a0}classes)\n}\n"
);

case!(
    e0102_unterminated_string,
    r#"block up(x, channels: int) {
    mode = "bilinear
    y = upsample(x, scale=2, mode=mode)
    return conv2d(y, channels, k=3, pad=1)
}
"#
);

// The string runs to the end of the line and swallows the `)`; the unclosed `(` that follows
// from it is not reported again: only the E0102.
case!(
    e0102_unterminated_string_in_call,
    r#"block ffn(x, dim: int) {
    y = gelu(linear(x, 4 * dim), approximate="tanh)
    return linear(y, dim)
}
"#
);

case!(
    e0103_integer_too_large,
    r#"block classifier(x) {
    y = flatten(x)
    return linear(y, 100000000000000000000)
}
"#
);

case!(
    e0103_float_too_large,
    r#"block norm(x) {
    return layernorm(x, eps=1e999)
}
"#
);

case!(
    e0104_missing_comma_between_arguments,
    r#"block stem(x) {
    y = conv2d(x, 64 k=7, stride=2, pad=3, bias=false)
    y = relu(batchnorm(y))
    return maxpool2d(y, 3, stride=2, pad=1)
}
"#
);

case!(
    e0104_missing_brace_after_if,
    r#"block basic(x, planes: int, stride: int = 1) {
    y = relu(batchnorm(conv2d(x, planes, k=3, stride=stride, pad=1, bias=false)))
    y = batchnorm(conv2d(y, planes, k=3, pad=1, bias=false))
    s = x
    if stride != 1 s = batchnorm(conv2d(x, planes, k=1, stride=stride, bias=false))
    return relu(y + s)
}
"#
);

// A keyword used as a parameter name.
case!(
    e0104_keyword_as_parameter,
    r#"block proj(x, in: int) {
    return linear(x, in)
}
"#
);

// `y = conv2 d(...)`: the statement does not end after `conv2`, so it is dropped as a whole
// (its target stays defined) and `conv2` is not reported as undefined: only the E0104.
case!(
    e0104_space_in_op_name,
    r#"block stem(x) {
    y = conv2 d(x, 64, k=7, stride=2, pad=3, bias=false)
    return maxpool2d(relu(batchnorm(y)), 3, stride=2, pad=1)
}
"#
);

// PyTorch method chaining: only names can be called.
case!(
    e0104_method_call,
    r#"block stem(x) {
    y = conv2d(x, 64, k=7, stride=2, pad=3, bias=false).relu()
    return maxpool2d(y, 3, stride=2, pad=1)
}
"#
);

// Python's `x.repeat(1, 2)` written as a call of the `repeat` keyword: the help names `tile`.
case!(
    e0104_repeat_as_a_call,
    r#"block tiled(x) {
    y = repeat(x, [1, 2])
    return y
}
"#
);

// `=` where `==` was meant.
case!(
    e0104_assignment_in_condition,
    r#"block basic(x, planes: int, stride: int = 1) {
    y = relu(batchnorm(conv2d(x, planes, k=3, stride=stride, pad=1, bias=false)))
    y = batchnorm(conv2d(y, planes, k=3, pad=1, bias=false))
    s = x
    if stride = 2 { s = batchnorm(conv2d(x, planes, k=1, stride=stride, bias=false)) }
    return relu(y + s)
}
"#
);

// `else` may start the line after the `}` of its `if`: no diagnostics.
case!(
    else_on_next_line_is_accepted,
    r#"block shortcut(x, planes: int, stride: int = 1) {
    if stride != 1 { s = batchnorm(conv2d(x, planes, k=1, stride=stride, bias=false)) }
    else { s = x }
    return s
}
"#
);

// The broken `input` still defines `x`, so its uses are not reported: only the E0104.
case!(
    e0104_input_missing_colon,
    r#"model mlp() {
    input x f32[N, 784]
    return linear(relu(linear(x, 256)), 10)
}
"#
);

// A YAML habit in a scenario.
case!(
    e0104_colon_after_setting,
    r#"model mlp() {
    input x: f32[N, 784]
    return linear(relu(linear(x, 256)), 10)
}

train mnist {
    model mlp()
    batch: 128
    optimizer adam
}
"#
);

case!(
    e0105_unclosed_call,
    r#"block basic(x, planes: int) {
    y = relu(batchnorm(conv2d(x, planes, k=3, pad=1, bias=false))
    y = batchnorm(conv2d(y, planes, k=3, pad=1, bias=false))
    return relu(y + x)
}
"#
);

// The broken `input` still defines `x`: only the E0105.
case!(
    e0105_unclosed_shape,
    r#"model mlp() {
    input x: f32[N, 784
    y = relu(linear(x, 256))
    return linear(y, 10)
}
"#
);

// The body ends at the next item, which starts its own line: only the E0105.
case!(
    e0105_missing_closing_brace,
    r#"block mlp(x, hidden: int, out: int) {
    y = gelu(linear(x, hidden))
    return linear(y, out)

model tiny() {
    input x: f32[N, 128]
    return mlp(x, 512, 10)
}
"#
);

// As above, for a scenario: only the E0105.
case!(
    e0105_unclosed_scenario,
    r#"model mlp() {
    input x: f32[N, 784]
    return linear(relu(linear(x, 256)), 10)
}

train mnist {
    model mlp()
    batch 128
    optimizer adam

infer serve { model mlp()  batch 1  no_grad  eval }
"#
);

#[test]
fn e0106_nesting_too_deep() {
    let depth = 200;
    let src = format!("block deep(x) {{\n    y = {}x{}\n    return y\n}}\n", "(".repeat(depth), ")".repeat(depth));
    insta::assert_snapshot!("e0106_nesting_too_deep", check(&src));
}

case!(
    e0107_unknown_setting_with_suggestion,
    r#"model mlp() {
    input x: f32[N, 784]
    return linear(relu(linear(x, 256)), 10)
}

train mnist { model mlp()  bacth 128  optimizer adam  budget 2 GiB }
"#
);

case!(
    e0107_unknown_setting_without_suggestion,
    r#"model mlp() {
    input x: f32[N, 784]
    return linear(relu(linear(x, 256)), 10)
}

train mnist {
    model mlp()
    batch 128
    learning_rate 0.001
    optimizer adam
}
"#
);

// The last line forgets `return`: the value of the residual sum is lost.
case!(
    e0108_expression_statement,
    r#"block basic(x, planes: int) {
    y = relu(batchnorm(conv2d(x, planes, k=3, pad=1, bias=false)))
    y = batchnorm(conv2d(y, planes, k=3, pad=1, bias=false))
    relu(y + x)
}
"#
);

// ---------------------------------------------------------------------------------------
// E02xx: names and imports

case!(
    e0201_unresolved_import,
    r#"use "missing.net"

model mlp() {
    input x: f32[N, 784]
    return linear(relu(linear(x, 256)), 10)
}
"#
);

// While an import is unresolved, names it would define are not reported as unknown: only the
// E0201.
case!(
    e0201_unresolved_import_then_call,
    r#"use "blocks/resnet.net"

model resnet18() {
    input x: f32[N, 64, 56, 56]
    y = basic(x, 64)
    return basic(y, 64)
}
"#
);

// The whole module path is underlined.
case!(
    e0202_unknown_std_module,
    r#"use std.vision

model mlp() {
    input x: f32[N, 784]
    return linear(relu(linear(x, 256)), 10)
}
"#
);

// The whole module path is underlined, with a suggestion.
case!(
    e0202_unknown_std_module_with_suggestion,
    r#"use std.nnn

model mlp() {
    input x: f32[N, 784]
    return linear(relu(linear(x, 256)), 10)
}
"#
);

// A file used as a module path: the help says to quote it.
case!(
    e0202_file_written_as_module,
    r#"use layers

model mlp() {
    input x: f32[N, 784]
    return linear(relu(linear(x, 256)), 10)
}
"#
);

// Each file of the cycle reports it once, at its own `use`: fixing either file's `use`
// breaks the cycle, and each file's diagnostics are computed on their own.
case_files!(
    e0203_import_cycle,
    &[
        (
            "a.net",
            r#"use "b.net"

block conv_bn(x, c: int) {
    return relu(batchnorm(conv2d(x, c, k=3, pad=1, bias=false)))
}
"#,
        ),
        (
            "b.net",
            r#"use "a.net"

model net() {
    input x: f32[N, 3, 32, 32]
    return conv_bn(x, 16)
}
"#,
        ),
    ]
);

// A file that uses itself: the help says to remove the `use`.
case!(
    e0203_file_uses_itself,
    r#"use "main.net"

block conv_bn(x, c: int) {
    return relu(batchnorm(conv2d(x, c, k=3, pad=1, bias=false)))
}
"#
);

case!(
    e0204_undefined_name_with_suggestion,
    r#"block basic(x, planes: int, stride: int = 1) {
    y = relu(batchnorm(conv2d(x, planes, k=3, stride=stride, pad=1, bias=false)))
    y = batchnorm(conv2d(y, planes, k=3, pad=1, bias=false))
    shortcut = x
    if stride != 1 { shortcut = batchnorm(conv2d(x, planes, k=1, stride=stride, bias=false)) }
    return relu(y + shrotcut)
}
"#
);

case!(
    e0204_block_used_as_value,
    r#"block ffn(x, dim: int) {
    return linear(gelu(linear(x, 4 * dim)), dim)
}

block layer(x, dim: int) {
    y = x + ffn
    return layernorm(y)
}
"#
);

// Scenarios have no variables: a name in the model's arguments is undefined.
scenario_case!(
    e0204_undefined_name_in_scenario,
    "train cifar { model resnet18(classes=num_classes)  batch 128  optimizer sgd }\n"
);

case!(
    e0205_duplicate_block,
    r#"block basic(x, planes: int) {
    y = relu(batchnorm(conv2d(x, planes, k=3, pad=1, bias=false)))
    return relu(batchnorm(conv2d(y, planes, k=3, pad=1, bias=false)) + x)
}

block basic(x, planes: int, stride: int = 2) {
    y = relu(batchnorm(conv2d(x, planes, k=3, stride=stride, pad=1, bias=false)))
    return batchnorm(conv2d(y, planes, k=3, pad=1, bias=false))
}
"#
);

case!(
    e0205_duplicate_parameter,
    r#"block bottleneck(x, planes: int, stride: int = 1, planes: int = 64) {
    y = relu(batchnorm(conv2d(x, planes, k=1, bias=false)))
    y = relu(batchnorm(conv2d(y, planes, k=3, stride=stride, pad=1, bias=false)))
    return batchnorm(conv2d(y, planes * 4, k=1, bias=false))
}
"#
);

case!(
    e0205_name_assigned_twice_in_one_statement,
    r#"block encoder(x, hidden: int) {
    out, out = lstm(x, hidden)
    return out
}
"#
);

case!(
    e0206_unknown_op_with_suggestion,
    r#"block stem(x) {
    y = convv2d(x, 64, k=7, stride=2, pad=3, bias=false)
    return maxpool2d(relu(batchnorm(y)), 3, stride=2, pad=1)
}
"#
);

// The suggestion also comes from the file's own blocks.
case!(
    e0206_unknown_block_with_suggestion,
    r#"block basic(x, planes: int) {
    y = relu(batchnorm(conv2d(x, planes, k=3, pad=1, bias=false)))
    return relu(batchnorm(conv2d(y, planes, k=3, pad=1, bias=false)) + x)
}

model net() {
    input x: f32[N, 64, 56, 56]
    return basci(x, 64)
}
"#
);

// PyTorch spells it `Conv2d`; suggestions ignore case.
case!(
    e0206_unknown_op_pytorch_spelling,
    r#"block stem(x) {
    y = Conv2d(x, 64, k=7, stride=2, pad=3, bias=false)
    return maxpool2d(relu(batchnorm(y)), 3, stride=2, pad=1)
}
"#
);

case!(
    e0206_unknown_op_without_suggestion,
    r#"block head(x, classes: int) {
    y = global_pool(x)
    return linear(flatten(y), classes)
}
"#
);

// PyTorch's MaxPool2d has `return_indices` before `ceil_mode`; netc's `maxpool2d` does not.
case!(
    e0207_too_many_arguments,
    r#"block stem(x) {
    y = relu(batchnorm(conv2d(x, 64, k=7, stride=2, pad=3, bias=false)))
    return maxpool2d(y, 3, 2, 1, 1, false, false)
}
"#
);

// A positional argument after a keyword one: E0222 alone, no guess at a missing argument.
case!(
    e0222_positional_after_keyword,
    r#"block stem(x) {
    return conv2d(x, out_channels=64, 7, stride=2, pad=3)
}
"#
);

case!(
    e0208_missing_argument,
    r#"block down(x, planes: int) {
    return batchnorm(conv2d(x, planes, stride=2, bias=false))
}
"#
);

case!(
    e0208_missing_block_argument,
    r#"block basic(x, planes: int, stride: int = 1) {
    y = relu(batchnorm(conv2d(x, planes, k=3, stride=stride, pad=1, bias=false)))
    return relu(batchnorm(conv2d(y, planes, k=3, pad=1, bias=false)) + x)
}

model net() {
    input x: f32[N, 64, 56, 56]
    y = basic(x, stride=1)
    return y
}
"#
);

case!(
    e0209_unknown_keyword_with_suggestion,
    r#"block stem(x) {
    y = conv2d(x, 64, k=7, strides=2, pad=3, bias=false)
    return maxpool2d(relu(batchnorm(y)), 3, stride=2, pad=1)
}
"#
);

case!(
    e0210_repeated_argument,
    r#"block stem(x) {
    y = conv2d(x, 64, 7, k=7, stride=2, pad=3, bias=false)
    return maxpool2d(relu(batchnorm(y)), 3, stride=2, pad=1)
}
"#
);

// `hidden` has neither a type nor a default, so it is a tensor parameter.
case!(
    e0211_tensor_given_for_int,
    r#"block ffn(x, dim: int, hidden) {
    y = gelu(linear(x, hidden))
    return linear(y, dim)
}
"#
);

case!(
    e0211_string_given_for_int,
    r#"block stem(x) {
    y = conv2d(x, "64", k=7, stride=2, pad=3, bias=false)
    return maxpool2d(relu(batchnorm(y)), 3, stride=2, pad=1)
}
"#
);

case!(
    e0211_default_of_wrong_kind,
    r#"block drop(x, p: float = "0.1") {
    return dropout(x, p)
}
"#
);

case!(
    e0211_block_returns_integer,
    r#"block out_channels(x, planes: int) {
    return planes * 4
}
"#
);

case!(
    e0212_unknown_model,
    r#"model resnet18(classes: int = 1000) {
    input x: f32[N, 3, 224, 224]
    y = relu(batchnorm(conv2d(x, 64, k=7, stride=2, pad=3, bias=false)))
    return linear(flatten(adaptive_avgpool2d(y, 1)), classes)
}

train imagenet { model resnt18()  batch 64  optimizer adam  budget 12 GiB }
"#
);

case!(
    e0213_block_as_scenario_model,
    r#"block basic(x, planes: int) {
    y = relu(batchnorm(conv2d(x, planes, k=3, pad=1, bias=false)))
    return relu(batchnorm(conv2d(y, planes, k=3, pad=1, bias=false)) + x)
}

infer bench { model basic(64)  batch 1  no_grad  eval }
"#
);

case!(
    e0213_model_called_from_body,
    r#"model backbone() {
    input x: f32[N, 3, 224, 224]
    return relu(batchnorm(conv2d(x, 64, k=7, stride=2, pad=3, bias=false)))
}

model classifier(classes: int = 1000) {
    input x: f32[N, 3, 224, 224]
    y = backbone(x)
    return linear(flatten(adaptive_avgpool2d(y, 1)), classes)
}
"#
);

case!(
    e0213_scenario_called,
    r#"model mlp() {
    input x: f32[N, 784]
    return linear(relu(linear(x, 256)), 10)
}

train mnist { model mlp()  batch 128  optimizer adam }

model ensemble() {
    input x: f32[N, 784]
    y = mnist(x)
    return softmax(y)
}
"#
);

case!(
    e0214_possibly_undefined_after_if,
    r#"block basic(x, planes: int, stride: int = 1) {
    y = relu(batchnorm(conv2d(x, planes, k=3, stride=stride, pad=1, bias=false)))
    y = batchnorm(conv2d(y, planes, k=3, pad=1, bias=false))
    if stride != 1 { s = batchnorm(conv2d(x, planes, k=1, stride=stride, bias=false)) }
    return relu(y + s)
}
"#
);

case!(
    e0215_missing_return,
    r#"block basic(x, planes: int) {
    y = relu(batchnorm(conv2d(x, planes, k=3, pad=1, bias=false)))
    y = batchnorm(conv2d(y, planes, k=3, pad=1, bias=false))
    out = relu(y + x)
}
"#
);

case!(
    e0216_input_in_block,
    r#"block patch_embed(dim: int) {
    input x: f32[N, 3, 224, 224]
    y = conv2d(x, dim, k=16, stride=16)
    return permute(flatten(y, start=2), [0, 2, 1])
}
"#
);

case!(
    e0216_statement_after_return,
    r#"block layer(x, dim: int, heads: int) {
    x = x + attention(layernorm(x), dim, heads, causal=true)
    return x + linear(gelu(linear(layernorm(x), 4 * dim)), dim)
    x = layernorm(x)
}
"#
);

case!(
    e0216_return_inside_if,
    r#"block maybe_down(x, planes: int, stride: int = 1) {
    if stride == 1 { return x }
    return batchnorm(conv2d(x, planes, k=1, stride=stride, bias=false))
}
"#
);

// Inputs chosen by a parameter: each of the two misplaced `input`s is reported (two
// diagnostics, one per statement). `x` is declared in both branches, so its use is fine.
case!(
    e0216_input_inside_if,
    r#"model classifier(large: bool = false) {
    if large { input x: f32[N, 3, 384, 384] } else { input x: f32[N, 3, 224, 224] }
    return linear(flatten(adaptive_avgpool2d(x, 1)), 1000)
}
"#
);

case!(
    e0217_two_names_for_one_output,
    r#"block act(x) {
    a, b = relu(x)
    return a
}
"#
);

case!(
    e0217_lstm_outputs_as_one_value,
    r#"model tagger(vocab: int = 30000, tags: int = 17) {
    input ids: i64[N, S]
    e = embedding(ids, vocab, 256)
    y = linear(lstm(e, 512), tags)
    return y
}
"#
);

// Python's `pair = q, k` makes a tuple, which the language has no value for; two names for
// three values do not unpack.
case!(
    e0217_one_name_for_two_values,
    r#"block rotate(q, k) {
    pair = relu(q), relu(k)
    q, k = relu(q), relu(k), q
    return q + k
}
"#
);

// lstm returns two tensors; one name is assigned.
case!(
    e0217_lstm_assigned_to_one_name,
    r#"model encoder() {
    input x: f32[N, S, 128]
    y = lstm(x, 256, layers=2)
    return y
}
"#
);

case!(
    e0218_unknown_type,
    r#"block basic(x, planes: itn, stride: int = 1) {
    y = relu(batchnorm(conv2d(x, planes, k=3, stride=stride, pad=1, bias=false)))
    return batchnorm(conv2d(y, planes, k=3, pad=1, bias=false))
}
"#
);

case!(
    e0218_unknown_dtype,
    r#"model mlp() {
    input x: f31[N, 784]
    return linear(relu(linear(x, 256)), 10)
}
"#
);

case!(
    e0218_input_not_a_tensor,
    r#"model mlp() {
    input x: int
    return linear(relu(linear(x, 256)), 10)
}
"#
);

case_files!(
    e0219_ambiguous_name,
    &[
        (
            "main.net",
            r#"use "resnet.net"
use "mobilenet.net"

model net() {
    input x: f32[N, 3, 224, 224]
    y = stem(x)
    return linear(flatten(adaptive_avgpool2d(y, 1)), 1000)
}
"#,
        ),
        (
            "resnet.net",
            r#"block stem(x) {
    return maxpool2d(relu(batchnorm(conv2d(x, 64, k=7, stride=2, pad=3, bias=false))), 3, stride=2, pad=1)
}
"#,
        ),
        (
            "mobilenet.net",
            r#"block stem(x) {
    return hardswish(batchnorm(conv2d(x, 16, k=3, stride=2, pad=1, bias=false)))
}
"#,
        ),
    ]
);

case!(
    e0220_repeat_of_multi_output_op,
    r#"model encoder() {
    input x: f32[N, S, 128]
    y = repeat 2 lstm(x, 128)
    return y
}
"#
);

case!(
    e0220_repeat_count_not_int,
    r#"block layer(x, dim: int) {
    return x + linear(gelu(linear(layernorm(x), 4 * dim)), dim)
}

model gpt(depth: float = 12.0) {
    input x: f32[N, S, 768]
    y = repeat depth layer(x, 768)
    return y
}
"#
);

case!(
    e0220_repeat_with_keyword_tensor,
    r#"block layer(x, dim: int) {
    return x + linear(gelu(linear(layernorm(x), 4 * dim)), dim)
}

model gpt() {
    input x: f32[N, S, 768]
    y = repeat 12 layer(x=x, dim=768)
    return y
}
"#
);

case!(
    e0221_add_bool_to_tensor,
    r#"block residual(x, dim: int) {
    y = linear(gelu(linear(x, 4 * dim)), dim)
    return x + true
}
"#
);

case!(
    e0221_condition_not_bool,
    r#"block basic(x, planes: int, stride: int = 1) {
    y = relu(batchnorm(conv2d(x, planes, k=3, stride=stride, pad=1, bias=false)))
    y = batchnorm(conv2d(y, planes, k=3, pad=1, bias=false))
    s = x
    if stride { s = batchnorm(conv2d(x, planes, k=1, stride=stride, bias=false)) }
    return relu(y + s)
}
"#
);

// PyTorch's `x.size(1)` is `x.shape[1]` here.
case!(
    e0221_unknown_tensor_field,
    r#"block proj(x) {
    c = x.size
    return conv2d(x, c * 2, k=1)
}
"#
);

// ---------------------------------------------------------------------------------------
// E03xx: scenarios

scenario_case!(
    e0301_unknown_size_unit,
    "train imagenet { model resnet18()  batch 64  optimizer adam  budget 12 Gib }\n"
);

scenario_case!(e0301_budget_without_unit, "infer serve { model resnet18()  batch 1  no_grad  eval  budget 300 }\n");

scenario_case!(
    e0301_size_too_large,
    "train imagenet { model resnet18()  batch 64  optimizer adam  budget 20000000 TiB }\n"
);

scenario_case!(
    e0301_fractional_bytes,
    "infer edge { model resnet18()  batch 1  no_grad  eval  device jetson_nano  budget 1.5 B }\n"
);

scenario_case!(
    e0301_dataloader_sample_without_unit,
    "train imagenet { model resnet18()  batch 64  optimizer adam  dataloader(workers=8, sample=602) }\n"
);

scenario_case!(e0302_missing_model, "train imagenet { batch 64  optimizer adam  device a100_40gb  budget 12 GiB }\n");

scenario_case!(
    e0303_duplicate_setting,
    r#"train imagenet {
    model resnet18()
    batch 64
    optimizer adam
    batch 256
    budget 40 GiB
}
"#
);

scenario_case!(
    e0304_unknown_precision,
    "train imagenet { model resnet18()  batch 64  precision bfloat16  optimizer adamw }\n"
);

scenario_case!(
    e0304_unknown_optimizer,
    "train imagenet { model resnet18()  batch 64  optimizer Adam  budget 12 GiB }\n"
);

scenario_case!(
    e0304_unknown_device,
    "infer serve { model resnet18()  batch 1  no_grad  eval  device a100  budget 300 MiB }\n"
);

scenario_case!(
    e0304_zero_stage_4,
    "train imagenet { model resnet18()  batch 64  optimizer adam  data_parallel 8  zero 4 }\n"
);

scenario_case!(e0304_batch_zero, "infer serve { model resnet18()  batch 0  no_grad  eval  budget 300 MiB }\n");

scenario_case!(
    e0304_margin_below_one,
    "infer serve { model resnet18()  batch 1  no_grad  eval  budget 300 MiB  margin 0.8 }\n"
);

scenario_case!(e0304_model_not_a_call, "train imagenet { model 18  batch 64  optimizer adam }\n");

scenario_case!(
    e0304_dataloader_positional_option,
    "train imagenet { model resnet18()  batch 64  optimizer adam  dataloader(8, prefetch=2) }\n"
);

scenario_case!(
    e0305_no_grad_in_train,
    "train imagenet { model resnet18()  batch 64  optimizer adam  no_grad  budget 12 GiB }\n"
);

scenario_case!(
    e0305_zero_with_fsdp,
    "train imagenet { model resnet18()  batch 64  optimizer adam  data_parallel 8  zero 2  fsdp }\n"
);

scenario_case!(
    e0305_grad_accum_not_dividing_batch,
    "train imagenet { model resnet18()  batch 64  grad_accum 3  optimizer adam  budget 12 GiB }\n"
);

scenario_case!(
    e0305_optimizer_in_infer,
    "infer serve { model resnet18()  batch 1  no_grad  eval  optimizer adam  budget 300 MiB }\n"
);

scenario_case!(
    e0305_zero_without_data_parallel,
    "train imagenet { model resnet18()  batch 64  optimizer adam  zero 2  budget 12 GiB }\n"
);

scenario_case!(e0305_batch_dimension_as_dim, "train imagenet { model resnet18()  dim N = 64  optimizer adam }\n");

// Scenario model calls are checked like calls: an unknown keyword of the model.
scenario_case!(
    e0209_unknown_model_keyword,
    "train cifar { model resnet18(num_classes=10)  batch 128  optimizer sgd }\n"
);

scenario_case!(
    e0209_unknown_dataloader_option,
    "train imagenet { model resnet18()  batch 64  optimizer adam  dataloader(workers=8, prefech=2) }\n"
);

scenario_case!(
    e0210_dataloader_option_twice,
    "train imagenet { model resnet18()  batch 64  optimizer adam  dataloader(workers=8, prefetch=2, workers=16) }\n"
);

// The one warning of the scenario group, W0306: a setting that has no effect.
scenario_case!(
    w0306_margin_without_budget,
    "infer serve { model resnet18()  batch 1  no_grad  eval  device t4  margin 1.5 }\n"
);

// ---------------------------------------------------------------------------------------
// Codes only: one mistake, one code (quick checks beside the snapshots).

#[test]
fn one_mistake_gives_one_code() {
    assert_eq!(codes("block b(x) {\n    return relu(x) $\n}\n"), ["E0101"]);
    assert_eq!(codes("block b(x) {\n    return convv2d(x, 8, k=3)\n}\n"), ["E0206"]);
    assert_eq!(codes("train t { batch 8 }\n"), ["E0302"]);
    // The reentrant variant is a way to checkpoint: alone it changes nothing.
    let reentrant = "use std.models.resnet\ntrain t { model resnet18()  batch 8  reentrant }\n";
    assert_eq!(codes(reentrant), ["W0306"]);
    assert_eq!(codes(&reentrant.replace("reentrant }", "checkpoint  reentrant }")), Vec::<&str>::new());
}

// ---------------------------------------------------------------------------------------
// Line ends

/// Lines end at `\n`, `\r\n` and a lone `\r` (spec/language.md 2.1), in every format: the
/// human (miette), short (codespan-reporting) and JSON formats give one line and column.
/// (miette counted a lone `\r` as a line end, codespan and the JSON positions did not.)
#[test]
fn every_format_counts_lone_carriage_returns_as_line_ends() {
    let lf = "block b(x) {\n    y = relu(x)\n    return z\n}\n";
    let texts = [
        lf.to_string(),
        lf.replace('\n', "\r\n"),
        lf.replace('\n', "\r"),
        "block b(x) {\r    y = relu(x)\r\n    return z\n}\r".to_string(),
    ];
    for text in texts {
        let (diagnostics, sources) = crate::support::diagnostics_and_sources(&[("main.net", &text)]);
        assert_eq!(diagnostics.len(), 1, "{text:?}");
        let short = netc::render::short(&diagnostics, &sources, false);
        assert!(short.starts_with("main.net:3:12: error[E0204]"), "{text:?}: {short}");
        let human = netc::render::human(&diagnostics, &sources, false);
        assert!(human.contains("[main.net:3:12]"), "{text:?}: {human}");
        let json = netc::render::json_report(&diagnostics, &sources, 1);
        let start = json.diagnostics[0].start;
        assert_eq!((start.line, start.column), (3, 12), "{text:?}");
        let sarif = netc::render::sarif::sarif_log(&diagnostics, &sources);
        let region = &sarif["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"];
        assert_eq!((&region["startLine"], &region["startColumn"]), (&3.into(), &12.into()), "{text:?}: {region}");
    }
}

// A name first assigned in a loop that may run no times.
case!(
    e0214_assigned_only_in_a_loop,
    r#"block b(x, n: int) {
    for i in 0..n {
        y = relu(x)
    }
    return y
}
"#
);

// `return` belongs after the loop, not in it.
case!(
    e0216_return_inside_for,
    r#"block b(x, n: int) {
    for i in 0..n {
        x = relu(x)
        return x
    }
    return x
}
"#
);

// A loop runs over a list or a range, not over an integer.
case!(
    e0221_loop_over_an_integer,
    r#"block b(x, n: int) {
    for i in n {
        x = linear(x, i)
    }
    return x
}
"#
);

// A range's bounds are integers.
case!(
    e0221_range_of_floats,
    r#"block b(x, p: float) {
    for i in 0..p {
        x = relu(x)
    }
    return x
}
"#
);

// `min` takes numbers by position.
case!(
    e0211_min_of_a_tensor,
    r#"block b(x, n: int) {
    k = min(x, n)
    return linear(x, max(n, 4, key=1))
}
"#
);

// `checkpoint` marks a call: the module's arguments belong inside it (`checkpoint(layer, y)`
// is PyTorch's spelling, not netc's), and a value that is not a call marks nothing.
case!(
    e0211_checkpoint_of_a_name,
    r#"block layer(x) {
    return relu(linear(x, 64))
}

block stack(x) {
    y = checkpoint(layer, x)
    z = checkpoint(x)
    return add(checkpoint(layer(y)), z)
}
"#
);

// `frozen` marks a call as `checkpoint` does: a value is not one.
case!(
    e0211_frozen_of_a_name,
    r#"block layer(x) {
    return relu(linear(x, 64))
}

block head(x) {
    y = frozen(layer, x)
    return frozen(x)
}
"#
);

// A mark's one keyword is `when`, a bool.
case!(
    e0211_frozen_when_not_a_bool,
    r#"model m(lora_r: int = 8) {
    input x: f32[N, 64]
    h = frozen(linear(x, 64), when=lora_r)
    g = fp32(linear(h, 64), unless=lora_r > 0)
    return checkpoint(linear(g, 10), when=lora_r > 0)
}
"#
);

// A declared kernel is checked like a built-in: `saves` must name its inputs.
case!(
    e0501_kernel_saves_no_such_input,
    r#"block fused(a, b) {
    return kernel([a, b], a.shape, saves=[0, 2])
}

model m() {
    input x: f32[N, 8]
    return fused(x, x)
}

infer s { model m()  batch 2 }
"#
);

// A loop of more iterations than a model may have ops stops elaboration.
case!(
    e0504_loop_too_long,
    r#"model m() {
    input x: f32[N, 8]
    for i in 0..1000000000 {
        x = relu(x)
    }
    return x
}

infer s { model m()  batch 1 }
"#
);
