//! The model zoo of the standard library (`stdlib/std/models/*.net`, the modules
//! `std.models.*`) and the standard library as a whole.
//!
//! - Every zoo model's parameter count equals the published one exactly, and its MACs round
//!   to the published GFLOPS at the precision it is printed with: torchvision's model table
//!   (two decimals) and the `_ops` of its weights' metadata (three decimals). Where PyTorch
//!   measured the same architecture (`tests/fixtures/calibration/`), the MACs are equal
//!   exactly. Language models have no published MAC count: theirs equal the count derived
//!   from the configuration. Each figure cites its source.
//! - The figures are taken the way a user takes them: a file that says
//!   `use std.models.<family>` and runs the model in one `infer` scenario at batch 1.
//! - A reviewed snapshot of `netc report` (the table) of every zoo file's own scenarios.
//! - Every standard-library file checks without a diagnostic, every `.net` file under
//!   `stdlib/` is embedded, and every zoo model has a `train` and an `infer` scenario with a
//!   device and a budget.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use netc::db::Db as _;
use netc::db::{STDLIB_SOURCES, SourceFile};
use netc::diagnostics::FileName;
use netc::host::{Database, file_diagnostics};
use netc::report::{ScenarioReport, report, table};
use netc::semantics::files::syntax_tree;
use netc::syntax::{ExprKind, Item, SettingValue};

/// The parameters and MACs of `call` (a model of `std.models.<family>` with its arguments) at
/// batch 1 and, for a language model, sequence length `seq`, from a user file that imports
/// the module.
fn figures(family: &str, call: &str, seq: Option<u32>) -> (i128, i128) {
    let s = probe(family, call, seq);
    (s.params, s.macs)
}

/// The report of inference on `call` (as [`figures`] runs it).
fn probe(family: &str, call: &str, seq: Option<u32>) -> netc::report::ScenarioReport {
    let mut db = Database::new();
    let seq = seq.map(|s| format!("  seq {s}")).unwrap_or_default();
    let text = format!("use std.models.{family}\ninfer probe {{ model {call}  batch 1{seq} }}\n");
    let file = db.set_file(FileName::new("probe.net"), text.clone());
    // Lints aside: the probe runs inference without `no_grad` or `eval` on purpose.
    let diagnostics: Vec<_> = file_diagnostics(&db, file).iter().filter(|d| !d.code.info().is_lint()).collect();
    assert!(diagnostics.is_empty(), "{text}: unexpected diagnostics: {diagnostics:#?}");
    let r = report(&db, &[file], None);
    r.scenarios.into_iter().next().unwrap_or_else(|| panic!("{text}: no report"))
}

/// Asserts that `macs` / 10^9 printed with as many decimals as `published` is `published`.
fn assert_gflops(what: &str, macs: i128, published: &str) {
    let decimals = published.split('.').nth(1).map_or(0, str::len);
    let ours = format!("{:.*}", decimals, macs as f64 / 1e9);
    assert_eq!(ours, published, "{what}: {macs} MACs print as {ours} GMACs, published {published}");
}

/// A test of a torchvision model: the exact parameter count and the GFLOPS as printed.
fn torchvision(family: &str, model: &str, params: i128, gflops: &[&str]) -> i128 {
    let (ours, macs) = figures(family, &format!("{model}()"), None);
    assert_eq!(ours, params, "{model}: parameters");
    for g in gflops {
        assert_gflops(model, macs, g);
    }
    macs
}

// ---------------------------------------------------------------------------------------
// torchvision's models. Sources: the "Table of all available classification weights" of
// torchvision's documentation (docs.pytorch.org/vision/stable/models.html: the `Params` and
// `GFLOPS` columns) and the metadata of each model's default weights in torchvision's source
// (`torchvision/models/<family>.py`: `"num_params"` and `"_ops"`, the GFLOPS with three
// decimals). torchvision's GFLOPS count one per multiply-accumulate (spec/shapes.md, 5).

#[test]
fn resnet18() {
    // ResNet18_Weights.IMAGENET1K_V1: num_params 11,689,512; GFLOPS 1.81, _ops 1.814.
    let macs = torchvision("resnet", "resnet18", 11_689_512, &["1.81", "1.814"]);
    // Measured with FlopCounterMode on torchvision's resnet18 (calibration/resnet18.json).
    assert_eq!(macs, 1_814_073_344);
}

#[test]
fn resnet34() {
    // ResNet34_Weights.IMAGENET1K_V1: num_params 21,797,672; GFLOPS 3.66, _ops 3.664.
    torchvision("resnet", "resnet34", 21_797_672, &["3.66", "3.664"]);
}

#[test]
fn resnet50() {
    // ResNet50_Weights.IMAGENET1K_V1 and _V2: num_params 25,557,032; GFLOPS 4.09, _ops 4.089.
    torchvision("resnet", "resnet50", 25_557_032, &["4.09", "4.089"]);
}

#[test]
fn resnet101() {
    // ResNet101_Weights.IMAGENET1K_V1 and _V2: num_params 44,549,160; GFLOPS 7.80, _ops 7.801.
    torchvision("resnet", "resnet101", 44_549_160, &["7.80", "7.801"]);
}

#[test]
fn resnet152() {
    // ResNet152_Weights.IMAGENET1K_V1 and _V2: num_params 60,192,808; GFLOPS 11.51,
    // _ops 11.514.
    torchvision("resnet", "resnet152", 60_192_808, &["11.51", "11.514"]);
}

#[test]
fn vgg16() {
    // VGG16_Weights.IMAGENET1K_V1: num_params 138,357,544; GFLOPS 15.47, _ops 15.47.
    let macs = torchvision("vgg", "vgg16", 138_357_544, &["15.47"]);
    // Measured with FlopCounterMode on torchvision's vgg16 (calibration/vgg16.json).
    assert_eq!(macs, 15_470_264_320);
}

#[test]
fn alexnet() {
    // AlexNet_Weights.IMAGENET1K_V1: num_params 61,100,840; GFLOPS 0.71, _ops 0.714.
    let macs = torchvision("alexnet", "alexnet", 61_100_840, &["0.71", "0.714"]);
    // Measured with FlopCounterMode on torchvision's alexnet (calibration/alexnet.json).
    assert_eq!(macs, 714_188_480);
}

#[test]
fn mobilenet_v2() {
    // MobileNet_V2_Weights.IMAGENET1K_V1 and _V2: num_params 3,504,872; GFLOPS 0.30,
    // _ops 0.301.
    let macs = torchvision("mobilenet", "mobilenet_v2", 3_504_872, &["0.30", "0.301"]);
    // Measured with FlopCounterMode on torchvision's mobilenet_v2 (calibration/mobilenet_v2.json).
    assert_eq!(macs, 300_774_272);
}

#[test]
fn mobilenet_v3_large() {
    // MobileNet_V3_Large_Weights.IMAGENET1K_V1 and _V2: num_params 5,483,032; GFLOPS 0.22,
    // _ops 0.217.
    torchvision("mobilenet", "mobilenet_v3_large", 5_483_032, &["0.22", "0.217"]);
}

#[test]
fn efficientnet_b0() {
    // EfficientNet_B0_Weights.IMAGENET1K_V1: num_params 5,288,548; GFLOPS 0.39, _ops 0.386.
    torchvision("efficientnet", "efficientnet_b0", 5_288_548, &["0.39", "0.386"]);
}

#[test]
fn convnext_tiny() {
    // ConvNeXt_Tiny_Weights.IMAGENET1K_V1: num_params 28,589,128 (with the 6,624 parameters
    // of the blocks' layer scales); GFLOPS 4.46, _ops 4.456.
    torchvision("convnext", "convnext_tiny", 28_589_128, &["4.46", "4.456"]);
}

#[test]
fn vit_b_16() {
    // ViT_B_16_Weights.IMAGENET1K_V1: num_params 86,567,656; GFLOPS 17.56, _ops 17.564.
    torchvision("vit", "vit_b_16", 86_567_656, &["17.56", "17.564"]);
}

// ---------------------------------------------------------------------------------------
// Models outside torchvision.

#[test]
fn articles_cnn() {
    // The articles' small CNN is the calibration harness's SimpleCNN: PyTorch counted 627,816
    // parameters and measured 1,936,648,192 MACs with FlopCounterMode
    // (calibration/simple_cnn.json).
    assert_eq!(figures("articles", "articles_cnn()", None), (627_816, 1_936_648_192));
}

/// The MACs of the original UNet on one 572 x 572 tile, computed layer by layer from the
/// paper's Figure 1 (valid 3x3 convolutions lose 2 pixels, 2x2 max pooling halves, 2x2
/// up-convolutions double): an independent count to compare netc's elaboration with.
fn unet_paper_macs() -> i128 {
    let conv = |cin: i128, cout: i128, size: i128, k: i128| size * size * cout * cin * k * k;
    let mut macs = 0;
    let mut size = 572;
    let mut cin = 1;
    let mut skips = Vec::new();
    for level in 0..5 {
        let c = 64 << level;
        if level > 0 {
            size /= 2;
        }
        size -= 2;
        macs += conv(cin, c, size, 3);
        size -= 2;
        macs += conv(c, c, size, 3);
        skips.push(size);
        cin = c;
    }
    for level in (0..4).rev() {
        let c = 64 << level;
        // The up-convolution: every input element is scattered into c x 2 x 2 outputs.
        macs += size * size * cin * c * 4;
        size *= 2;
        assert!(skips[level] >= size, "the skip connection is cropped, never padded");
        size -= 2;
        macs += conv(2 * c, c, size, 3);
        size -= 2;
        macs += conv(c, c, size, 3);
        cin = c;
    }
    assert_eq!(size, 388, "Figure 1's output tile");
    macs + conv(64, 2, size, 1)
}

#[test]
fn unet() {
    // The paper (Ronneberger et al., 2015) publishes no parameter count. Its Figure 1 gives
    // 31,030,658: 23 convolutions with biases (64 to 1024 channels, 2x2 up-convolutions, a 1x1
    // head to 2 classes), as the Keras model summaries of paper-faithful reimplementations
    // print it ("Total params: 31,030,658").
    let (params, macs) = figures("unet", "unet()", None);
    assert_eq!(params, 31_030_658);
    assert_eq!(macs, unet_paper_macs());
}

/// The MACs of a decoder-only transformer on `s` tokens at batch 1: per token, the weight
/// matrices of each layer (`per_layer`) and the output head (`vocab x d`), plus, per layer,
/// the two `S x S` products of attention (`2 S^2 d`, the full square also when causal, as
/// PyTorch's FlopCounterMode counts it).
fn decoder_macs(s: i128, layers: i128, d: i128, per_layer: i128, vocab: i128) -> i128 {
    s * (layers * per_layer + vocab * d) + layers * 2 * s * s * d
}

/// GPT-2's MACs: per layer `c_attn` 3 d^2, `c_proj` d^2, `c_fc` and the MLP's `c_proj`
/// 4 d^2 each.
fn gpt2_macs(s: i128, layers: i128, d: i128) -> i128 {
    decoder_macs(s, layers, d, 12 * d * d, 50_257)
}

/// GPT-2's parameters from its configuration: `wte` (vocabulary 50,257), `wpe` (context
/// 1,024), per layer `12 d^2 + 13 d` (two layer norms 4 d, `c_attn` 3 d^2 + 3 d, `c_proj`
/// d^2 + d, `c_fc` 4 d^2 + 4 d, `c_proj` 4 d^2 + d), `ln_f` 2 d; the LM head is tied to `wte`.
fn gpt2_params(layers: i128, d: i128) -> i128 {
    50_257 * d + 1_024 * d + layers * (12 * d * d + 13 * d) + 2 * d
}

#[test]
fn gpt2() {
    // Hugging Face `gpt2` (config: n_layer 12, n_embd 768, n_head 12): GPT2LMHeadModel has
    // 124,439,808 parameters (`model.num_parameters()`).
    assert_eq!(gpt2_params(12, 768), 124_439_808);
    let (params, macs) = figures("gpt2", "gpt2()", Some(1024));
    assert_eq!(params, 124_439_808);
    assert_eq!(macs, gpt2_macs(1024, 12, 768));
    // The calibration harness's GPT2Small is the same architecture; PyTorch's FlopCounterMode
    // measured 68,080,238,592 MACs at sequence 512 (calibration/gpt2_small.json).
    assert_eq!(figures("gpt2", "gpt2()", Some(512)).1, 68_080_238_592);
}

#[test]
fn gpt2_medium() {
    // Hugging Face `gpt2-medium` (n_layer 24, n_embd 1024, n_head 16): 354,823,168 parameters.
    assert_eq!(gpt2_params(24, 1024), 354_823_168);
    let (params, macs) = figures("gpt2", "gpt2_medium()", Some(1024));
    assert_eq!(params, 354_823_168);
    assert_eq!(macs, gpt2_macs(1024, 24, 1024));
}

#[test]
fn gpt2_large() {
    // Hugging Face `gpt2-large` (n_layer 36, n_embd 1280, n_head 20): 774,030,080 parameters.
    assert_eq!(gpt2_params(36, 1280), 774_030_080);
    let (params, macs) = figures("gpt2", "gpt2_large()", Some(1024));
    assert_eq!(params, 774_030_080);
    assert_eq!(macs, gpt2_macs(1024, 36, 1280));
}

#[test]
fn gpt2_xl() {
    // Hugging Face `gpt2-xl` (n_layer 48, n_embd 1600, n_head 25): 1,557,611,200 parameters.
    assert_eq!(gpt2_params(48, 1600), 1_557_611_200);
    let (params, macs) = figures("gpt2", "gpt2_xl()", Some(1024));
    assert_eq!(params, 1_557_611_200);
    assert_eq!(macs, gpt2_macs(1024, 48, 1600));
}

/// GPT-2 as transformers runs it (std.models.gpt2's `gpt2_lm`, `GPT2LMHeadModel`): each of
/// the four published configurations has the calibration model's count and MACs (the same
/// architecture, written from modeling_gpt2.py with its `Conv1D`s as biased linears).
#[test]
fn gpt2_lm_sizes() {
    for (call, layers, d) in [
        ("gpt2_lm()", 12, 768),
        ("gpt2_lm(d=1024, layers=24, heads=16, ffn=4096)", 24, 1024),
        ("gpt2_lm(d=1280, layers=36, heads=20, ffn=5120)", 36, 1280),
        ("gpt2_lm(d=1600, layers=48, heads=25, ffn=6400)", 48, 1600),
    ] {
        let (params, macs) = figures("gpt2", call, Some(1024));
        assert_eq!((params, macs), (gpt2_params(layers, d), gpt2_macs(1024, layers, d)), "{call}");
    }
}

#[test]
fn bert_base() {
    // Hugging Face `bert-base-uncased` (vocab_size 30522, max_position_embeddings 512,
    // type_vocab_size 2, hidden 768, 12 layers, intermediate 3072): BertModel with its pooler
    // has 109,482,240 parameters: embeddings (30,522 + 512 + 2) x 768 + 1,536 (layer norm);
    // per layer 4 (768^2 + 768) (attention) + 2 x 1,536 (layer norms) + 2 x 768 x 3,072 +
    // 3,072 + 768 (feed-forward); the pooler 768^2 + 768.
    let (d, ffn, layers) = (768, 3072, 12);
    let per_layer = 4 * (d * d + d) + 4 * d + 2 * d * ffn + ffn + d;
    assert_eq!((30_522 + 512 + 2) * d + 2 * d + layers * per_layer + d * d + d, 109_482_240);
    let s = 512;
    let (params, macs) = figures("bert", "bert_base()", Some(s as u32));
    assert_eq!(params, 109_482_240);
    // Per token, each layer's four projections and two feed-forward matrices; per layer the
    // two S x S products; the pooler on the first token only.
    assert_eq!(macs, s * layers * (4 * d * d + 2 * d * ffn) + layers * 2 * s * s * d + d * d);
}

/// LLaMA's parameters from its configuration: the embedding and the untied head (`vocab x d`
/// each), per layer the attention (`2 d^2 + 2 d kv_heads hd`), the SwiGLU network (`3 d ffn`)
/// and two RMS norms (`2 d`), and the final norm (`d`).
fn llama_params(vocab: i128, d: i128, layers: i128, heads: i128, kv_heads: i128, ffn: i128) -> i128 {
    let hd = d / heads;
    2 * vocab * d + layers * (2 * d * d + 2 * d * kv_heads * hd + 3 * d * ffn + 2 * d) + d
}

/// LLaMA's MACs on `s` tokens at batch 1.
fn llama_macs(s: i128, vocab: i128, d: i128, layers: i128, heads: i128, kv_heads: i128, ffn: i128) -> i128 {
    let hd = d / heads;
    decoder_macs(s, layers, d, 2 * d * d + 2 * d * kv_heads * hd + 3 * d * ffn, vocab)
}

/// The MACs of `s` tokens through a decoder of SiLU-gated MLPs whose attention has `heads`
/// query and `kv` key/value heads of `hd` (not necessarily `d / heads`): per token and layer
/// the four projections and the MLP, then the head; SDPA's two products over every query and
/// key.
#[allow(clippy::too_many_arguments)]
fn gated_decoder_macs(s: i128, vocab: i128, d: i128, layers: i128, heads: i128, kv: i128, hd: i128, ffn: i128) -> i128 {
    s * (layers * (d * hd * (2 * heads + 2 * kv) + 3 * d * ffn) + vocab * d) + layers * 2 * s * s * heads * hd
}

#[test]
fn llama2_7b() {
    // Hugging Face `meta-llama/Llama-2-7b-hf` (vocab_size 32000, hidden_size 4096,
    // num_hidden_layers 32, num_attention_heads 32, num_key_value_heads 32,
    // intermediate_size 11008): LlamaForCausalLM has 6,738,415,616 parameters.
    assert_eq!(llama_params(32_000, 4096, 32, 32, 32, 11_008), 6_738_415_616);
    let (params, macs) = figures("llama", "llama2_7b()", Some(4096));
    assert_eq!(params, 6_738_415_616);
    assert_eq!(macs, llama_macs(4096, 32_000, 4096, 32, 32, 32, 11_008));
}

#[test]
fn llama3_8b() {
    // Hugging Face `meta-llama/Meta-Llama-3-8B` (vocab_size 128256, hidden_size 4096,
    // num_hidden_layers 32, num_attention_heads 32, num_key_value_heads 8,
    // intermediate_size 14336): LlamaForCausalLM has 8,030,261,248 parameters.
    assert_eq!(llama_params(128_256, 4096, 32, 32, 8, 14_336), 8_030_261_248);
    let (params, macs) = figures("llama", "llama3_8b()", Some(8192));
    assert_eq!(params, 8_030_261_248);
    assert_eq!(macs, llama_macs(8192, 128_256, 4096, 32, 32, 8, 14_336));
}

/// Llama 3.x: the published parameter counts (the models' `config.json` on the Hugging Face
/// Hub: Llama 3.2 ties the head to the embedding, so its `vocab x d` counts once), and LoRA's
/// trainable parameters as peft counts them (`print_trainable_parameters`: r 16 on q, k, v and
/// o of the calibration's `llama_small`, 1,703,936; the calibration's `results_llm.json`).
#[test]
fn llama3_family_and_lora() {
    let tied = |vocab: i128, d: i128| vocab * d;
    let cases: [(&str, i128, i128); 4] = [
        ("llama3_2_1b()", llama_params(128_256, 2048, 16, 32, 8, 8192) - tied(128_256, 2048), 1_235_814_400),
        ("llama3_2_3b()", llama_params(128_256, 3072, 28, 24, 8, 8192) - tied(128_256, 3072), 3_212_749_824),
        ("llama3_1_8b()", llama_params(128_256, 4096, 32, 32, 8, 14_336), 8_030_261_248),
        ("llama3_1_70b()", llama_params(128_256, 8192, 80, 64, 8, 28_672), 70_553_706_496),
    ];
    for (call, formula, published) in cases {
        assert_eq!(formula, published, "{call}: the formula");
        assert_eq!(figures("llama", call, Some(128)).0, published, "{call}");
    }
    let mut db = Database::new();
    let text = "use std.models.llama\ntrain probe { model llama(vocab=32000, d=2048, layers=8, heads=32, kv_heads=8, \
                ffn=5632, lora_r=16, lora_alpha=32, lora_dropout=0.05, lora_targets=\"q_proj,k_proj,v_proj,o_proj\")  \
                batch 1  seq 128  precision bf16  optimizer adamw  loss causal_lm }\n";
    let file = db.set_file(FileName::new("probe.net"), text.to_string());
    let r = report(&db, &[file], None);
    let s = r.scenarios.first().expect("a report");
    // The base's 491,816,960 and the adapters' 1,703,936.
    assert_eq!((s.params, s.trainable_params), (491_816_960 + 1_703_936, 1_703_936));
}

/// Qwen2.5 (std.models.qwen2: Llama with biased q, k and v projections, as transformers'
/// `Qwen2Attention`): each size's published parameter count (the Hub's `safetensors` totals),
/// and the same count from the formula: Llama's plus `d + 2 kv_heads (d / heads)` biases a
/// layer.
#[test]
fn qwen2_5_family() {
    let params = |vocab: i128, d: i128, layers: i128, heads: i128, kv: i128, ffn: i128, tied: bool| {
        let hd = d / heads;
        let untied = llama_params(vocab, d, layers, heads, kv, ffn) + layers * (heads * hd + 2 * kv * hd);
        if tied { untied - vocab * d } else { untied }
    };
    let cases: [(&str, i128, i128); 7] = [
        ("qwen2_5_0_5b()", params(151_936, 896, 24, 14, 2, 4864, true), 494_032_768),
        ("qwen2_5_1_5b()", params(151_936, 1536, 28, 12, 2, 8960, true), 1_543_714_304),
        (
            "qwen2(vocab=151936, d=2048, layers=36, heads=16, kv_heads=2, ffn=11008, tied=true)",
            params(151_936, 2048, 36, 16, 2, 11_008, true),
            3_085_938_688,
        ),
        ("qwen2_5_7b()", params(152_064, 3584, 28, 28, 4, 18_944, false), 7_615_616_512),
        (
            "qwen2(d=5120, layers=48, heads=40, kv_heads=8, ffn=13824)",
            params(152_064, 5120, 48, 40, 8, 13_824, false),
            14_770_033_664,
        ),
        (
            "qwen2(d=5120, layers=64, heads=40, kv_heads=8, ffn=27648)",
            params(152_064, 5120, 64, 40, 8, 27_648, false),
            32_763_876_352,
        ),
        (
            "qwen2(d=8192, layers=80, heads=64, kv_heads=8, ffn=29568)",
            params(152_064, 8192, 80, 64, 8, 29_568, false),
            72_706_203_648,
        ),
    ];
    for (call, formula, published) in cases {
        assert_eq!(formula, published, "{call}: the formula");
        assert_eq!(figures("qwen2", call, Some(128)).0, published, "{call}");
    }
}

/// Mistral 7B v0.3 (std.models.mistral: Llama's model, transformers 5.24's
/// `MistralForCausalLM`, no sliding window) and v0.1 (a window of 4,096): their published
/// 7,248,023,552 and 7,241,732,096 parameters (the Hub's `safetensors` totals) and Llama's
/// formula for them, and their MACs.
#[test]
fn mistral_7b() {
    assert_eq!(llama_params(32_768, 4096, 32, 32, 8, 14_336), 7_248_023_552);
    let (params, macs) = figures("mistral", "mistral_7b()", Some(4096));
    assert_eq!(params, 7_248_023_552);
    assert_eq!(macs, llama_macs(4096, 32_768, 4096, 32, 32, 8, 14_336));
    // v0.1: a vocabulary of 32000; at 4,096 tokens its window is reached, and attention under
    // the mask over repeated keys and values does the same products.
    assert_eq!(llama_params(32_000, 4096, 32, 32, 8, 14_336), 7_241_732_096);
    let (params, macs) = figures("mistral", "mistral_7b_v0_1()", Some(4096));
    assert_eq!(params, 7_241_732_096);
    assert_eq!(macs, llama_macs(4096, 32_000, 4096, 32, 32, 8, 14_336));
}

/// Gemma 2 (std.models.gemma2, transformers 5.24's `Gemma2ForCausalLM`): the parameter
/// counts of 2B, 9B and 27B as transformers builds them from their published configs
/// (tests/fixtures/ops/measure_gemma2.py, on the meta device), the formula for them (the
/// tied embedding, `d * hd * (2 heads + 2 kv_heads)` attention and `3 d ffn` MLP weights and
/// four norms a layer, the final norm), and the MACs of a sequence: eager attention's two
/// matrix products over every query and key (`heads * hd` wide, not `d`).
#[test]
fn gemma2_family() {
    let measured: serde_json::Value =
        serde_json::from_str(include_str!("../fixtures/ops/measurements_gemma2.json")).expect("valid JSON");
    let params = |d: i128, layers: i128, heads: i128, kv: i128, hd: i128, ffn: i128| {
        256_000 * d + layers * (d * hd * (2 * heads + 2 * kv) + 3 * d * ffn + 4 * d) + d
    };
    let cases = [
        ("gemma2_2b", (2304, 26, 8, 4, 256, 9216)),
        ("gemma2_9b", (3584, 42, 16, 8, 256, 14_336)),
        ("gemma2_27b", (4608, 46, 32, 16, 128, 36_864)),
    ];
    for (name, (d, layers, heads, kv, hd, ffn)) in cases {
        let published = measured["params"][name].as_i64().expect("a count") as i128;
        assert_eq!(params(d, layers, heads, kv, hd, ffn), published, "{name}: the formula");
        let (ours, ours_macs) = figures("gemma2", &format!("{name}()"), Some(512));
        assert_eq!(ours, published, "{name}");
        assert_eq!(ours_macs, gated_decoder_macs(512, 256_000, d, layers, heads, kv, hd, ffn), "{name}: MACs");
    }
}

/// VaultGemma (std.models.vaultgemma, transformers 5.24's `VaultGemmaForCausalLM`): its count
/// at `VaultGemmaConfig()` (built on the meta device: 2,614,222,080) and at the calibration's
/// `vaultgemma_small` (114,731,136), the formula (Gemma 2's with two norms a layer, not four),
/// the MACs of a sequence (Gemma 2's: the norms have none), the buffers (the rotary
/// `inv_freq` and its original over half a head of 256, and `embed_scale`, the model's
/// dtype) and peft's LoRA count for the small model.
#[test]
fn vaultgemma_family() {
    let params = |vocab: i128, d: i128, layers: i128, heads: i128, kv: i128, hd: i128, ffn: i128| {
        vocab * d + layers * (d * hd * (2 * heads + 2 * kv) + 3 * d * ffn + 2 * d) + d
    };
    assert_eq!(params(256_000, 2304, 26, 8, 4, 256, 9216), 2_614_222_080);
    let (ours, macs) = figures("vaultgemma", "vaultgemma()", Some(512));
    assert_eq!(ours, 2_614_222_080);
    assert_eq!(macs, gated_decoder_macs(512, 256_000, 2304, 26, 8, 4, 256, 9216));
    assert_eq!(probe("vaultgemma", "vaultgemma()", Some(16)).ledgers.buffers, 2 * 128 * 4 + 4);
    let small_params = params(32_000, 1152, 4, 8, 4, 128, 4608);
    assert_eq!(small_params, 114_731_136);
    let small = "vaultgemma(vocab=32000, d=1152, layers=4, heads=8, kv_heads=4, head_dim=128, ffn=4608, window=512";
    assert_small_family(
        "vaultgemma",
        small,
        small_params,
        lora_params(4, &[(1152, 1024), (1152, 512), (1152, 512), (1024, 1152)]),
    );
}

/// Gemma 3 (std.models.gemma3, transformers 5.24's `Gemma3ForCausalLM`): the parameter counts
/// of 1B (`google/gemma-3-1b-pt`, published 999,885,952) and of the language models of 4B, 12B
/// and 27B (their `text_config`s built as `Gemma3ForCausalLM` on the meta device by
/// transformers 5.24, unique parameters counted), the formula for them (Gemma 2's, plus the
/// `q_norm` and `k_norm` weights, `2 hd` a layer), and the MACs of a sequence: SDPA's two
/// products over every query and key in every layer, sliding or global.
#[test]
fn gemma3_family() {
    let params = |vocab: i128, d: i128, layers: i128, heads: i128, kv: i128, hd: i128, ffn: i128| {
        vocab * d + layers * (d * hd * (2 * heads + 2 * kv) + 3 * d * ffn + 4 * d + 2 * hd) + d
    };
    let cases = [
        ("gemma3_1b", (262_144, 1152, 26, 4, 1, 256, 6912), 999_885_952),
        ("gemma3_4b_text", (262_208, 2560, 34, 8, 4, 256, 10_240), 3_880_263_168),
        ("gemma3_12b_text", (262_208, 3840, 48, 16, 8, 256, 15_360), 11_766_034_176),
        ("gemma3_27b_text", (262_208, 5376, 62, 32, 16, 128, 21_504), 27_009_346_304),
    ];
    for (name, (vocab, d, layers, heads, kv, hd, ffn), published) in cases {
        assert_eq!(params(vocab, d, layers, heads, kv, hd, ffn), published, "{name}: the formula");
        let (ours, ours_macs) = figures("gemma3", &format!("{name}()"), Some(2048));
        assert_eq!(ours, published, "{name}");
        assert_eq!(ours_macs, gated_decoder_macs(2048, vocab, d, layers, heads, kv, hd, ffn), "{name}: MACs");
    }
}

/// OLMo 2 (std.models.olmo2, transformers 5.24's `Olmo2ForCausalLM`): the parameter counts
/// of 1B (`allenai/OLMo-2-0425-1B`), 7B and 13B (`OLMo-2-1124`) and 32B (`OLMo-2-0325-32B`),
/// their configs built on the meta device by transformers 5.24; the formula for them (Llama's
/// untied one, plus `q_norm` and `k_norm` over the whole projections, `(heads + kv_heads) hd`
/// a layer), and the MACs of a sequence.
#[test]
fn olmo2_family() {
    let params = |vocab: i128, d: i128, layers: i128, heads: i128, kv: i128, ffn: i128| {
        let hd = d / heads;
        2 * vocab * d + layers * (d * hd * (2 * heads + 2 * kv) + 3 * d * ffn + 2 * d + (heads + kv) * hd) + d
    };
    let cases = [
        ("olmo2_1b", (100_352, 2048, 16, 16, 16, 8192), 1_484_916_736),
        ("olmo2_7b", (100_352, 4096, 32, 32, 32, 11_008), 7_298_617_344),
        ("olmo2_13b", (100_352, 5120, 40, 40, 40, 13_824), 13_716_198_400),
        ("olmo2_32b", (100_352, 5120, 64, 40, 8, 27_648), 32_234_279_936),
    ];
    for (name, (vocab, d, layers, heads, kv, ffn), published) in cases {
        assert_eq!(params(vocab, d, layers, heads, kv, ffn), published, "{name}: the formula");
        let (ours, ours_macs) = figures("olmo2", &format!("{name}()"), Some(2048));
        assert_eq!(ours, published, "{name}");
        assert_eq!(ours_macs, gated_decoder_macs(2048, vocab, d, layers, heads, kv, d / heads, ffn), "{name}: MACs");
    }
}

/// Cohere (std.models.cohere, transformers 5.24's `CohereForCausalLM`): the parameter counts of
/// Aya 23 8B, Command R v01 (35B) and Command R+ (104B, `qk_norm`, a `cohere(...)` call), their
/// `CohereConfig`s built on the meta device by transformers 5.24; the formula (one bias-free
/// LayerNorm a layer, per-head query and key norms with `qk_norm`, the head tied), and the
/// MACs of a sequence.
#[test]
fn cohere_family() {
    let params = |d: i128, layers: i128, heads: i128, kv: i128, ffn: i128, qk_norm: bool| {
        let hd = d / heads;
        let norms = d + if qk_norm { (heads + kv) * hd } else { 0 };
        256_000 * d + layers * (d * hd * (2 * heads + 2 * kv) + 3 * d * ffn + norms) + d
    };
    let cases = [
        ("aya_23_8b()", (4096, 32, 32, 8, 14_336, false), 8_028_033_024),
        ("command_r_v01()", (8192, 40, 64, 64, 22_528, false), 34_980_831_232),
        (
            "cohere(d=12288, layers=64, heads=96, kv_heads=8, ffn=33792, qk_norm=true)",
            (12_288, 64, 96, 8, 33_792, true),
            103_810_674_688,
        ),
    ];
    for (call, (d, layers, heads, kv, ffn, qk_norm), published) in cases {
        assert_eq!(params(d, layers, heads, kv, ffn, qk_norm), published, "{call}: the formula");
        let (ours, ours_macs) = figures("cohere", call, Some(2048));
        assert_eq!(ours, published, "{call}");
        assert_eq!(ours_macs, gated_decoder_macs(2048, 256_000, d, layers, heads, kv, d / heads, ffn), "{call}: MACs");
    }
}

/// Command R7B (std.models.cohere2, transformers 5.24's `Cohere2ForCausalLM`): its count
/// (its `Cohere2Config` built on the meta device: 8,028,033,024, Aya 23 8B's formula: the
/// sliding window and the unrotated global layers have no parameters), its MACs at 2,048
/// tokens (within the window), the calibration's `cohere2_small` and peft's LoRA count for
/// it; and that after a decode step at 8,192 tokens a sliding layer's cache holds the window's
/// storage (its last 1,023 tokens are a view of the 1,024 the update concatenated) while a
/// global layer's holds the context (8,193 tokens): 23,070,720 bytes for 4 key/value heads of
/// 64 in bf16, as the calibration measured (`cohere2_small`, b1_s8192, `kv_cache_bytes`).
#[test]
fn cohere2_family() {
    let (vocab, d, layers, heads, kv, ffn) = (256_000, 4096, 32, 32, 8, 14_336);
    let hd = d / heads;
    assert_eq!(vocab * d + layers * (d * hd * (2 * heads + 2 * kv) + 3 * d * ffn + d) + d, 8_028_033_024);
    let (ours, macs) = figures("cohere2", "command_r7b()", Some(2048));
    assert_eq!(ours, 8_028_033_024);
    assert_eq!(macs, gated_decoder_macs(2048, vocab, d, layers, heads, kv, hd, ffn));
    let small = "cohere2(vocab=32000, d=1024, layers=8, heads=16, kv_heads=4, ffn=2816, window=1024";
    assert_small_family(
        "cohere2",
        small,
        122_954_752,
        lora_params(8, &[(1024, 1024), (1024, 256), (1024, 256), (1024, 1024)]),
    );
    let text = format!(
        "use std.models.cohere2\ninfer s {{ model {small}, logits_to_keep=1)  batch 1  seq 1  context 8192  no_grad  eval  precision bf16  cache dynamic }}\n"
    );
    let mut db = Database::new();
    let file = db.set_file(FileName::new("probe.net"), text);
    let r = report(&db, &[file], None);
    let token = 2 * 4 * 64 * 2;
    assert_eq!(r.scenarios[0].kv_cache_bytes, (6 * 1024 + 2 * 8193) * token);
    assert_eq!(r.scenarios[0].kv_cache_bytes, 23_070_720);
}

/// The parameters of DeepSeek's multi-head latent attention (`DeepseekV2Attention`,
/// `DeepseekV3Attention`): the queries through `q_a_proj`, its norm and `q_b_proj` (or one
/// `q_proj` without a `q_rank`), `kv_a_proj_with_mqa` to the latent and the rotary key, the
/// latent's norm, `kv_b_proj` to every head's key and value parts, `o_proj`; `dims` is (nope,
/// rope, v) per head.
fn latent_attention_params(d: i128, heads: i128, q_rank: i128, kv_rank: i128, dims: (i128, i128, i128)) -> i128 {
    let (nope, rope, v) = dims;
    let query =
        if q_rank > 0 { d * q_rank + q_rank + q_rank * heads * (nope + rope) } else { d * heads * (nope + rope) };
    query + d * (kv_rank + rope) + kv_rank + kv_rank * heads * (nope + v) + heads * v * d
}

/// The parameters of a DeepSeekMoE layer (DeepSeek-V2, V3, GLM-4.5): the router's weight, the
/// routed experts' gate, up and down projections (`ffn` each) and one SiLU-gated MLP of
/// `shared_ffn` for the shared experts.
fn deepseek_moe_params(d: i128, experts: i128, ffn: i128, shared_ffn: i128) -> i128 {
    experts * d + 3 * experts * d * ffn + 3 * d * shared_ffn
}

/// DeepSeek-V3 (std.models.deepseek_v3, transformers 5.24's `DeepseekV3ForCausalLM`): the
/// parameter count of DeepSeek-V3 (its `DeepseekV3Config` built on the meta device by
/// transformers 5.24: 671,026,404,352, of which 37,552,282,624 active a token with 8 of 256
/// routed experts) and the calibration's `deepseek_v3_small` (165,867,008); the formula
/// (multi-head latent attention's low-rank projections and their norms, dense MLPs in the
/// first layers, then a router, routed and shared experts; the head untied); peft's LoRA
/// count for the small one (q/k/v/o targets match only `o_proj`: 131,072).
#[test]
fn deepseek_v3_family() {
    #[allow(clippy::too_many_arguments)]
    let params = |vocab: i128,
                  d: i128,
                  layers: i128,
                  dense: i128,
                  heads: i128,
                  q_rank: i128,
                  kv_rank: i128,
                  dims: (i128, i128, i128),
                  dense_ffn: i128,
                  experts: i128,
                  ffn: i128| {
        let attention = latent_attention_params(d, heads, q_rank, kv_rank, dims);
        2 * vocab * d
            + d
            + layers * (2 * d + attention)
            + dense * 3 * d * dense_ffn
            + (layers - dense) * deepseek_moe_params(d, experts, ffn, ffn)
    };
    let full = params(129_280, 7168, 61, 3, 128, 1536, 512, (128, 64, 128), 18_432, 256, 2048);
    assert_eq!(full, 671_026_404_352);
    assert_eq!(full - 58 * (256 - 8) * 3 * 7168 * 2048, 37_552_282_624);
    let small = "deepseek_v3(vocab=32000, d=1024, layers=4, dense_layers=1, heads=16, q_rank=384, kv_rank=256, nope=64, rope=32, v_dim=64, dense_ffn=2816, experts=16, top_k=4, ffn=512, n_group=4, topk_group=2";
    assert_eq!(params(32_000, 1024, 4, 1, 16, 384, 256, (64, 32, 64), 2816, 16, 512), 165_867_008);
    let reports = family_probes("deepseek_v3", &["deepseek_v3()"], small, Q_K_V_O);
    let [big, small_run, adapted] = &reports[..] else { panic!("three reports") };
    assert_eq!((big.params, big.active_params), (671_026_404_352, 37_552_282_624));
    assert_eq!(small_run.params, 165_867_008);
    assert_eq!((adapted.params - adapted.trainable_params, adapted.trainable_params), (165_867_008, 131_072));
}

/// Youtu-LLM (std.models.youtu, transformers 5.24's `YoutuForCausalLM`): its count at
/// `YoutuConfig()` (Youtu-LLM-2B's, built on the meta device: 1,961,560,064) and at the
/// calibration's `youtu_small` (101,794,560), the formula (DeepSeek-V3's latent attention and a
/// dense MLP in every layer, the head tied), the buffers (the rotary tables over
/// `qk_rope_head_dim`) and peft's LoRA count for the small one (q/k/v/o targets match only
/// `o_proj`).
#[test]
fn youtu_family() {
    let params = |vocab: i128, d: i128, layers: i128, heads: i128, q_rank: i128, kv_rank: i128, dims, ffn: i128| {
        vocab * d + d + layers * (2 * d + latent_attention_params(d, heads, q_rank, kv_rank, dims) + 3 * d * ffn)
    };
    assert_eq!(params(128_256, 2048, 32, 16, 1536, 512, (128, 64, 128), 6144), 1_961_560_064);
    assert_eq!(params(32_000, 1024, 6, 16, 384, 256, (64, 32, 64), 2816), 101_794_560);
    let small =
        "youtu(vocab=32000, d=1024, layers=6, heads=16, q_rank=384, kv_rank=256, nope=64, rope=32, v_dim=64, ffn=2816";
    let reports = family_probes("youtu", &["youtu()"], small, Q_K_V_O);
    let [big, small_run, adapted] = &reports[..] else { panic!("three reports") };
    assert_eq!(big.params, 1_961_560_064);
    assert_eq!(big.ledgers.buffers, 2 * 32 * 4);
    assert_eq!(small_run.params, 101_794_560);
    assert_eq!(
        (adapted.params - adapted.trainable_params, adapted.trainable_params),
        (101_794_560, 6 * 16 * (1024 + 1024))
    );
}

/// MiniCPM3 (std.models.minicpm3, transformers 5.24's `MiniCPM3ForCausalLM`): its count at
/// `MiniCPM3Config()` (MiniCPM3-4B's, built on the meta device: 4,073,875,968) and at the
/// calibration's `minicpm3_small` (101,794,560), the formula (Youtu's: latent attention and a
/// dense MLP in every layer, the head tied), the buffers (`embed_scale`, an int64 for the
/// integer `scale_emb`, and the rotary tables over `qk_rope_head_dim`) and peft's LoRA count for
/// the small one (q/k/v/o targets match only `o_proj`).
#[test]
fn minicpm3_family() {
    let params = |vocab: i128, d: i128, layers: i128, heads: i128, q_rank: i128, kv_rank: i128, dims, ffn: i128| {
        vocab * d + d + layers * (2 * d + latent_attention_params(d, heads, q_rank, kv_rank, dims) + 3 * d * ffn)
    };
    assert_eq!(params(73_448, 2560, 62, 40, 768, 256, (64, 32, 64), 6400), 4_073_875_968);
    assert_eq!(params(32_000, 1024, 6, 16, 384, 256, (64, 32, 64), 2816), 101_794_560);
    let small = "minicpm3(vocab=32000, d=1024, layers=6, heads=16, q_rank=384, kv_rank=256, nope=64, rope=32, v_dim=64, ffn=2816, residual_scale=0.5715476066494083";
    let reports = family_probes("minicpm3", &["minicpm3()"], small, Q_K_V_O);
    let [big, small_run, adapted] = &reports[..] else { panic!("three reports") };
    assert_eq!(big.params, 4_073_875_968);
    assert_eq!(big.ledgers.buffers, 8 + 2 * 16 * 4);
    assert_eq!(small_run.params, 101_794_560);
    assert_eq!(
        (adapted.params - adapted.trainable_params, adapted.trainable_params),
        (101_794_560, 6 * 16 * (1024 + 1024))
    );
}

/// DeepSeek-V2 (std.models.deepseek_v2, transformers 5.24's `DeepseekV2ForCausalLM`): the
/// parameter counts of DeepSeek-V2 and DeepSeek-V2-Lite (their `DeepseekV2Config`s built on
/// the meta device by transformers 5.24: 235,741,434,880, of which 21,375,800,320 active a
/// token with 6 of 160 routed experts, and 15,706,484,224, of which 2,661,150,208 active with
/// 6 of 64) and the calibration's `deepseek_v2_small` (172,943,360); the formula (latent
/// attention with or without the query's low-rank projection, one dense layer, then a router,
/// routed and 2 shared experts; the head untied); peft's LoRA count for the small one
/// (q/k/v/o targets match `q_proj` and `o_proj`: 294,912, the harness's).
#[test]
fn deepseek_v2_family() {
    #[allow(clippy::too_many_arguments)]
    let params = |vocab: i128,
                  d: i128,
                  layers: i128,
                  heads: i128,
                  q_rank: i128,
                  kv_rank: i128,
                  dense_ffn: i128,
                  experts: i128,
                  ffn: i128| {
        // Every model here has 128 + 64 / 128 head dimensions but the small one.
        let dims = if d == 1024 { (64, 32, 64) } else { (128, 64, 128) };
        let attention = latent_attention_params(d, heads, q_rank, kv_rank, dims);
        2 * vocab * d
            + d
            + layers * (2 * d + attention)
            + 3 * d * dense_ffn
            + (layers - 1) * deepseek_moe_params(d, experts, ffn, 2 * ffn)
    };
    let full = params(102_400, 5120, 60, 128, 1536, 512, 12_288, 160, 1536);
    assert_eq!(full, 235_741_434_880);
    assert_eq!(full - 59 * (160 - 6) * 3 * 5120 * 1536, 21_375_800_320);
    let lite = params(102_400, 2048, 27, 16, 0, 512, 10_944, 64, 1408);
    assert_eq!(lite, 15_706_484_224);
    assert_eq!(lite - 26 * (64 - 6) * 3 * 2048 * 1408, 2_661_150_208);
    assert_eq!(params(32_000, 1024, 4, 16, 0, 256, 2816, 16, 512), 172_943_360);
    let small = "deepseek_v2(vocab=32000, d=1024, layers=4, dense_layers=1, heads=16, q_rank=0, kv_rank=256, nope=64, rope=32, v_dim=64, dense_ffn=2816, experts=16, top_k=4, ffn=512, n_shared=2, n_group=4, topk_group=2, scaling=2.5";
    let reports = family_probes("deepseek_v2", &["deepseek_v2()", "deepseek_v2_lite()"], small, Q_K_V_O);
    let [big, lite_run, small_run, adapted] = &reports[..] else { panic!("four reports") };
    assert_eq!((big.params, big.active_params), (235_741_434_880, 21_375_800_320));
    assert_eq!((lite_run.params, lite_run.active_params), (15_706_484_224, 2_661_150_208));
    assert_eq!(small_run.params, 172_943_360);
    // q/k/v/o targets match `q_proj` (1024 -> 16 heads of 96) and `o_proj` (16 x 64 -> 1024).
    let lora = lora_params(4, &[(1024, 16 * 96), (16 * 64, 1024)]);
    assert_eq!(lora, 294_912);
    assert_eq!((adapted.params - adapted.trainable_params, adapted.trainable_params), (172_943_360, lora));
}

/// GLM-4.5 (std.models.glm4_moe, transformers 5.24's `Glm4MoeForCausalLM`): the parameter
/// counts of GLM-4.5-Air and GLM-4.5 (their `Glm4MoeConfig`s with `head_dim=128` built on the
/// meta device by transformers 5.24: 106,852,245,504, of which 13,424,123,904 active a token
/// with 8 of 128 routed experts, and 352,797,814,784, of which 33,632,251,904 active with 8 of
/// 160) and the calibration's `glm4_moe_small` (175,446,016); the formula (biased query, key
/// and value projections, per-head norms in GLM-4.5, dense MLPs in the first layers, then
/// DeepSeek-V3's router, routed and shared experts; the head untied); peft's LoRA count for
/// the small one (589,824, the harness's).
#[test]
fn glm4_moe_family() {
    #[allow(clippy::too_many_arguments)]
    let params = |vocab: i128,
                  d: i128,
                  layers: i128,
                  dense: i128,
                  heads: i128,
                  qk_norm: bool,
                  dense_ffn: i128,
                  experts: i128,
                  ffn: i128| {
        // Every model here has key/value heads of 128, 8 of them but in the small one.
        let (kv, hd) = (if d == 1024 { 4 } else { 8 }, 128);
        let norms = if qk_norm { 2 * hd } else { 0 };
        let attention = d * heads * hd + heads * hd + 2 * (d * kv * hd + kv * hd) + heads * hd * d + norms;
        2 * vocab * d
            + d
            + layers * (2 * d + attention)
            + dense * 3 * d * dense_ffn
            + (layers - dense) * deepseek_moe_params(d, experts, ffn, ffn)
    };
    let air = params(151_552, 4096, 46, 1, 96, false, 10_944, 128, 1408);
    assert_eq!(air, 106_852_245_504);
    assert_eq!(air - 45 * (128 - 8) * 3 * 4096 * 1408, 13_424_123_904);
    let full = params(151_552, 5120, 92, 3, 96, true, 12_288, 160, 1536);
    assert_eq!(full, 352_797_814_784);
    assert_eq!(full - 89 * (160 - 8) * 3 * 5120 * 1536, 33_632_251_904);
    assert_eq!(params(32_000, 1024, 4, 1, 16, true, 2816, 16, 512), 175_446_016);
    let small = "glm4_moe(vocab=32000, d=1024, layers=4, dense_layers=1, heads=16, kv_heads=4, head_dim=128, qk_norm=true, dense_ffn=2816, experts=16, top_k=4, ffn=512, n_group=4, topk_group=2, scaling=2.5";
    let glm4_5 = "glm4_moe(d=5120, layers=92, dense_layers=3, qk_norm=true, dense_ffn=12288, experts=160, ffn=1536, scaling=2.5)";
    let reports = family_probes("glm4_moe", &["glm4_moe()", glm4_5], small, Q_K_V_O);
    let [air_run, full_run, small_run, adapted] = &reports[..] else { panic!("four reports") };
    assert_eq!((air_run.params, air_run.active_params), (106_852_245_504, 13_424_123_904));
    assert_eq!((full_run.params, full_run.active_params), (352_797_814_784, 33_632_251_904));
    assert_eq!(small_run.params, 175_446_016);
    // q, k, v and o over 16 query and 4 key/value heads of 128.
    let lora = lora_params(4, &[(1024, 16 * 128), (1024, 4 * 128), (1024, 4 * 128), (16 * 128, 1024)]);
    assert_eq!(lora, 589_824);
    assert_eq!((adapted.params - adapted.trainable_params, adapted.trainable_params), (175_446_016, lora));
}

/// GLM-4 and GLM-4-0414 (std.models.glm and std.models.glm4, transformers 5.24's
/// `GlmForCausalLM` and `Glm4ForCausalLM`): GLM-4-9B's and GLM-4-9B-0414's parameter counts
/// (`GlmConfig()` and `Glm4Config()`, their defaults, built on the meta device: 9,399,951,360
/// and 9,400,279,040), the formula (biased query, key and value projections, a fused
/// gate-and-up projection, the head untied, two norms a layer more in GLM-4-0414), their MACs,
/// the calibration's `glm_small` and `glm4_small` and peft's LoRA count for them.
#[test]
fn glm_family() {
    let params = |vocab: i128, d: i128, layers: i128, heads: i128, kv: i128, hd: i128, ffn: i128, norms: i128| {
        let attention = d * heads * hd + heads * hd + 2 * (d * kv * hd + kv * hd) + heads * hd * d;
        2 * vocab * d + layers * (attention + 3 * d * ffn + norms * d) + d
    };
    for (family, model, norms, published) in
        [("glm", "glm_4_9b()", 2, 9_399_951_360), ("glm4", "glm4_9b_0414()", 4, 9_400_279_040)]
    {
        assert_eq!(params(151_552, 4096, 40, 32, 2, 128, 13_696, norms), published, "{model}: the formula");
        let (ours, macs) = figures(family, model, Some(2048));
        assert_eq!(ours, published, "{model}");
        assert_eq!(macs, gated_decoder_macs(2048, 151_552, 4096, 40, 32, 2, 128, 13_696), "{model}: MACs");
        let small_params = params(32_000, 1024, 6, 16, 4, 64, 2816, norms);
        let small = format!("{family}(vocab=32000, d=1024, layers=6, heads=16, kv_heads=4, head_dim=64, ffn=2816");
        let reports = family_probes(family, &[], &small, Q_K_V_O);
        let [small_run, adapted] = &reports[..] else { panic!("two reports") };
        assert_eq!(small_run.params, small_params, "{family}_small");
        // q, k, v and o over 16 query and 4 key/value heads of 64, in 6 layers.
        let lora = lora_params(6, &[(1024, 1024), (1024, 256), (1024, 256), (1024, 1024)]);
        assert_eq!((adapted.params - adapted.trainable_params, adapted.trainable_params), (small_params, lora));
    }
    assert_eq!(params(32_000, 1024, 6, 16, 4, 64, 2816, 2), 133_191_680);
}

/// ERNIE-4.5-0.3B (std.models.ernie4_5, transformers 5.24's `Ernie4_5ForCausalLM`): its count
/// (`Ernie4_5Config()`, its defaults, built on the meta device: 360,748,032), the formula
/// (Llama's with heads of 128 and the head tied), its MACs, the calibration's
/// `ernie4_5_small` (100,414,464) and peft's LoRA count for it (638,976, the harness's).
#[test]
fn ernie4_5_family() {
    let params = |vocab: i128, d: i128, layers: i128, heads: i128, kv: i128, hd: i128, ffn: i128| {
        vocab * d + layers * (d * hd * (2 * heads + 2 * kv) + 3 * d * ffn + 2 * d) + d
    };
    assert_eq!(params(103_424, 1024, 18, 16, 2, 128, 3072), 360_748_032);
    let (ours, macs) = figures("ernie4_5", "ernie4_5_0_3b()", Some(2048));
    assert_eq!(ours, 360_748_032);
    assert_eq!(macs, gated_decoder_macs(2048, 103_424, 1024, 18, 16, 2, 128, 3072));
    assert_eq!(params(32_000, 1024, 6, 16, 4, 64, 2816), 100_414_464);
    let small = "ernie4_5(vocab=32000, d=1024, layers=6, heads=16, kv_heads=4, head_dim=64, ffn=2816";
    let reports = family_probes("ernie4_5", &[], small, Q_K_V_O);
    let [small_run, adapted] = &reports[..] else { panic!("two reports") };
    assert_eq!(small_run.params, 100_414_464);
    let lora = lora_params(6, &[(1024, 1024), (1024, 256), (1024, 256), (1024, 1024)]);
    assert_eq!(lora, 638_976);
    assert_eq!((adapted.params - adapted.trainable_params, adapted.trainable_params), (100_414_464, lora));
}

/// Helium-1 Preview 2B (std.models.helium, transformers 5.24's `HeliumForCausalLM`): its count
/// (`HeliumConfig()`, its defaults, built on the meta device: 2,172,643,840), the formula
/// (Llama's with heads of 128 and the head untied), its MACs, the calibration's
/// `helium_small` and peft's LoRA count for it.
#[test]
fn helium_family() {
    let params = |vocab: i128, d: i128, layers: i128, heads: i128, kv: i128, hd: i128, ffn: i128| {
        2 * vocab * d + layers * (d * hd * (2 * heads + 2 * kv) + 3 * d * ffn + 2 * d) + d
    };
    assert_eq!(params(48_000, 2560, 24, 20, 20, 128, 7040), 2_172_643_840);
    let (ours, macs) = figures("helium", "helium_2b()", Some(2048));
    assert_eq!(ours, 2_172_643_840);
    assert_eq!(macs, gated_decoder_macs(2048, 48_000, 2560, 24, 20, 20, 128, 7040));
    let small_params = params(32_000, 1024, 6, 16, 4, 64, 2816);
    let small = "helium(vocab=32000, d=1024, layers=6, heads=16, kv_heads=4, head_dim=64, ffn=2816";
    assert_small_family(
        "helium",
        small,
        small_params,
        lora_params(6, &[(1024, 1024), (1024, 256), (1024, 256), (1024, 1024)]),
    );
}

/// AFM-4.5B (std.models.arcee, transformers 5.24's `ArceeForCausalLM`): its count (an
/// `ArceeConfig` of AFM-4.5B's sizes built on the meta device: 4,619,184,640), the formula
/// (Llama's with heads of 128, an ungated MLP of `2 d ffn` and the head untied), its MACs and
/// buffers (the rotary `inv_freq` over half a head of 128, and its original), the
/// calibration's `arcee_small` (131,609,600 on the meta device) and peft's LoRA count for it.
#[test]
fn arcee_family() {
    let params = |vocab: i128, d: i128, layers: i128, heads: i128, kv: i128, hd: i128, ffn: i128| {
        2 * vocab * d + layers * (d * hd * (2 * heads + 2 * kv) + 2 * d * ffn + 2 * d) + d
    };
    assert_eq!(params(128_004, 2560, 36, 20, 4, 128, 18_432), 4_619_184_640);
    let (ours, macs) = figures("arcee", "arcee_afm_4_5b()", Some(2048));
    assert_eq!(ours, 4_619_184_640);
    let attention = 2560 * 128 * (2 * 20 + 2 * 4);
    assert_eq!(macs, decoder_macs(2048, 36, 2560, attention + 2 * 2560 * 18_432, 128_004));
    assert_eq!(probe("arcee", "arcee_afm_4_5b()", Some(16)).ledgers.buffers, 2 * 64 * 4);
    let small_params = params(32_000, 1024, 6, 16, 4, 64, 4096);
    assert_eq!(small_params, 131_609_600);
    let small = "arcee(vocab=32000, d=1024, layers=6, heads=16, kv_heads=4, head_dim=64, ffn=4096";
    assert_small_family(
        "arcee",
        small,
        small_params,
        lora_params(6, &[(1024, 1024), (1024, 256), (1024, 256), (1024, 1024)]),
    );
}

/// Jais-2-8B (std.models.jais2, transformers 5.24's `Jais2ForCausalLM`): its count
/// (`Jais2Config()`, its defaults, built on the meta device: 8,090,401,280), the formula
/// (Llama's with every attention projection biased, LayerNorms of weight and bias, an ungated
/// biased MLP and the head untied), its MACs and buffers, the calibration's `jais2_small`
/// (131,668,992 on the meta device) and peft's LoRA count for it.
#[test]
fn jais2_family() {
    let params = |vocab: i128, d: i128, layers: i128, kv: i128, ffn: i128| {
        let attention = 2 * d * d + 2 * d * kv + 2 * d + 2 * kv;
        2 * vocab * d + layers * (attention + 2 * d * ffn + ffn + d + 4 * d) + 2 * d
    };
    assert_eq!(params(150_272, 3328, 32, 3328, 26_624), 8_090_401_280);
    let (ours, macs) = figures("jais2", "jais2_8b()", Some(2048));
    assert_eq!(ours, 8_090_401_280);
    assert_eq!(macs, decoder_macs(2048, 32, 3328, 4 * 3328 * 3328 + 2 * 3328 * 26_624, 150_272));
    assert_eq!(probe("jais2", "jais2_8b()", Some(16)).ledgers.buffers, 2 * 64 * 4);
    let small_params = params(32_000, 1024, 6, 256, 4096);
    assert_eq!(small_params, 131_668_992);
    let small = "jais2(vocab=32000, d=1024, layers=6, heads=16, kv_heads=4, ffn=4096";
    assert_small_family(
        "jais2",
        small,
        small_params,
        lora_params(6, &[(1024, 1024), (1024, 256), (1024, 256), (1024, 1024)]),
    );
}

/// Hunyuan-7B (std.models.hunyuan_v1_dense, transformers 5.24's `HunYuanDenseV1ForCausalLM`):
/// its count (a `HunYuanDenseV1Config` of Hunyuan-7B's published sizes built on the meta
/// device: 7,504,568,320), the formula (Llama's with the query and key norms, `2 hd` a layer,
/// and the head tied), its MACs and buffers, the calibration's `hunyuan_v1_dense_small`
/// (100,415,232 on the meta device) and peft's LoRA count for it.
#[test]
fn hunyuan_v1_dense_family() {
    let params = |vocab: i128, d: i128, layers: i128, heads: i128, kv: i128, hd: i128, ffn: i128| {
        vocab * d + layers * (d * hd * (2 * heads + 2 * kv) + 2 * hd + 3 * d * ffn + 2 * d) + d
    };
    assert_eq!(params(128_167, 4096, 32, 32, 8, 128, 14_336), 7_504_568_320);
    let (ours, macs) = figures("hunyuan_v1_dense", "hunyuan_7b()", Some(2048));
    assert_eq!(ours, 7_504_568_320);
    assert_eq!(macs, gated_decoder_macs(2048, 128_167, 4096, 32, 32, 8, 128, 14_336));
    assert_eq!(probe("hunyuan_v1_dense", "hunyuan_7b()", Some(16)).ledgers.buffers, 2 * 64 * 4);
    let small_params = params(32_000, 1024, 6, 16, 4, 64, 2816);
    assert_eq!(small_params, 100_415_232);
    let small = "hunyuan_v1_dense(vocab=32000, d=1024, layers=6, heads=16, kv_heads=4, head_dim=64, ffn=2816";
    assert_small_family(
        "hunyuan_v1_dense",
        small,
        small_params,
        lora_params(6, &[(1024, 1024), (1024, 256), (1024, 256), (1024, 1024)]),
    );
}

/// Ministral 3 (std.models.ministral3, transformers 5.24's `Ministral3ForCausalLM`): its count
/// at `Ministral3Config()` (built on the meta device: 8,489,553,920), the formula (Llama's with
/// heads of 128 and the head untied), its MACs and buffers, the calibration's
/// `ministral3_small` (133,182,464 on the meta device) and peft's LoRA count for it, and the
/// query scaling: two more products a layer than Mistral's (`beta * log(...)` and the queries
/// times the factor).
#[test]
fn ministral3_family() {
    let params = |vocab: i128, d: i128, layers: i128, heads: i128, kv: i128, hd: i128, ffn: i128| {
        2 * vocab * d + layers * (d * hd * (2 * heads + 2 * kv) + 3 * d * ffn + 2 * d) + d
    };
    assert_eq!(params(131_072, 4096, 34, 32, 8, 128, 14_336), 8_489_553_920);
    let (ours, macs) = figures("ministral3", "ministral3()", Some(2048));
    assert_eq!(ours, 8_489_553_920);
    assert_eq!(macs, gated_decoder_macs(2048, 131_072, 4096, 34, 32, 8, 128, 14_336));
    assert_eq!(probe("ministral3", "ministral3()", Some(16)).ledgers.buffers, 2 * 64 * 4);
    let small_params = params(32_000, 1024, 6, 16, 4, 64, 2816);
    assert_eq!(small_params, 133_182_464);
    let small =
        "ministral3(vocab=32000, d=1024, layers=6, heads=16, kv_heads=4, head_dim=64, ffn=2816, original_max=1024";
    assert_small_family(
        "ministral3",
        small,
        small_params,
        lora_params(6, &[(1024, 1024), (1024, 256), (1024, 256), (1024, 1024)]),
    );
    let mistral = "mistral(vocab=32000, d=1024, layers=6, heads=16, kv_heads=4, ffn=2816)";
    assert_eq!(mul_nodes("ministral3", &format!("{small})")), mul_nodes("mistral", mistral) + 2 * 6);
}

/// CWM 32B (std.models.cwm, transformers 5.24's `CwmForCausalLM`): its count at `CwmConfig()`
/// (built on the meta device: 32,581,097,472), the formula (Llama's with heads of 128 and the
/// head untied), its MACs within the window (every layer attends to the whole sequence), its
/// buffers, the calibration's `cwm_small` (155,730,944 on the meta device) and peft's LoRA
/// count for it.
#[test]
fn cwm_family() {
    let params = |vocab: i128, d: i128, layers: i128, heads: i128, kv: i128, hd: i128, ffn: i128| {
        2 * vocab * d + layers * (d * hd * (2 * heads + 2 * kv) + 3 * d * ffn + 2 * d) + d
    };
    assert_eq!(params(128_256, 6144, 64, 48, 8, 128, 21_504), 32_581_097_472);
    let (ours, macs) = figures("cwm", "cwm()", Some(2048));
    assert_eq!(ours, 32_581_097_472);
    assert_eq!(macs, gated_decoder_macs(2048, 128_256, 6144, 64, 48, 8, 128, 21_504));
    assert_eq!(probe("cwm", "cwm()", Some(16)).ledgers.buffers, 2 * 64 * 4);
    let small_params = params(32_000, 1024, 8, 16, 4, 64, 2816);
    assert_eq!(small_params, 155_730_944);
    let small = "cwm(vocab=32000, d=1024, layers=8, heads=16, kv_heads=4, head_dim=64, ffn=2816, window=1024";
    assert_small_family(
        "cwm",
        small,
        small_params,
        lora_params(8, &[(1024, 1024), (1024, 256), (1024, 256), (1024, 1024)]),
    );
}

/// nanochat (std.models.nanochat, transformers 5.24's `NanoChatForCausalLM`): its count at
/// `NanoChatConfig()` (built on the meta device: 256,573,440), the formula (the attention's
/// `4 d^2`, the ungated MLP's `2 d ffn`, no norm weights, the head untied), its MACs and
/// buffers, the calibration's `nanochat_small` (141,033,472 on the meta device) and peft's
/// LoRA count for it.
#[test]
fn nanochat_family() {
    let params = |vocab: i128, d: i128, layers: i128, ffn: i128| 2 * vocab * d + layers * (4 * d * d + 2 * d * ffn);
    assert_eq!(params(50_304, 768, 12, 8192), 256_573_440);
    let (ours, macs) = figures("nanochat", "nanochat()", Some(2048));
    assert_eq!(ours, 256_573_440);
    assert_eq!(macs, decoder_macs(2048, 12, 768, 4 * 768 * 768 + 2 * 768 * 8192, 50_304));
    assert_eq!(probe("nanochat", "nanochat()", Some(16)).ledgers.buffers, 2 * 64 * 4);
    let small_params = params(32_000, 1024, 6, 4096);
    assert_eq!(small_params, 141_033_472);
    let small = "nanochat(vocab=32000, d=1024, layers=6, heads=8, kv_heads=8, ffn=4096";
    let reports = family_probes("nanochat", &[], small, Q_K_V_O);
    let [small_run, adapted] = &reports[..] else { panic!("two reports") };
    assert_eq!(small_run.params, small_params);
    let lora = lora_params(6, &[(1024, 1024); 4]);
    assert_eq!((adapted.params - adapted.trainable_params, adapted.trainable_params), (small_params, lora));
}

/// HyperCLOVA X (std.models.hyperclovax, transformers 5.24's `HyperCLOVAXForCausalLM`): its
/// count at `HyperCLOVAXConfig()` (built on the meta device: 6,738,677,760), the formula
/// (Granite's with four norms a layer and the head untied), its MACs and buffers, the
/// calibration's `hyperclovax_small` (133,194,752 on the meta device) and peft's LoRA count
/// for it.
#[test]
fn hyperclovax_family() {
    let params = |vocab: i128, d: i128, layers: i128, heads: i128, kv: i128, hd: i128, ffn: i128| {
        2 * vocab * d + layers * (d * hd * (2 * heads + 2 * kv) + 3 * d * ffn + 4 * d) + d
    };
    assert_eq!(params(32_000, 4096, 32, 32, 32, 128, 11_008), 6_738_677_760);
    let (ours, macs) = figures("hyperclovax", "hyperclovax()", Some(2048));
    assert_eq!(ours, 6_738_677_760);
    assert_eq!(macs, gated_decoder_macs(2048, 32_000, 4096, 32, 32, 32, 128, 11_008));
    assert_eq!(probe("hyperclovax", "hyperclovax()", Some(16)).ledgers.buffers, 2 * 64 * 4);
    let small_params = params(32_000, 1024, 6, 16, 4, 64, 2816);
    assert_eq!(small_params, 133_194_752);
    let small = "hyperclovax(vocab=32000, d=1024, layers=6, heads=16, kv_heads=4, head_dim=64, ffn=2816";
    assert_small_family(
        "hyperclovax",
        small,
        small_params,
        lora_params(6, &[(1024, 1024), (1024, 256), (1024, 256), (1024, 1024)]),
    );
}

/// Ministral (std.models.ministral, transformers 5.24's `MinistralForCausalLM`): its count at
/// `MinistralConfig(head_dim=128)` (built on the meta device: 7,241,732,096, Mistral 7B
/// v0.1's), the formula (Llama's, the head untied), the buffers, the calibration's
/// `ministral_small` and peft's LoRA count for it.
/// Persimmon (std.models.persimmon, transformers 5.24's `PersimmonForCausalLM`): its count at
/// `PersimmonConfig()` (built on the meta device: 9,397,175,296, `adept/persimmon-8b-base`'s
/// sizes), the formula (per layer the biased `query_key_value` and `dense` `4 d^2 + 4 d`, the
/// LayerNorms over the queries' and keys' heads `4 hd`, two LayerNorms `4 d`, the biased MLP
/// `2 d ffn + ffn + d`; the head untied), the MACs of a sequence (half of each head rotated
/// changes none), the buffers (`inv_freq` over the rotated half of a head of 64, and its
/// original), the calibration's `persimmon_small` (141,116,928 on the meta device) and peft's
/// LoRA count for it on `query_key_value` and `dense`.
#[test]
fn persimmon_family() {
    let params = |vocab: i128, d: i128, layers: i128, heads: i128, ffn: i128| {
        let hd = d / heads;
        2 * vocab * d + layers * (4 * d * d + 4 * d + 4 * hd + 4 * d + 2 * d * ffn + ffn + d) + 2 * d
    };
    assert_eq!(params(262_144, 4096, 36, 64, 16_384), 9_397_175_296);
    let (ours, macs) = figures("persimmon", "persimmon_8b()", Some(2048));
    assert_eq!(ours, 9_397_175_296);
    assert_eq!(figures("persimmon", "persimmon()", Some(2048)).0, ours);
    assert_eq!(macs, decoder_macs(2048, 36, 4096, 4 * 4096 * 4096 + 2 * 4096 * 16_384, 262_144));
    assert_eq!(probe("persimmon", "persimmon_8b()", Some(16)).ledgers.buffers, 2 * 16 * 4);
    let small_params = params(32_000, 1024, 6, 16, 4096);
    assert_eq!(small_params, 141_116_928);
    assert_small_family_targeting(
        "persimmon",
        "persimmon(vocab=32000, d=1024, layers=6, heads=16, ffn=4096",
        small_params,
        lora_params(6, &[(1024, 3072), (1024, 1024)]),
        "query_key_value,dense",
    );
}

/// CodeGen (std.models.codegen, transformers 5.24's `CodeGenForCausalLM`): its counts at
/// `CodeGenConfig()` (6,050,882,784) and at CodeGen-350M-mono's sizes (356,712,448), both
/// built on the meta device, the formula (GPT-J's: per layer `qkv_proj` and `out_proj`
/// `4 d^2` without biases, one LayerNorm `2 d`, the biased MLP `2 d ffn + ffn + d`; the head
/// untied and biased), the MACs of a sequence, the buffer (the float32 sinusoidal table,
/// `positions x rotary`), the calibration's `codegen_small` (141,110,528 on the meta device)
/// and peft's LoRA count for it on `qkv_proj` (its default target).
#[test]
fn codegen_family() {
    let params = |vocab: i128, d: i128, layers: i128, ffn: i128| {
        2 * vocab * d + vocab + layers * (4 * d * d + 2 * d + 2 * d * ffn + ffn + d) + 2 * d
    };
    for (call, vocab, d, layers, published) in
        [("codegen()", 50_400, 4096, 28, 6_050_882_784), ("codegen_350m_mono()", 51_200, 1024, 20, 356_712_448)]
    {
        assert_eq!(params(vocab, d, layers, 4 * d), published, "{call}: formula");
        let (ours, macs) = figures("codegen", call, Some(2048));
        assert_eq!(ours, published, "{call}");
        assert_eq!(macs, decoder_macs(2048, layers, d, 4 * d * d + 8 * d * d, vocab), "{call}: MACs");
    }
    assert_eq!(probe("codegen", "codegen()", Some(16)).ledgers.buffers, 2048 * 64 * 4);
    let small_params = params(32_000, 1024, 6, 4096);
    assert_eq!(small_params, 141_110_528);
    assert_small_family_targeting(
        "codegen",
        "codegen(vocab=32000, d=1024, layers=6, heads=16, rotary=32, ffn=4096, positions=16384",
        small_params,
        lora_params(6, &[(1024, 3072)]),
        "qkv_proj",
    );
}

/// BioGPT (std.models.biogpt, transformers 5.24's `BioGptForCausalLM`): its count at
/// `BioGptConfig()` (built on the meta device: 346,763,264, `microsoft/biogpt`'s sizes), the
/// formula (the embedding, tied to the head, and `positions + 2` learned positions; per layer
/// the biased q/k/v/out `4 d^2 + 4 d`, two LayerNorms `4 d`, the biased MLP
/// `2 d ffn + ffn + d`; the final LayerNorm), the MACs of its 1,024-token context, no buffer,
/// the calibration's `biogpt_small` (125,126,656 on the meta device) and peft's LoRA count
/// for it on q/k/v/out_proj.
#[test]
fn biogpt_family() {
    let params = |vocab: i128, d: i128, layers: i128, ffn: i128, positions: i128| {
        vocab * d + (positions + 2) * d + layers * (4 * d * d + 4 * d + 4 * d + 2 * d * ffn + ffn + d) + 2 * d
    };
    assert_eq!(params(42_384, 1024, 24, 4096, 1024), 346_763_264);
    let (ours, macs) = figures("biogpt", "biogpt()", Some(1024));
    assert_eq!(ours, 346_763_264);
    assert_eq!(macs, decoder_macs(1024, 24, 1024, 4 * 1024 * 1024 + 2 * 1024 * 4096, 42_384));
    assert_eq!(probe("biogpt", "biogpt()", Some(16)).ledgers.buffers, 0);
    let small_params = params(32_000, 1024, 6, 4096, 16_384);
    assert_eq!(small_params, 125_126_656);
    assert_small_family_targeting(
        "biogpt",
        "biogpt(vocab=32000, layers=6, positions=16384",
        small_params,
        lora_params(6, &[(1024, 1024), (1024, 1024), (1024, 1024), (1024, 1024)]),
        "q_proj,k_proj,v_proj,out_proj",
    );
}

/// Granite SWA (std.models.granite_swa, transformers 5.24's `GraniteSWAForCausalLM`): its count
/// at `GraniteSWAConfig()` (built on the meta device: 2,144,463,840), the formula (Llama's
/// with a sink per head, the head tied), the MACs within the window (every layer attends to
/// the whole sequence in eager attention's products), the buffers (two rotary embeddings'
/// `inv_freq` and copy over half a head of 128), the calibration's `granite_swa_small`
/// (122,963,072 on the meta device) and peft's LoRA count for it.
#[test]
fn granite_swa_family() {
    let params = |vocab: i128, d: i128, layers: i128, heads: i128, kv: i128, ffn: i128| {
        let hd = d / heads;
        vocab * d + layers * (d * hd * (2 * heads + 2 * kv) + heads + 3 * d * ffn + 2 * d) + d
    };
    assert_eq!(params(100_352, 2560, 24, 20, 4, 8192), 2_144_463_840);
    let (ours, macs) = figures("granite_swa", "granite_swa()", Some(2048));
    assert_eq!(ours, 2_144_463_840);
    assert_eq!(macs, gated_decoder_macs(2048, 100_352, 2560, 24, 20, 4, 128, 8192));
    assert_eq!(probe("granite_swa", "granite_swa()", Some(16)).ledgers.buffers, 4 * 64 * 4);
    let small_params = params(32_000, 1024, 8, 16, 4, 2816);
    assert_eq!(small_params, 122_963_072);
    let small = "granite_swa(vocab=32000, d=1024, layers=8, heads=16, kv_heads=4, ffn=2816, window=512";
    assert_small_family(
        "granite_swa",
        small,
        small_params,
        lora_params(8, &[(1024, 1024), (1024, 256), (1024, 256), (1024, 1024)]),
    );
}

/// DiffLlama (std.models.diffllama, transformers 5.24's `DiffLlamaForCausalLM`): its count at
/// `DiffLlamaConfig(num_key_value_heads=8)` (built on the meta device: 1,104,222,208), the
/// formula (Llama's with four lambda vectors of a head's size per layer and a weightless
/// norm, the head untied), the buffers, the calibration's `diffllama_small` (133,184,000 on
/// the meta device) and peft's LoRA count for it, and the two attention calls a layer (twice
/// Llama's SDPA nodes).
#[test]
fn diffllama_family() {
    let params = |vocab: i128, d: i128, layers: i128, heads: i128, kv: i128, ffn: i128| {
        let hd = d / heads;
        2 * vocab * d + layers * (d * hd * (2 * heads + 2 * kv) + 4 * hd + 3 * d * ffn + 2 * d) + d
    };
    assert_eq!(params(32_000, 2048, 16, 32, 8, 8192), 1_104_222_208);
    let (ours, _) = figures("diffllama", "diffllama()", Some(2048));
    assert_eq!(ours, 1_104_222_208);
    assert_eq!(probe("diffllama", "diffllama()", Some(16)).ledgers.buffers, 2 * 32 * 4);
    let small_params = params(32_000, 1024, 6, 16, 4, 2816);
    assert_eq!(small_params, 133_184_000);
    let small = "diffllama(d=1024, layers=6, heads=16, kv_heads=4, ffn=2816";
    assert_small_family(
        "diffllama",
        small,
        small_params,
        lora_params(6, &[(1024, 1024), (1024, 256), (1024, 256), (1024, 1024)]),
    );
    let sdpa = netc::op::Op::Sdpa;
    assert_eq!(op_nodes("diffllama", "diffllama(layers=2)", sdpa), 2 * op_nodes("llama", "llama(layers=2)", sdpa));
}

/// Granite MoE (std.models.granitemoe, transformers 5.24's `GraniteMoeForCausalLM` and
/// `GraniteMoeSharedForCausalLM`): the counts of `GraniteMoeConfig()` (37,039,116,288, the
/// head untied) and of granite-3.0-3b-a800m's sizes (3,298,793,472 tied, of which 882,874,368
/// active with 8 of 40 experts), each built on the meta device; the formula (Llama's
/// attention, every layer's experts and a router, a shared SiLU-gated MLP when
/// `shared_ffn`), the rotary buffers, the calibration's two small totals and peft's LoRA
/// count for them (r 16 on q, k, v and o: 425,984).
#[test]
fn granitemoe_family() {
    let params = |vocab: i128,
                  d: i128,
                  layers: i128,
                  heads: i128,
                  kv: i128,
                  (experts, ffn): (i128, i128),
                  shared: i128,
                  tied: bool| {
        let hd = d / heads;
        let head = if tied { 0 } else { vocab * d };
        vocab * d
            + head
            + layers * (d * hd * (2 * heads + 2 * kv) + experts * (3 * d * ffn + d) + 3 * d * shared + 2 * d)
            + d
    };
    assert_eq!(params(32_000, 4096, 32, 32, 32, (8, 11_008), 0, false), 37_039_116_288);
    let a800m = params(49_155, 1536, 32, 24, 8, (40, 512), 0, true);
    assert_eq!(a800m, 3_298_793_472);
    assert_eq!(a800m - 32 * 32 * 3 * 1536 * 512, 882_874_368);
    let (ours, _) = figures("granitemoe", "granitemoe()", Some(2048));
    assert_eq!(ours, 37_039_116_288);
    let run = probe("granitemoe", "granite_3_3b_a800m()", Some(16));
    assert_eq!((run.params, run.active_params), (3_298_793_472, 882_874_368));
    // inv_freq and original_inv_freq: float32, half a head each.
    assert_eq!(run.ledgers.buffers, 2 * 32 * 4);
    let small =
        "granitemoe(vocab=32000, d=1024, layers=4, heads=16, kv_heads=4, experts=16, top_k=4, ffn=512, tied=true";
    let lora = lora_params(4, &[(1024, 1024), (1024, 256), (1024, 256), (1024, 1024)]);
    assert_eq!(lora, 425_984);
    assert_small_family("granitemoe", small, params(32_000, 1024, 4, 16, 4, (16, 512), 0, true), lora);
    assert_eq!(params(32_000, 1024, 4, 16, 4, (16, 512), 0, true), 143_991_808, "the calibration's total_params");
    let shared = format!("{small}, shared_ffn=1024");
    assert_small_family("granitemoe", &shared, params(32_000, 1024, 4, 16, 4, (16, 512), 1024, true), lora);
    assert_eq!(params(32_000, 1024, 4, 16, 4, (16, 512), 1024, true), 156_574_720, "the calibration's total_params");
}

/// Phi-3.5-MoE (std.models.phimoe, transformers 5.24's `PhimoeForCausalLM`): the counts of
/// `PhimoeConfig()` (41,872,793,600) and of Phi-3.5-MoE's sizes with its biased attention and
/// head (41,873,153,344, of which 6,640,999,744 active with 2 of 16 experts: published "41.9B,
/// 6.6B active"), each built on the meta device; the formula (Llama's attention, LayerNorms
/// with biases, every layer's experts and a router, the head untied), the rotary buffers, the
/// calibration's `phimoe_small` total and peft's LoRA count for it (r 16 on q, k, v and o:
/// 425,984); and `sparsemixer` as the scenario runs: two `PhimoeMultiplier` kernels a layer
/// in training, none in eval.
#[test]
fn phimoe_family() {
    let params =
        |vocab: i128, d: i128, layers: i128, (heads, kv): (i128, i128), (experts, ffn): (i128, i128), bias: bool| {
            let hd = d / heads;
            let biases = if bias { heads * hd + 2 * kv * hd + d } else { 0 };
            let head_bias = if bias { vocab } else { 0 };
            2 * vocab * d
                + head_bias
                + layers * (d * hd * (2 * heads + 2 * kv) + biases + experts * (3 * d * ffn + d) + 4 * d)
                + 2 * d
        };
    assert_eq!(params(32_064, 4096, 32, (32, 8), (16, 6400), false), 41_872_793_600);
    let published = params(32_064, 4096, 32, (32, 8), (16, 6400), true);
    assert_eq!(published, 41_873_153_344);
    assert_eq!(published - 32 * 14 * 3 * 4096 * 6400, 6_640_999_744);
    let (ours, _) = figures("phimoe", "phimoe()", Some(2048));
    assert_eq!(ours, 41_872_793_600);
    let run = probe("phimoe", "phi_3_5_moe()", Some(16));
    assert_eq!((run.params, run.active_params), (41_873_153_344, 6_640_999_744));
    // inv_freq and original_inv_freq: float32, half a head each.
    assert_eq!(run.ledgers.buffers, 2 * 64 * 4);
    let small = "phimoe(vocab=32000, d=1024, layers=4, heads=16, kv_heads=4, experts=16, ffn=512, bias=true";
    assert_eq!(params(32_000, 1024, 4, (16, 4), (16, 512), true), 176_811_264, "the calibration's total_params");
    let lora = lora_params(4, &[(1024, 1024), (1024, 256), (1024, 256), (1024, 1024)]);
    assert_small_family("phimoe", small, 176_811_264, lora);
    // Without `eval` the router samples and multiplies through its custom function; under
    // `eval` it takes the maximum.
    let kernels = |settings: &str| op_nodes_with("phimoe", "phimoe(layers=2)", netc::op::Op::Kernel, settings);
    assert_eq!((kernels(""), kernels("eval  no_grad")), (4, 0));
}

/// BitNet b1.58 2B4T unpacked (std.models.bitnet, transformers 5.24's `BitNetForCausalLM`):
/// the count of `BitNetConfig()` (built on the meta device: 2,741,155,840), the formula
/// (Llama's with an RMS norm of `d` before `o_proj` and one of `ffn` before `down_proj`, the
/// head untied), the rotary buffers, the calibration's `bitnet_small` (133,205,504 on the meta
/// device) and peft's LoRA count for it.
#[test]
fn bitnet_family() {
    let params = |vocab: i128, d: i128, layers: i128, heads: i128, kv: i128, ffn: i128| {
        let hd = d / heads;
        2 * vocab * d + layers * (d * hd * (2 * heads + 2 * kv) + d + 3 * d * ffn + ffn + 2 * d) + d
    };
    assert_eq!(params(128_256, 2560, 30, 20, 5, 6912), 2_741_155_840);
    let (ours, _) = figures("bitnet", "bitnet()", Some(2048));
    assert_eq!(ours, 2_741_155_840);
    assert_eq!(probe("bitnet", "bitnet()", Some(16)).ledgers.buffers, 2 * 64 * 4);
    let small_params = params(32_000, 1024, 6, 16, 4, 2816);
    assert_eq!(small_params, 133_205_504);
    let small = "bitnet(vocab=32000, d=1024, layers=6, heads=16, kv_heads=4, ffn=2816";
    assert_small_family(
        "bitnet",
        small,
        small_params,
        lora_params(6, &[(1024, 1024), (1024, 256), (1024, 256), (1024, 1024)]),
    );
}

/// Hunyuan MoE (std.models.hunyuan_v1_moe, transformers 5.24's `HunYuanMoEV1ForCausalLM`):
/// the count of `HunYuanMoEV1Config(head_dim=128)` (built on the meta device:
/// 13,188,337,664), the formula (Hunyuan dense's attention with its head norms, a shared MLP,
/// every layer's experts and a float32 gate, the head untied), the gate's float32 weight in a
/// bf16 model, the rotary buffers, the calibration's `hunyuan_v1_moe_small` (183,051,776) and
/// peft's LoRA count for it.
#[test]
fn hunyuan_v1_moe_family() {
    let params =
        |vocab: i128, d: i128, layers: i128, (heads, kv, hd): (i128, i128, i128), (experts, ffn): (i128, i128)| {
            2 * vocab * d
                + layers * (d * hd * (2 * heads + 2 * kv) + 2 * hd + 3 * d * ffn + experts * (3 * d * ffn + d) + 2 * d)
                + d
        };
    assert_eq!(params(290_943, 4096, 32, (32, 32, 128), (1, 11_008)), 13_188_337_664);
    let (ours, _) = figures("hunyuan_v1_moe", "hunyuan_v1_moe()", Some(2048));
    assert_eq!(ours, 13_188_337_664);
    assert_eq!(probe("hunyuan_v1_moe", "hunyuan_v1_moe()", Some(16)).ledgers.buffers, 2 * 64 * 4);
    let small =
        "hunyuan_v1_moe(vocab=32000, d=1024, layers=4, heads=16, kv_heads=4, head_dim=64, experts=16, top_k=4, ffn=512";
    let small_params = params(32_000, 1024, 4, (16, 4, 64), (16, 512));
    assert_eq!(small_params, 183_051_776, "the calibration's total_params");
    let reports = family_probes("hunyuan_v1_moe", &[], small, Q_K_V_O);
    let [small_run, adapted] = &reports[..] else { panic!("two reports") };
    assert_eq!(small_run.params, small_params);
    let lora = lora_params(4, &[(1024, 1024), (1024, 256), (1024, 256), (1024, 1024)]);
    assert_eq!((adapted.params - adapted.trainable_params, adapted.trainable_params), (small_params, lora));
    // bf16 weights but the gates' (16 experts x 1024, 4 layers), which stay float32.
    let gates = 4 * 16 * 1024;
    assert_eq!(adapted.ledgers.weights, 2 * (small_params - gates) + 4 * gates + 4 * lora);
}

/// ERNIE 4.5 MoE (std.models.ernie4_5_moe, transformers 5.24's `Ernie4_5_MoeForCausalLM`):
/// the count of `Ernie4_5_MoeConfig()` (ERNIE-4.5-21B-A3B's sizes, built on the meta device:
/// 21,825,437,888, of which 1,728 correction biases never train), the formula (ERNIE 4.5's
/// attention, the first layer dense, every other layer's experts, a float32 router with its
/// bias and the shared experts, the head tied), the active count (6 of 64 experts a token),
/// the calibration's `ernie4_5_moe_small` (132,178,992) and peft's LoRA count for it.
#[test]
fn ernie4_5_moe_family() {
    let params = |vocab: i128,
                  d: i128,
                  layers: i128,
                  (heads, kv, hd): (i128, i128, i128),
                  dense: i128,
                  (experts, ffn, shared): (i128, i128, i128)| {
        let sparse = experts * (3 * d * ffn + d + 1) + 3 * d * shared;
        vocab * d + layers * (d * hd * (2 * heads + 2 * kv) + 2 * d) + 3 * d * dense + (layers - 1) * sparse + d
    };
    let total = params(103_424, 2560, 28, (20, 4, 128), 12_288, (64, 1536, 3072));
    assert_eq!(total, 21_825_437_888);
    let run = probe("ernie4_5_moe", "ernie4_5_moe()", Some(16));
    assert_eq!((run.params, run.active_params), (total, total - 27 * 58 * 3 * 2560 * 1536));
    assert_eq!(run.trainable_params, total - 27 * 64);
    let small = "ernie4_5_moe(vocab=32000, d=1024, layers=4, heads=16, kv_heads=4, head_dim=64, dense_ffn=2816, experts=16, top_k=4, ffn=512, shared_ffn=512";
    let small_params = params(32_000, 1024, 4, (16, 4, 64), 2816, (16, 512, 512));
    assert_eq!(small_params, 132_178_992, "the calibration's total_params");
    let lora = lora_params(4, &[(1024, 1024), (1024, 256), (1024, 256), (1024, 1024)]);
    assert_small_family("ernie4_5_moe", small, small_params, lora);
}

#[test]
fn ministral_family() {
    let (ours, _) = figures("ministral", "ministral()", Some(2048));
    assert_eq!(ours, llama_params(32_000, 4096, 32, 32, 8, 14_336));
    assert_eq!(ours, 7_241_732_096);
    assert_eq!(probe("ministral", "ministral()", Some(16)).ledgers.buffers, 2 * 64 * 4);
    let small_params = llama_params(32_000, 1024, 6, 16, 4, 2816);
    let small = "ministral(d=1024, layers=6, heads=16, kv_heads=4, ffn=2816, window=1024, full_every=2";
    assert_small_family(
        "ministral",
        small,
        small_params,
        lora_params(6, &[(1024, 1024), (1024, 256), (1024, 256), (1024, 1024)]),
    );
}

/// Seed-OSS-36B (std.models.seed_oss, transformers 5.24's `SeedOssForCausalLM`): its count
/// (`SeedOssConfig(hidden_size=5120)` built on the meta device: 36,151,104,512), the formula
/// (Llama's with biased q, k and v, heads of 128 and the head untied), its MACs, the
/// calibration's `seed_oss_small` and peft's LoRA count for it.
#[test]
fn seed_oss_family() {
    let params = |vocab: i128, d: i128, layers: i128, heads: i128, kv: i128, hd: i128, ffn: i128| {
        let attention = d * hd * (2 * heads + 2 * kv) + hd * (heads + 2 * kv);
        2 * vocab * d + layers * (attention + 3 * d * ffn + 2 * d) + d
    };
    assert_eq!(params(155_136, 5120, 64, 80, 8, 128, 27_648), 36_151_104_512);
    let (ours, macs) = figures("seed_oss", "seed_oss_36b()", Some(2048));
    assert_eq!(ours, 36_151_104_512);
    assert_eq!(macs, gated_decoder_macs(2048, 155_136, 5120, 64, 80, 8, 128, 27_648));
    let small_params = params(32_000, 1024, 6, 16, 4, 128, 2816);
    let small = "seed_oss(vocab=32000, d=1024, layers=6, heads=16, kv_heads=4, head_dim=128, ffn=2816";
    assert_small_family(
        "seed_oss",
        small,
        small_params,
        lora_params(6, &[(1024, 2048), (1024, 512), (1024, 512), (2048, 1024)]),
    );
}

/// SmolLM3 (std.models.smollm3, transformers 5.24's `SmolLM3ForCausalLM`): SmolLM3-3B's
/// parameter count (`SmolLM3Config()`'s defaults, built on the meta device: 3,075,098,624),
/// the formula (Llama's with the head tied: its NoPE layers have no parameters of their own),
/// the calibration's `smollm3_small` (122,962,944) and peft's LoRA count for it (851,968, the
/// harness's); a NoPE layer's attention makes no rotary products (the MACs are the same, as
/// rotary embeddings count none).
#[test]
fn smollm3_family() {
    let params = |vocab: i128, d: i128, layers: i128, heads: i128, kv: i128, ffn: i128| {
        let hd = d / heads;
        vocab * d + layers * (2 * d * heads * hd + 2 * d * kv * hd + 3 * d * ffn + 2 * d) + d
    };
    assert_eq!(params(128_256, 2048, 36, 16, 4, 11_008), 3_075_098_624);
    assert_eq!(params(32_000, 1024, 8, 16, 4, 2816), 122_962_944);
    let small = "smollm3(vocab=32000, d=1024, layers=8, heads=16, kv_heads=4, ffn=2816";
    let reports = family_probes("smollm3", &["smollm3_3b()"], small, Q_K_V_O);
    let [big, small_run, adapted] = &reports[..] else { panic!("three reports") };
    assert_eq!(big.params, 3_075_098_624);
    assert_eq!(small_run.params, 122_962_944);
    // q, k, v and o over 16 query and 4 key/value heads of 64, in 8 layers.
    let lora = lora_params(8, &[(1024, 1024), (1024, 256), (1024, 256), (1024, 1024)]);
    assert_eq!(lora, 851_968);
    assert_eq!((adapted.params - adapted.trainable_params, adapted.trainable_params), (122_962_944, lora));
    // Every fourth layer without rotary embeddings: 2 of the small model's 8 rotate nothing.
    let mul_nodes = |nope: i128| mul_nodes("smollm3", &format!("{small}, nope_every={nope})"));
    // Each rotating layer multiplies the queries and the keys by `cos` and `sin` and negates
    // the halves `rotate_half` moves (`-x2`, a product by -1): 6 products.
    assert_eq!(mul_nodes(0) - mul_nodes(4), 2 * 6);
}

/// StableLM (std.models.stablelm, transformers 5.24's `StableLmForCausalLM`): StableLM-3B-4E1T's
/// parameter count (`StableLmConfig()`'s defaults, its documented checkpoint, built on the meta
/// device: 2,795,443,200), the formula (Llama's with LayerNorms of weight and bias, the head
/// untied), and the MACs of a sequence (a quarter of each head rotated changes none).
#[test]
fn stablelm_3b_4e1t() {
    let (vocab, d, layers, ffn) = (50_304, 2560, 32, 6912);
    let params = 2 * vocab * d + layers * (4 * d * d + 3 * d * ffn + 4 * d) + 2 * d;
    assert_eq!(params, 2_795_443_200);
    let (ours, macs) = figures("stablelm", "stablelm_3b_4e1t()", Some(2048));
    assert_eq!(ours, 2_795_443_200);
    assert_eq!(macs, gated_decoder_macs(2048, vocab, d, layers, 32, 32, 80, ffn));
}

/// Nemotron (std.models.nemotron, transformers 5.24's `NemotronForCausalLM`): the count of
/// `NemotronConfig(num_key_value_heads=48)`, its defaults, built on the meta device
/// (17,642,041,344), the formula (per layer the attention `4 d^2`, the ungated MLP `2 d ffn`
/// and two LayerNorm1Ps of weight and bias, the head untied), the MACs of a sequence (half of
/// each head rotated changes none) and the buffers (the rotary `inv_freq` over half a head of
/// 128, and its original).
#[test]
fn nemotron_sizes() {
    let (vocab, d, layers, ffn) = (256_000, 6144, 32, 24_576);
    let params = 2 * vocab * d + layers * (4 * d * d + 2 * d * ffn + 4 * d) + 2 * d;
    assert_eq!(params, 17_642_041_344);
    let (ours, macs) = figures("nemotron", "nemotron()", Some(2048));
    assert_eq!(ours, params);
    assert_eq!(macs, decoder_macs(2048, layers, d, 4 * d * d + 2 * d * ffn, vocab));
    assert_eq!(probe("nemotron", "nemotron()", Some(16)).ledgers.buffers, 2 * 32 * 4);
}

/// Granite 3.1 (std.models.granite, transformers 5.24's `GraniteForCausalLM`): the 2B and 8B
/// counts (their `GraniteConfig`s built on the meta device: 2,533,531,648 and 8,170,848,256),
/// Llama's formula with the head tied to the embedding, and the MACs of a sequence (the
/// multipliers are elementwise: no MACs).
#[test]
fn granite_3_1() {
    let params = |d: i128, ffn: i128| {
        let (vocab, layers, kv) = (49_155, 40, d / 32 * 8);
        vocab * d + layers * (2 * d * d + 2 * d * kv + 3 * d * ffn + 2 * d) + d
    };
    assert_eq!(params(2048, 8192), 2_533_531_648);
    assert_eq!(params(4096, 12_800), 8_170_848_256);
    let (ours, _) = figures("granite", "granite_3_2b()", Some(2048));
    assert_eq!(ours, 2_533_531_648);
    let (ours, macs) = figures("granite", "granite_3_8b()", Some(2048));
    assert_eq!(ours, 8_170_848_256);
    assert_eq!(macs, gated_decoder_macs(2048, 49_155, 4096, 40, 32, 8, 128, 12_800));
}

/// StarCoder2 (std.models.starcoder2, transformers 5.24's `Starcoder2ForCausalLM`): the 3B, 7B
/// and 15B counts (their `Starcoder2Config`s built on the meta device), the formula (biased
/// projections, LayerNorms with biases, a two-matrix GELU MLP; the 15B's head untied), and the
/// MACs of a sequence under the 4,096-token window.
#[test]
fn starcoder2_family() {
    let params = |d: i128, layers: i128, heads: i128, kv: i128, ffn: i128, tied: bool| {
        let (vocab, kv_width) = (49_152, d / heads * kv);
        let attention = 2 * d * d + 2 * d * kv_width + 2 * d + 2 * kv_width;
        let mlp = 2 * d * ffn + ffn + d;
        vocab * d * if tied { 1 } else { 2 } + layers * (attention + mlp + 4 * d) + 2 * d
    };
    assert_eq!(params(3072, 30, 24, 2, 12_288, true), 3_030_371_328);
    assert_eq!(params(4608, 32, 36, 4, 18_432, true), 7_173_923_840);
    assert_eq!(params(6144, 40, 48, 4, 24_576, false), 15_957_889_024);
    for (model, count) in
        [("starcoder2_3b()", 3_030_371_328), ("starcoder2_7b()", 7_173_923_840), ("starcoder2_15b()", 15_957_889_024)]
    {
        assert_eq!(figures("starcoder2", model, Some(2048)).0, count, "{model}");
    }
    // A two-matrix MLP: `2 d ffn` a token where the gated one has `3 d ffn`.
    let (_, macs) = figures("starcoder2", "starcoder2_3b()", Some(2048));
    let (s, d, ffn) = (2048, 3072, 12_288);
    assert_eq!(macs, gated_decoder_macs(s, 49_152, d, 30, 24, 2, 128, ffn) - 30 * s * d * ffn);
}

/// Phi-1.5 and Phi-2 (std.models.phi, transformers 5.24's `PhiForCausalLM`): their counts (the
/// `PhiConfig`s built on the meta device: 1,418,270,720 and 2,779,683,840), the formula (every
/// projection biased, one LayerNorm a layer, a biased untied head), and the MACs of a sequence
/// (`gelu_new`'s steps are elementwise: none).
#[test]
fn phi_family() {
    let params = |d: i128, layers: i128, ffn: i128| {
        let vocab = 51_200;
        let layer = 4 * d * d + 4 * d + 2 * d * ffn + ffn + d + 2 * d;
        vocab * d + layers * layer + 2 * d + vocab * d + vocab
    };
    assert_eq!(params(2048, 24, 8192), 1_418_270_720);
    assert_eq!(params(2560, 32, 10_240), 2_779_683_840);
    assert_eq!(figures("phi", "phi_1_5()", Some(2048)).0, 1_418_270_720);
    let (ours, macs) = figures("phi", "phi_2()", Some(2048));
    assert_eq!(ours, 2_779_683_840);
    // A two-matrix MLP: `2 d ffn` a token where the gated one has `3 d ffn`.
    let (s, d, ffn) = (2048, 2560, 10_240);
    assert_eq!(macs, gated_decoder_macs(s, 51_200, d, 32, 32, 32, 80, ffn) - 32 * s * d * ffn);
}

/// GPT-J 6B (std.models.gptj, transformers 5.24's `GPTJForCausalLM`): its count (the default
/// `GPTJConfig`, `EleutherAI/gpt-j-6b`'s, built on the meta device: 6,050,882,784), the formula
/// (unbiased attention projections, a biased two-matrix MLP, one LayerNorm a layer, a biased
/// untied head; the sine table a buffer), and the MACs of a sequence (the rotary products are
/// elementwise: none).
#[test]
fn gptj_6b() {
    let (vocab, d, layers, ffn) = (50_400, 4096, 28, 16_384);
    let layer = 4 * d * d + 2 * d * ffn + ffn + d + 2 * d;
    assert_eq!(vocab * d + layers * layer + 2 * d + vocab * d + vocab, 6_050_882_784);
    let (ours, macs) = figures("gptj", "gptj_6b()", Some(2048));
    assert_eq!(ours, 6_050_882_784);
    let s = 2048;
    assert_eq!(macs, gated_decoder_macs(s, vocab, d, layers, 16, 16, 256, ffn) - layers * s * d * ffn);
}

/// OPT's parameters (`OPTForCausalLM`, transformers 5.24): the token embedding (`vocab x
/// word_dim`, tied to the head), the learned positions (two rows past the context), per layer
/// biased q/k/v/`out_proj` (`4 d^2 + 4 d`), the MLP (`2 d ffn + ffn + d`) and two LayerNorms
/// (`4 d`), the final LayerNorm (`2 d`, pre-norm sizes only) and, where the embedding is
/// narrower than the model, `project_in` and `project_out` (`d x word_dim` each, unbiased).
fn opt_params(word_dim: i128, d: i128, layers: i128, ffn: i128, pre_norm: bool) -> i128 {
    let layer = 4 * d * d + 4 * d + 2 * d * ffn + ffn + d + 4 * d;
    let final_norm = if pre_norm { 2 * d } else { 0 };
    let projections = if word_dim == d { 0 } else { 2 * d * word_dim };
    50_272 * word_dim + 2_050 * d + layers * layer + final_norm + projections
}

/// The four OPT sizes of std.models.opt (OPT-125m is `opt()`'s defaults) against transformers' counts for the
/// `facebook/opt-*` `OPTConfig`s built on the meta device (125,239,296; 331,196,416;
/// 1,315,758,080; 6,658,473,984), the formula, and the MACs of a 2,048-token sequence.
#[test]
fn opt_sizes() {
    for (call, word_dim, d, layers, ffn, pre_norm, published) in [
        ("opt()", 768, 768, 12, 3072, true, 125_239_296),
        ("opt_350m()", 512, 1024, 24, 4096, false, 331_196_416),
        ("opt_1_3b()", 2048, 2048, 24, 8192, true, 1_315_758_080),
        ("opt_6_7b()", 4096, 4096, 32, 16_384, true, 6_658_473_984),
    ] {
        assert_eq!(opt_params(word_dim, d, layers, ffn, pre_norm), published, "{call}: formula");
        let (ours, macs) = figures("opt", call, Some(2048));
        assert_eq!(ours, published, "{call}: parameters");
        let s = 2048;
        let projections = if word_dim == d { 0 } else { 2 * d * word_dim };
        let mut expected = decoder_macs(s, layers, d, 4 * d * d + 2 * d * ffn, 50_272);
        // The head is `word_dim` wide, not `d`.
        expected += s * (50_272 * (word_dim - d) + projections);
        assert_eq!(macs, expected, "{call}: MACs");
    }
    // A preset is the generic model with its configuration.
    let generic = "opt(d=2048, layers=24, heads=32, ffn=8192)";
    assert_eq!(figures("opt", generic, Some(2048)), figures("opt", "opt_1_3b()", Some(2048)));
}

/// Falcon's parameters from its configuration: the embedding (vocabulary 65,024, tied to the
/// head), per layer the fused `query_key_value` (`heads + 2 kv` heads of `d / heads`),
/// `dense` d^2, the MLP 2 d ffn and `norms` LayerNorms of 2 d, and `ln_f` 2 d; no biases.
fn falcon_params(d: i128, layers: i128, heads: i128, kv: i128, ffn: i128, norms: i128) -> i128 {
    let layer = d * (heads + 2 * kv) * (d / heads) + d * d + 2 * d * ffn + norms * 2 * d;
    65_024 * d + layers * layer + 2 * d
}

/// Falcon-7B, Falcon 2 11B and Falcon-40B (std.models.falcon) against transformers' counts
/// for the `tiiuae/falcon-*` `FalconConfig`s built on the meta device (6,921,720,704;
/// 10,836,484,096; 41,303,293,952), the formula, and the MACs of a 2,048-token sequence;
/// Falcon-180B as the generic model (178,557,088,768).
#[test]
fn falcon_sizes() {
    for (call, d, layers, heads, kv, norms, published) in [
        ("falcon_7b()", 4544, 32, 71, 1, 1, 6_921_720_704),
        ("falcon_11b()", 4096, 60, 32, 8, 1, 10_836_484_096),
        ("falcon_40b()", 8192, 60, 128, 8, 2, 41_303_293_952),
        ("falcon(d=14848, layers=80, heads=232, kv_heads=8, new_arch=true)", 14_848, 80, 232, 8, 2, 178_557_088_768),
    ] {
        let ffn = 4 * d;
        assert_eq!(falcon_params(d, layers, heads, kv, ffn, norms), published, "{call}: formula");
        let (ours, macs) = figures("falcon", call, Some(2048));
        assert_eq!(ours, published, "{call}: parameters");
        let per_layer = d * (heads + 2 * kv) * (d / heads) + d * d + 2 * d * ffn;
        assert_eq!(macs, decoder_macs(2048, layers, d, per_layer, 65_024), "{call}: MACs");
    }
    // A preset is the generic model with its configuration.
    let generic = "falcon(d=8192, layers=60, heads=128, kv_heads=8, new_arch=true)";
    assert_eq!(figures("falcon", generic, Some(2048)), figures("falcon", "falcon_40b()", Some(2048)));
}

/// BLOOM's parameters from its configuration: the embedding (vocabulary 250,880, tied to the
/// head) and its LayerNorm 2 d, per layer `query_key_value` 3 d^2 + 3 d, `dense` d^2 + d, the
/// MLP 8 d^2 + 5 d and two LayerNorms 4 d, and `ln_f` 2 d.
fn bloom_params(d: i128, layers: i128) -> i128 {
    250_880 * d + 2 * d + layers * (12 * d * d + 13 * d) + 2 * d
}

/// BLOOM-560m (`bloom()`), BLOOM-1b7, BLOOM-3b (the generic model) and BLOOM-7b1
/// (std.models.bloom) against transformers' counts for the `bigscience/bloom-*`
/// `BloomConfig`s built on the meta device (559,214,592; 1,722,408,960; 3,002,557,440;
/// 7,069,016,064), the formula, and the MACs of a 2,048-token sequence (the ALiBi `baddbmm`
/// and the weighted sum as SDPA's two products).
#[test]
fn bloom_sizes() {
    for (call, d, layers, published) in [
        ("bloom()", 1024, 24, 559_214_592),
        ("bloom_1b7()", 2048, 24, 1_722_408_960),
        ("bloom(d=2560, layers=30, heads=32)", 2560, 30, 3_002_557_440),
        ("bloom_7b1()", 4096, 30, 7_069_016_064),
    ] {
        assert_eq!(bloom_params(d, layers), published, "{call}: formula");
        let (ours, macs) = figures("bloom", call, Some(2048));
        assert_eq!(ours, published, "{call}: parameters");
        assert_eq!(macs, decoder_macs(2048, layers, d, 12 * d * d, 250_880), "{call}: MACs");
    }
}

/// MPT's parameters from its configuration (`no_bias`: no linear or LayerNorm has a bias):
/// `wte` (the head is tied to it), per layer `Wqkv` 3 d^2, `out_proj` d^2, the MLP 8 d^2 and
/// two weight-only LayerNorms 2 d, and `norm_f` d.
fn mpt_params(vocab: i128, d: i128, layers: i128) -> i128 {
    vocab * d + layers * (12 * d * d + 2 * d) + d
}

/// MPT-7B and MPT-30B (std.models.mpt) against transformers' counts for the
/// `mosaicml/mpt-7b` and `-30b` `MptConfig`s built on the meta device (6,649,286,656 and
/// 29,957,200,896), the formula, the MACs of a 2,048-token sequence, and no buffer (the ALiBi
/// biases are made in each forward, as `MptModel` does).
#[test]
fn mpt_sizes() {
    for (call, d, layers, published) in [("mpt_7b()", 4096, 32, 6_649_286_656), ("mpt_30b()", 7168, 48, 29_957_200_896)]
    {
        assert_eq!(mpt_params(50_432, d, layers), published, "{call}: formula");
        let (ours, macs) = figures("mpt", call, Some(2048));
        assert_eq!(ours, published, "{call}: parameters");
        assert_eq!(macs, decoder_macs(2048, layers, d, 12 * d * d, 50_432), "{call}: MACs");
        assert_eq!(probe("mpt", call, Some(16)).ledgers.buffers, 0, "{call}: buffers");
    }
    // A preset is the generic model with its configuration.
    let generic = "mpt(d=7168, layers=48, heads=64, max_seq_len=8192, softmax_scale=0.0944911182523068)";
    assert_eq!(figures("mpt", generic, Some(2048)), figures("mpt", "mpt_30b()", Some(2048)));
}

/// Gemma's parameters from its configuration: `embed_tokens` (the head is tied to it), per
/// layer the projections of `heads` query and `kv_heads` key and value heads of `hd`
/// (`d hd (2 heads + 2 kv_heads)`), the MLP `3 d ffn` and two norms `2 d`, and `norm` d.
fn gemma_params(vocab: i128, d: i128, layers: i128, heads: i128, kv_heads: i128, hd: i128, ffn: i128) -> i128 {
    vocab * d + layers * (d * hd * (2 * heads + 2 * kv_heads) + 3 * d * ffn + 2 * d) + d
}

/// Gemma 2B and 7B (std.models.gemma) against Google's published counts, which transformers'
/// `GemmaConfig`s give on the meta device (2,506,172,416 and 8,537,680,896), the formula, the
/// MACs of a 2,048-token sequence (the attention products over `heads x hd`, 4,096 wide in
/// 7B, not `d`), and the buffers: `embed_scale` (a float32 scalar in a float32 run) and the
/// rotary `inv_freq` and its original, 128 floats each.
#[test]
fn gemma_sizes() {
    for (call, d, layers, heads, kv_heads, ffn, published) in
        [("gemma_2b()", 2048, 18, 8, 1, 16_384, 2_506_172_416), ("gemma_7b()", 3072, 28, 16, 16, 24_576, 8_537_680_896)]
    {
        assert_eq!(gemma_params(256_000, d, layers, heads, kv_heads, 256, ffn), published, "{call}: formula");
        let (ours, macs) = figures("gemma", call, Some(2048));
        assert_eq!(ours, published, "{call}: parameters");
        let per_layer = d * 256 * (2 * heads + 2 * kv_heads) + 3 * d * ffn;
        let s = 2048;
        assert_eq!(macs, s * (layers * per_layer + 256_000 * d) + layers * 2 * s * s * heads * 256, "{call}: MACs");
        assert_eq!(probe("gemma", call, Some(16)).ledgers.buffers, 4 + 2 * 128 * 4, "{call}: buffers");
    }
    // A preset is the generic model with its configuration.
    let generic = "gemma(d=2048, layers=18, heads=8, kv_heads=1, ffn=16384)";
    assert_eq!(figures("gemma", generic, Some(2048)), figures("gemma", "gemma_2b()", Some(2048)));
}

/// OLMo's parameters from its configuration: `embed_tokens`, the head unless tied, per layer
/// the attention `4 d^2` and the MLP `3 d ffn` (its LayerNorms have no parameters).
fn olmo_params(vocab: i128, d: i128, layers: i128, ffn: i128, tied: bool) -> i128 {
    vocab * d * if tied { 1 } else { 2 } + layers * (4 * d * d + 3 * d * ffn)
}

/// OLMo 1B, 7B and 7B April 2024 (std.models.olmo) against transformers' counts for the
/// `allenai/OLMo-1B-hf`, `-7B-hf` and `-7B-0424-hf` `OlmoConfig`s built on the meta device
/// (1,176,764,416 and 6,888,095,744 twice: `clip_qkv` adds no parameter), the formula, the
/// MACs of a 2,048-token sequence, and the buffers (the rotary `inv_freq` and its original).
/// With gradients on, `clip_qkv`'s in-place clamps keep a copy of each projection: three
/// `[1, 16, 4096]` float32 tensors a layer (the probe runs in float32).
#[test]
fn olmo_sizes() {
    for (call, d, layers, ffn, tied, published) in [
        ("olmo_1b()", 2048, 16, 8192, true, 1_176_764_416),
        ("olmo_7b()", 4096, 32, 11_008, false, 6_888_095_744),
        ("olmo_7b_0424()", 4096, 32, 11_008, false, 6_888_095_744),
    ] {
        assert_eq!(olmo_params(50_304, d, layers, ffn, tied), published, "{call}: formula");
        let (ours, macs) = figures("olmo", call, Some(2048));
        assert_eq!(ours, published, "{call}: parameters");
        assert_eq!(macs, decoder_macs(2048, layers, d, 4 * d * d + 3 * d * ffn, 50_304), "{call}: MACs");
        assert_eq!(probe("olmo", call, Some(16)).ledgers.buffers, 2 * 64 * 4, "{call}: buffers");
    }
    // A preset is the generic model with its configuration.
    let generic = "olmo(d=2048, layers=16, heads=16, kv_heads=16, ffn=8192, tied=true)";
    assert_eq!(figures("olmo", generic, Some(2048)), figures("olmo", "olmo_1b()", Some(2048)));
    let clipped = probe("olmo", "olmo_7b_0424()", Some(16)).ledgers.activations;
    assert_eq!(probe("olmo", "olmo(clip_qkv=8.0)", Some(16)).ledgers.activations, clipped);
    let unclipped = probe("olmo", "olmo_7b()", Some(16)).ledgers.activations;
    assert_eq!(clipped - unclipped, 32 * 3 * 16 * 4096 * 4, "one f32 copy of q, k and v a layer");
}

/// OLMo 3 (std.models.olmo3) at `Olmo3Config`'s defaults against transformers' count for that
/// config built on the meta device (6,888,624,128: OLMo 2's layer at OLMo 7B's sizes, so
/// [`olmo_params`] with its norms, `2 d` a layer for the post norms and `2 d` for `q_norm` and
/// `k_norm`, and `d` for the final norm), the MACs of a 2,048-token sequence, and the buffers:
/// an `inv_freq` and its original per layer kind (float32, 4 of 64).
#[test]
fn olmo3_sizes() {
    let published = 6_888_624_128;
    assert_eq!(olmo_params(50_304, 4096, 32, 11_008, false) + 32 * 4 * 4096 + 4096, published, "formula");
    let (ours, macs) = figures("olmo3", "olmo3()", Some(2048));
    assert_eq!(ours, published, "parameters");
    assert_eq!(macs, decoder_macs(2048, 32, 4096, 4 * 4096 * 4096 + 3 * 4096 * 11_008, 50_304), "MACs");
    assert_eq!(probe("olmo3", "olmo3()", Some(16)).ledgers.buffers, 4 * 64 * 4, "buffers");
}

/// EXAONE 4.0 (std.models.exaone4) at `Exaone4Config`'s defaults and at the calibration's
/// `exaone4_small` sizes against transformers' counts for those configs on the meta device
/// (9,429,069,824 and 155,731,968: Llama's layer with `q_norm` and `k_norm` over a head, `2
/// hd`), peft's LoRA count for the small one (r 16 on q, k, v and o: 851,968, as the harness
/// counted), and the global layers' missing rotary embedding: the small model's 2 global
/// layers of 8 make no rotary products (6 a layer), which the calibration cannot see (the
/// rotation saves nothing and is at no peak: its peaks match with every layer rotated).
#[test]
fn exaone4_family() {
    let params = |vocab: i128, d: i128, layers: i128, heads: i128, kv: i128, ffn: i128| {
        let hd = d / heads;
        2 * vocab * d + layers * (2 * d * heads * hd + 2 * d * kv * hd + 3 * d * ffn + 2 * d + 2 * hd) + d
    };
    assert_eq!(params(102_400, 4096, 32, 32, 32, 16_384), 9_429_069_824);
    assert_eq!(params(32_000, 1024, 8, 16, 4, 2816), 155_731_968);
    let small = "exaone4(vocab=32000, d=1024, layers=8, heads=16, kv_heads=4, ffn=2816, window=1024";
    let reports = family_probes("exaone4", &["exaone4()"], small, Q_K_V_O);
    let [default, small_run, adapted] = &reports[..] else { panic!("three reports") };
    assert_eq!(default.params, 9_429_069_824);
    assert_eq!(small_run.params, 155_731_968);
    let lora = lora_params(8, &[(1024, 1024), (1024, 256), (1024, 256), (1024, 1024)]);
    assert_eq!(lora, 851_968);
    assert_eq!((adapted.params - adapted.trainable_params, adapted.trainable_params), (155_731_968, lora));
    let mul_nodes = |pattern: i128| mul_nodes("exaone4", &format!("{small}, pattern={pattern})"));
    // `pattern=9` makes every layer of 8 a sliding, rotated one.
    assert_eq!(mul_nodes(9) - mul_nodes(4), 2 * 6);
}

/// Apertus's parameters from its configuration: `embed_tokens` and the untied head, per layer
/// the attention (`2 d^2 + 2 d kv_heads hd`), the queries' and keys' head norms (`2 hd`), the
/// MLP without a gate (`2 d ffn`), xIELU's two `[1]` parameters and two norms (`2 d`), and the
/// final norm.
fn apertus_params(d: i128, layers: i128, heads: i128, kv_heads: i128, ffn: i128) -> i128 {
    let hd = d / heads;
    2 * 131_072 * d + layers * (2 * d * d + 2 * d * kv_heads * hd + 2 * hd + 2 * d * ffn + 2 + 2 * d) + d
}

/// Apertus 8B and 70B (std.models.apertus) against transformers' counts for `ApertusConfig`s of
/// their sizes built on the meta device (8,053,338,176 and 70,599,864,480), the formula, the
/// MACs of a 2,048-token sequence, and the buffers: the rotary `inv_freq` and its original
/// (float32), and each layer's xIELU `beta` and `eps` (0-dim, in the model's dtype: float32
/// here), 192 and 288 elements as `model.buffers()` counts them.
#[test]
fn apertus_sizes() {
    for (call, d, layers, heads, ffn, published, buffers) in [
        ("apertus_8b()", 4096, 32, 32, 21_504, 8_053_338_176, 192),
        ("apertus_70b()", 8192, 80, 64, 43_008, 70_599_864_480, 288),
    ] {
        // Two rotary buffers of `hd / 2`, and each layer's `beta` and `eps`.
        assert_eq!(2 * (d / heads / 2) + 2 * layers, buffers, "{call}: buffer elements");
        assert_eq!(apertus_params(d, layers, heads, 8, ffn), published, "{call}: formula");
        let (ours, macs) = figures("apertus", call, Some(2048));
        assert_eq!(ours, published, "{call}: parameters");
        let hd = d / heads;
        let layer_macs = 2 * d * d + 2 * d * 8 * hd + 2 * d * ffn;
        assert_eq!(macs, decoder_macs(2048, layers, d, layer_macs, 131_072), "{call}: MACs");
        assert_eq!(probe("apertus", call, Some(16)).ledgers.buffers, buffers * 4, "{call}: buffers");
    }
    let generic = "apertus(d=8192, layers=80, heads=64, kv_heads=8, ffn=43008)";
    assert_eq!(figures("apertus", generic, Some(2048)), figures("apertus", "apertus_70b()", Some(2048)));
}

/// GPT-BigCode's parameters from its configuration: `wte` and `wpe`, per layer the fused
/// multi-query `c_attn` (`d` queries and one key and value head of `hd = d / heads`:
/// `d (d + 2 hd) + d + 2 hd`), `c_proj` `d^2 + d`, the MLP `2 d ffn + ffn + d` and two
/// LayerNorms `4 d`, and `ln_f` `2 d`; the head is tied to `wte`.
fn gpt_bigcode_params(vocab: i128, positions: i128, d: i128, layers: i128, heads: i128, ffn: i128) -> i128 {
    let qkv = d + 2 * (d / heads);
    vocab * d + positions * d + layers * (d * qkv + qkv + d * d + d + 2 * d * ffn + ffn + 5 * d) + 2 * d
}

/// SantaCoder, StarCoderBase 1B, 3B and 7B and StarCoder (std.models.gpt_bigcode) against
/// transformers' counts for their `GPTBigCodeConfig`s built on the meta device
/// (1,124,886,528; 1,137,207,296; 3,043,311,104; 7,327,263,232; 15,517,456,384), the formula,
/// the MACs of a 2,048-token sequence, and the `[positions, positions]` bool buffer each
/// holds (4 MiB and 64 MiB: the models' `buffers()` on the meta device).
#[test]
fn gpt_bigcode_sizes() {
    for (call, vocab, positions, d, layers, heads, ffn, published) in [
        ("santacoder()", 49_280, 2048, 2048, 24, 16, 8192, 1_124_886_528),
        ("starcoderbase_1b()", 49_152, 8192, 2048, 24, 16, 8192, 1_137_207_296),
        ("starcoderbase_3b()", 49_152, 8192, 2816, 36, 22, 11_264, 3_043_311_104),
        ("starcoderbase_7b()", 49_152, 8192, 4096, 42, 32, 16_384, 7_327_263_232),
        ("starcoder()", 49_152, 8192, 6144, 40, 48, 24_576, 15_517_456_384),
    ] {
        assert_eq!(gpt_bigcode_params(vocab, positions, d, layers, heads, ffn), published, "{call}: formula");
        let (ours, macs) = figures("gpt_bigcode", call, Some(2048));
        assert_eq!(ours, published, "{call}: parameters");
        let per_layer = d * (d + 2 * (d / heads)) + d * d + 2 * d * ffn;
        assert_eq!(macs, decoder_macs(2048, layers, d, per_layer, vocab), "{call}: MACs");
        assert_eq!(probe("gpt_bigcode", call, Some(16)).ledgers.buffers, positions * positions, "{call}: buffers");
    }
    // A preset is the generic model with its configuration.
    let generic = "gpt_bigcode(vocab=49152, d=6144, layers=40, heads=48, ffn=24576, positions=8192)";
    assert_eq!(figures("gpt_bigcode", generic, Some(2048)), figures("gpt_bigcode", "starcoder()", Some(2048)));
}

/// GPT-Neo 125M, 1.3B and 2.7B (std.models.gpt_neo, transformers 5.24's `GPTNeoForCausalLM`):
/// their counts (`GPTNeoConfig`s built on the meta device, the published 125,198,592,
/// 1,315,575,808 and 2,651,307,520), the formula (unbiased q, k and v projections, a biased
/// `out_proj`, a biased `gelu_new` MLP of `4 d`, learned positions, the head tied), the MACs
/// of a 2,048-token sequence, and the bool `bias` buffer of `positions^2` each layer holds; the
/// calibration's `gpt_neo_small` (125,106,176) and peft's LoRA count for it (q, k and v: its
/// output projection is `out_proj`, not `o_proj`).
#[test]
fn gpt_neo_family() {
    let params = |vocab: i128, positions: i128, d: i128, layers: i128| {
        vocab * d + positions * d + layers * (4 * d * d + d + 2 * d * 4 * d + 4 * d + d + 4 * d) + 2 * d
    };
    for (call, d, layers, published) in [
        ("gpt_neo_125m()", 768, 12, 125_198_592),
        ("gpt_neo_1_3b()", 2048, 24, 1_315_575_808),
        ("gpt_neo_2_7b()", 2560, 32, 2_651_307_520),
    ] {
        assert_eq!(params(50_257, 2048, d, layers), published, "{call}: formula");
        let (ours, macs) = figures("gpt_neo", call, Some(2048));
        assert_eq!(ours, published, "{call}: parameters");
        assert_eq!(macs, decoder_macs(2048, layers, d, 12 * d * d, 50_257), "{call}: MACs");
        assert_eq!(probe("gpt_neo", call, Some(16)).ledgers.buffers, layers * 2048 * 2048, "{call}: buffers");
    }
    assert_eq!(params(32_000, 16_384, 1024, 6), 125_106_176);
    let small = "gpt_neo(vocab=32000, d=1024, layers=6, heads=16, ffn=4096, positions=16384";
    assert_small_family("gpt_neo", small, 125_106_176, lora_params(6, &[(1024, 1024), (1024, 1024), (1024, 1024)]));
}

/// gpt-oss-20b and gpt-oss-120b (std.models.gpt_oss's `gpt_oss_20b()` and `gpt_oss(layers=36,
/// experts=128)`, transformers 5.24's `GptOssForCausalLM` in bf16): their counts (`openai/gpt-oss-20b`'s and `-120b`'s `GptOssConfig`s built on the
/// meta device: 20,914,757,184 and 116,829,156,672), the formula (biased attention
/// projections and a sink per head, a biased router, experts with biases, two norms a layer,
/// an untied head), and the active parameters (4 of the experts a token: 4,187,440,704 and
/// 5,711,982,912, transformers' totals less the unrouted experts').
#[test]
fn gpt_oss_family() {
    let (vocab, d, heads, kv, hd, ffn) = (201_088, 2880, 64, 8, 64, 2880);
    let expert = 3 * d * ffn + 2 * ffn + d;
    let params = |layers: i128, experts: i128| {
        let attention = d * hd * (2 * heads + 2 * kv) + hd * (heads + 2 * kv) + d + heads;
        let moe = experts * d + experts + experts * expert;
        2 * vocab * d + layers * (attention + moe + 2 * d) + d
    };
    let active = |layers: i128, experts: i128| params(layers, experts) - layers * (experts - 4) * expert;
    assert_eq!((params(24, 32), active(24, 32)), (20_914_757_184, 4_187_440_704));
    assert_eq!((params(36, 128), active(36, 128)), (116_829_156_672, 5_711_982_912));
    let mut db = Database::new();
    let text = "use std.models.gpt_oss\n\
                infer small { model gpt_oss_20b()  batch 1  seq 128 }\n\
                infer large { model gpt_oss(layers=36, experts=128)  batch 1  seq 128 }\n";
    let file = db.set_file(FileName::new("probe.net"), text.to_string());
    let r = report(&db, &[file], None);
    let [small, large] = &r.scenarios[..] else { panic!("two reports: {:?}", r.not_simulated) };
    assert_eq!((small.params, small.active_params), (params(24, 32), active(24, 32)));
    assert_eq!((large.params, large.active_params), (params(36, 128), active(36, 128)));
}

/// Phi-3.5-mini and Phi-3-mini-4k (std.models.phi3: Llama's model with Phi-3's fused
/// `qkv_proj` and `gate_up_proj`, transformers 5.24's `Phi3ForCausalLM`; their sliding windows
/// of 262,144 and 2,047 tokens): the published 3,821,079,552 parameters, Llama's formula (the
/// fused projections hold the same weights), and the MACs (at 2,048 tokens, past
/// Phi-3-mini-4k's window).
#[test]
fn phi3_5_mini() {
    assert_eq!(llama_params(32_064, 3072, 32, 32, 32, 8192), 3_821_079_552);
    for call in ["phi3_5_mini()", "phi3_mini_4k()"] {
        let (params, macs) = figures("phi3", call, Some(2048));
        assert_eq!(params, 3_821_079_552, "{call}");
        assert_eq!(macs, llama_macs(2048, 32_064, 3072, 32, 32, 32, 8192), "{call}");
    }
}

/// Mixtral (std.models.mixtral: Llama's model with a sparse mixture of experts for the MLP,
/// transformers 5.24's `MixtralForCausalLM`): Mixtral 8x7B's published 46,702,792,704
/// parameters and its 12,879,925,248 active ones (2 of 8 experts a token: Mistral's "12.9B
/// active"), the calibration's `mixtral_small` totals and peft's LoRA count for it (r 16 on
/// q, k, v and o: 458,752; results_llm.json), and the MACs: a token's forward pass runs the
/// router (`experts * d`) and `top_k` experts (`3 d ffn` each), every other linear once.
#[test]
fn mixtral_family_and_moe() {
    let moe_params = |vocab: i128, d: i128, layers: i128, heads: i128, kv: i128, ffn: i128, experts: i128| {
        // Llama's with the MLP's `3 d ffn` replaced by `experts` of them and the router.
        llama_params(vocab, d, layers, heads, kv, ffn) + layers * ((experts - 1) * 3 * d * ffn + experts * d)
    };
    let active = |vocab: i128, d: i128, layers: i128, heads: i128, kv: i128, ffn: i128, experts: i128, k: i128| {
        moe_params(vocab, d, layers, heads, kv, ffn, experts) - layers * (experts - k) * 3 * d * ffn
    };
    assert_eq!(moe_params(32_000, 4096, 32, 32, 8, 14_336, 8), 46_702_792_704);
    assert_eq!(active(32_000, 4096, 32, 32, 8, 14_336, 8, 2), 12_879_925_248);
    let small = "mixtral(vocab=32000, d=1024, layers=4, heads=16, kv_heads=8, ffn=3584)";
    assert_eq!(moe_params(32_000, 1024, 4, 16, 8, 3584, 8), 430_482_432, "the calibration's total_params");
    let mut db = Database::new();
    let lora = "lora_r=16, lora_alpha=32, lora_dropout=0.05, lora_targets=\"q_proj,k_proj,v_proj,o_proj\"";
    let text = format!(
        "use std.models.mixtral\n\
         infer big {{ model mixtral_8x7b()  batch 1  seq 128 }}\n\
         infer small {{ model {small}  batch 1  seq 512 }}\n\
         train adapted {{ model {}, {lora})  batch 1  seq 128  precision bf16  optimizer adamw  loss causal_lm }}\n",
        small.trim_end_matches(')')
    );
    let file = db.set_file(FileName::new("probe.net"), text);
    let r = report(&db, &[file], None);
    let [big, small_run, adapted] = &r.scenarios[..] else { panic!("three reports: {:?}", r.not_simulated) };
    assert_eq!((big.params, big.active_params), (46_702_792_704, 12_879_925_248));
    assert_eq!((small_run.params, small_run.active_params), (430_482_432, active(32_000, 1024, 4, 16, 8, 3584, 8, 2)));
    assert_eq!((adapted.params - adapted.trainable_params, adapted.trainable_params), (430_482_432, 458_752));
    // MACs at (1, 512): Llama's with the MLP's `3 d ffn` a token run by each of its 2 experts,
    // plus the router's `8 d`.
    let (s, d, ffn) = (512, 1024, 3584);
    let per_layer = 2 * d * d + 2 * d * 8 * 64 + 2 * 3 * d * ffn + 8 * d;
    assert_eq!(small_run.macs, decoder_macs(s, 4, d, per_layer, 32_000));
    assert_eq!(small_run.macs_per_token, Some(small_run.macs / 512));
}

/// The LoRA targets of the calibration's LoRA runs (measure_llm.py's `LORA_TARGETS`).
const Q_K_V_O: &str = "q_proj,k_proj,v_proj,o_proj";

/// peft's LoRA parameters for the r-16 adapters of `family_probes` (its `lora_r=16`): `r (in
/// + out)` for each adapted projection, given as `(in, out)`, in each of `layers` layers.
fn lora_params(layers: i128, projections: &[(i128, i128)]) -> i128 {
    layers * projections.iter().map(|(input, output)| 16 * (input + output)).sum::<i128>()
}

/// The `mul` nodes of `call` (a model of std.models.`family`) run at (1, 64): how a test
/// sees products that change no measured peak (a rotary embedding left out).
fn mul_nodes(family: &str, call: &str) -> usize {
    op_nodes(family, call, netc::op::Op::Mul)
}

/// The nodes of `op` in `call` (a model of std.models.`family`) run at (1, 64).
fn op_nodes(family: &str, call: &str, op: netc::op::Op) -> usize {
    op_nodes_with(family, call, op, "")
}

/// [`op_nodes`] in a scenario with more `settings` (`eval`, ...).
fn op_nodes_with(family: &str, call: &str, op: netc::op::Op, settings: &str) -> usize {
    let mut db = Database::new();
    let text = format!("use std.models.{family}\ninfer s {{ model {call}  batch 1  seq 64  {settings} }}\n");
    let file = db.set_file(FileName::new("probe.net"), text);
    let graph = crate::shapes::scenario_graph_of(&db, file, "s");
    graph.nodes.iter().filter(|n| n.op == op).count()
}

/// The calibration's small model of `family` (`small`, a call without its closing parenthesis)
/// has `params` parameters, and under peft's LoRA (r 16 on q, k, v and o) all of them frozen
/// and `lora` trainable: [`family_probes`] without other calls.
fn assert_small_family(family: &str, small: &str, params: i128, lora: i128) {
    assert_small_family_targeting(family, small, params, lora, Q_K_V_O);
}

/// [`assert_small_family`] with peft's LoRA on `targets` (a family without q/k/v/o_proj).
fn assert_small_family_targeting(family: &str, small: &str, params: i128, lora: i128, targets: &str) {
    let reports = family_probes(family, &[], small, targets);
    let [small_run, adapted] = &reports[..] else { panic!("two reports") };
    assert_eq!(small_run.params, params, "{family}: the small model");
    assert_eq!((adapted.params - adapted.trainable_params, adapted.trainable_params), (params, lora), "{family}: LoRA");
}

/// The reports of a language-model family's probes: each of `calls` at (1, 128), then the
/// calibration's small model (`small`, a call without its closing parenthesis) at (1, 512),
/// then the small model under peft's LoRA (r 16 on `targets`) in a bf16 AdamW step at
/// (1, 128).
fn family_probes(family: &str, calls: &[&str], small: &str, targets: &str) -> Vec<ScenarioReport> {
    let lora = format!("lora_r=16, lora_alpha=32, lora_dropout=0.05, lora_targets=\"{targets}\"");
    let mut text = format!("use std.models.{family}\n");
    for (i, call) in calls.iter().enumerate() {
        text.push_str(&format!("infer probe{i} {{ model {call}  batch 1  seq 128 }}\n"));
    }
    text.push_str(&format!("infer small {{ model {small})  batch 1  seq 512 }}\n"));
    text.push_str(&format!(
        "train adapted {{ model {small}, {lora})  batch 1  seq 128  precision bf16  optimizer adamw  loss causal_lm }}\n"
    ));
    let mut db = Database::new();
    let file = db.set_file(FileName::new("probe.net"), text);
    let r = report(&db, &[file], None);
    assert_eq!(r.scenarios.len(), calls.len() + 2, "{family}: not simulated: {:?}", r.not_simulated);
    r.scenarios
}

/// OLMoE (std.models.olmoe, transformers 5.24's `OlmoeForCausalLM`): OLMoE-1B-7B's parameter
/// count and active one (its `OlmoeConfig` built on the meta device: 6,919,161,856, of which
/// 1,282,017,280 active with 8 of 64 experts), the formula (Llama's attention plus `q_norm`
/// and `k_norm` over the whole projections, every layer's MLP experts and a router, the head
/// untied), the calibration's `olmoe_small` total and peft's LoRA count for it (r 16 on q, k,
/// v and o: 524,288).
#[test]
fn olmoe_family() {
    // Both models have 16 heads, all of them key/value heads.
    let params = |vocab: i128, d: i128, layers: i128, kv: i128, ffn: i128, experts: i128| {
        let hd = d / 16;
        2 * vocab * d + layers * (2 * d * d + 2 * d * kv * hd + d + kv * hd + experts * (3 * d * ffn + d) + 2 * d) + d
    };
    assert_eq!(params(50_304, 2048, 16, 16, 1024, 64) - 16 * 56 * 3 * 2048 * 1024, 1_282_017_280);
    assert_eq!(params(50_304, 2048, 16, 16, 1024, 64), 6_919_161_856);
    let small = "olmoe(vocab=32000, d=1024, layers=4, heads=16, kv_heads=16, experts=16, top_k=4, ffn=512";
    assert_eq!(params(32_000, 1024, 4, 16, 512, 16), 183_059_456, "the calibration's total_params");
    let reports = family_probes("olmoe", &["olmoe_1b_7b()"], small, Q_K_V_O);
    let [big, small_run, adapted] = &reports[..] else { panic!("three reports") };
    assert_eq!((big.params, big.active_params), (6_919_161_856, 1_282_017_280));
    assert_eq!(small_run.params, 183_059_456);
    assert_eq!((adapted.params - adapted.trainable_params, adapted.trainable_params), (183_059_456, 524_288));
}

/// Qwen3-MoE (std.models.qwen3_moe, transformers 5.24's `Qwen3MoeForCausalLM`): the parameter
/// counts of Qwen3-30B-A3B and Qwen3-235B-A22B (a `qwen3_moe(...)` call) and their active ones (8 of 128 experts a
/// token; published "30.5B, 3.3B activated" and "235B, 22B activated"), their
/// `Qwen3MoeConfig`s built on the meta device by transformers 5.24; the formula (Qwen3's
/// attention with `q_norm`/`k_norm`, every layer's MLP `experts` SwiGLU experts and a router,
/// the head untied), the calibration's `qwen3_moe_small` total and peft's LoRA count for it
/// (r 16 on q, k, v and o: 589,824), and the MACs of a token: the router and `top_k` experts.
#[test]
fn qwen3_moe_family() {
    let hd = 128;
    let params = |vocab: i128, d: i128, layers: i128, heads: i128, kv: i128, ffn: i128, experts: i128| {
        2 * vocab * d + layers * (d * hd * (2 * heads + 2 * kv) + 2 * hd + experts * (3 * d * ffn + d) + 2 * d) + d
    };
    let active = |vocab: i128, d: i128, layers: i128, heads: i128, kv: i128, ffn: i128, experts: i128, k: i128| {
        params(vocab, d, layers, heads, kv, ffn, experts) - layers * (experts - k) * 3 * d * ffn
    };
    let published = [
        ("qwen3_30b_a3b()", (2048, 48, 32, 4, 768), 30_532_122_624, 3_353_032_704),
        ("qwen3_moe(d=4096, layers=94, heads=64, ffn=1536)", (4096, 94, 64, 4, 1536), 235_093_634_560, 22_190_763_520),
    ];
    let small = "qwen3_moe(vocab=32000, d=1024, layers=4, heads=16, kv_heads=4, ffn=768, experts=16, top_k=4";
    assert_eq!(params(32_000, 1024, 4, 16, 4, 768, 16), 237_578_240, "the calibration's total_params");
    let calls: Vec<&str> = published.iter().map(|(call, ..)| *call).collect();
    let reports = family_probes("qwen3_moe", &calls, small, Q_K_V_O);
    let [big, huge, small_run, adapted] = &reports[..] else { panic!("four reports") };
    for ((name, (d, layers, heads, kv, ffn), total, active_count), run) in published.iter().zip([big, huge]) {
        assert_eq!(params(151_936, *d, *layers, *heads, *kv, *ffn, 128), *total, "{name}: the formula");
        assert_eq!(active(151_936, *d, *layers, *heads, *kv, *ffn, 128, 8), *active_count, "{name}: the formula");
        assert_eq!((run.params, run.active_params), (*total, *active_count), "{name}");
    }
    assert_eq!(adapted.trainable_params, 589_824);
    assert_eq!(adapted.params - adapted.trainable_params, 237_578_240);
    // MACs at (1, 512): the projections, SDPA's two products, the router's `16 d` and 4
    // experts' `3 d ffn` a token, the head.
    let (s, d, ffn) = (512, 1024, 768);
    let per_token = 4 * (d * hd * (2 * 16 + 2 * 4) + 16 * d + 4 * 3 * d * ffn) + 32_000 * d;
    assert_eq!(small_run.macs, s * per_token + 4 * 2 * s * s * 16 * hd);
}

/// Qwen2-MoE (std.models.qwen2_moe, transformers 5.24's `Qwen2MoeForCausalLM`): the parameter
/// counts of Qwen1.5-MoE-A2.7B and Qwen2-57B-A14B and their active ones (published "14.3B,
/// 2.7B activated" and "57B, 14B activated"), their `Qwen2MoeConfig`s built on the meta device
/// by transformers 5.24; the formula (Qwen2's attention with biased q/k/v, every layer's MLP
/// routed experts, a router, a shared SwiGLU expert and its one-output gate, the head
/// untied); the calibration's `qwen2_moe_small` total and peft's LoRA count for it (r 16 on
/// q, k, v and o: 524,288); the MACs of a token: the router, `top_k` experts, the shared
/// expert and its gate.
#[test]
fn qwen2_moe_family() {
    let params = |vocab: i128, d: i128, layers: i128, heads: i128, kv: i128, ffn: i128, shared: i128, experts: i128| {
        let hd = d / heads;
        let attention = d * hd * (2 * heads + 2 * kv) + hd * (heads + 2 * kv);
        2 * vocab * d + layers * (attention + experts * (3 * d * ffn + d) + 3 * d * shared + d + 2 * d) + d
    };
    let published = [
        ("qwen1_5_moe_a2_7b", (2048, 24, 16, 16, 1408, 5632, 60, 4), 14_315_784_192, 2_689_173_504),
        ("qwen2_57b_a14b", (3584, 28, 28, 4, 2560, 20_480, 64, 8), 57_408_658_944, 14_249_270_784),
    ];
    let small =
        "qwen2_moe(vocab=32000, d=1024, layers=4, heads=16, kv_heads=16, ffn=704, shared_ffn=2816, experts=16, top_k=4";
    assert_eq!(params(32_000, 1024, 4, 16, 16, 704, 2816, 16), 255_419_392, "the calibration's total_params");
    let reports = family_probes("qwen2_moe", &["qwen1_5_moe_a2_7b()", "qwen2_57b_a14b()"], small, Q_K_V_O);
    let [a2_7b, a14b, small_run, adapted] = &reports[..] else { panic!("four reports") };
    for ((name, (d, layers, heads, kv, ffn, shared, experts, k), total, active), run) in
        published.iter().zip([a2_7b, a14b])
    {
        assert_eq!(params(151_936, *d, *layers, *heads, *kv, *ffn, *shared, *experts), *total, "{name}: the formula");
        assert_eq!(*total - layers * (experts - k) * 3 * d * ffn, *active, "{name}: the formula");
        assert_eq!((run.params, run.active_params), (*total, *active), "{name}");
    }
    assert_eq!(adapted.trainable_params, 524_288);
    assert_eq!(adapted.params - adapted.trainable_params, 255_419_392);
    let (s, d, hd) = (512, 1024, 64);
    let per_token = 4 * (d * hd * (2 * 16 + 2 * 16) + 16 * d + 4 * 3 * d * 704 + 3 * d * 2816 + d) + 32_000 * d;
    assert_eq!(small_run.macs, s * per_token + 4 * 2 * s * s * 16 * hd);
}

// ---------------------------------------------------------------------------------------
// The standard library as a whole.

/// The embedded stdlib files, by module.
fn stdlib_files(db: &Database) -> BTreeMap<String, SourceFile> {
    db.stdlib().modules(db).clone()
}

#[test]
fn every_stdlib_file_checks_without_a_diagnostic() {
    let db = Database::new();
    let mut problems = Vec::new();
    for (module, file) in stdlib_files(&db) {
        for d in file_diagnostics(&db, file) {
            problems.push(format!("{module} ({}): {} {}", file.name(&db), d.code.info().code, d.message));
        }
    }
    assert!(problems.is_empty(), "the standard library has diagnostics:\n{}", problems.join("\n"));
}

fn net_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display())) {
        let path = entry.expect("directory entry").path();
        if path.is_dir() {
            net_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "net") {
            out.push(path);
        }
    }
}

#[test]
fn every_stdlib_file_is_embedded() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../stdlib/std");
    let mut files = Vec::new();
    net_files(&root, &mut files);
    let embedded: BTreeMap<&str, &str> = STDLIB_SOURCES.iter().copied().collect();
    let mut on_disk = BTreeSet::new();
    for path in files {
        let relative = path.strip_prefix(&root).expect("below the root").with_extension("");
        let module = format!("std.{}", relative.to_string_lossy().replace(['/', '\\'], "."));
        let text = std::fs::read_to_string(&path).expect("readable");
        let Some(source) = embedded.get(module.as_str()) else {
            panic!("{} is not in netc::db::STDLIB_SOURCES as `{module}`", path.display());
        };
        assert_eq!(*source, text, "{module}: the embedded text is stale; rebuild");
        assert_eq!(
            netc::db::stdlib_file_name(&module).as_str(),
            format!("<std>/{}.net", relative.to_string_lossy().replace('\\', "/")),
            "{module}: its file name mirrors its path"
        );
        on_disk.insert(module);
    }
    let registered: BTreeSet<String> = embedded.keys().map(|m| m.to_string()).collect();
    assert_eq!(registered, on_disk, "STDLIB_SOURCES and stdlib/std/ list the same modules");
}

/// The zoo modules: `std.models.*`.
fn zoo_modules() -> Vec<&'static str> {
    STDLIB_SOURCES.iter().map(|(m, _)| *m).filter(|m| m.starts_with("std.models.")).collect()
}

#[test]
fn every_zoo_model_has_a_train_and_an_infer_scenario_with_a_device_and_a_budget() {
    let db = Database::new();
    let files = stdlib_files(&db);
    let mut problems = Vec::new();
    for module in zoo_modules() {
        let file = files[module];
        let tree = syntax_tree(&db, file);
        let mut kinds: BTreeMap<String, BTreeSet<&str>> = BTreeMap::new();
        for item in tree.iter() {
            match item {
                Item::Model(m) => {
                    kinds.entry(m.name.text.to_string()).or_default();
                }
                Item::Scenario(s) => {
                    let setting = |key: &str| s.settings.iter().find(|x| x.key.text == key);
                    for key in ["device", "budget", "batch"] {
                        if setting(key).is_none() {
                            problems.push(format!("{module}: scenario `{}` has no `{key}`", s.name.text));
                        }
                    }
                    let model = match setting("model").map(|x| &x.value) {
                        Some(SettingValue::Value(e)) => match &e.kind {
                            ExprKind::Call { callee, .. } => callee.text.to_string(),
                            ExprKind::Name(n) => n.text.to_string(),
                            other => panic!("{module}: scenario `{}`: model {other:?}", s.name.text),
                        },
                        _ => panic!("{module}: scenario `{}` has no model", s.name.text),
                    };
                    let kind = s.kind.keyword();
                    kinds.entry(model).or_default().insert(kind);
                }
                _ => {}
            }
        }
        for (model, k) in kinds {
            if k.len() != 2 {
                problems.push(format!("{module}: model `{model}` has scenarios {k:?}, not train and infer"));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn report_of_every_zoo_file() {
    let db = Database::new();
    let files = stdlib_files(&db);
    for module in zoo_modules() {
        let file = files[module];
        let r = report(&db, &[file], None);
        let scenarios = syntax_tree(&db, file).iter().filter(|i| matches!(i, Item::Scenario(_))).count();
        assert_eq!(r.scenarios.len(), scenarios, "{module}: every scenario has a report");
        let name = format!("report_{}", module.trim_start_matches("std.models."));
        insta::assert_snapshot!(name, table(&r));
    }
}

/// Every zoo scenario's "at peak" column adds up to the activations live at its peak: each
/// line holds what its ops made that is live then, and what no line made is the loss's
/// tensors (log-probabilities and their gradient, a scalar), none in inference.
#[test]
fn the_lines_at_the_peak_add_up_to_the_peaks_activations() {
    let db = Database::new();
    let files = stdlib_files(&db);
    for module in zoo_modules() {
        for s in report(&db, &[files[module]], None).scenarios {
            let at_peak: i128 = s.lines.iter().map(|l| l.peak_bytes).sum();
            let what = format!("{module}: scenario `{}`", s.name);
            assert!(at_peak > 0, "{what}: nothing at the peak");
            if s.kind == "infer" {
                assert_eq!(at_peak, s.ledgers.activations, "{what}");
            } else {
                assert!(at_peak <= s.ledgers.activations, "{what}");
            }
        }
    }
}

/// The README's language-model example says what netc answers for Llama 3.1 8B: LoRA needs
/// 19.4 GiB on a 24 GB card (13,631,488 trainable parameters, up to 4,443 tokens), full bf16
/// fine-tuning 75.1 GiB, and 8 sequences of 8k tokens fit on the card (63 on an 80 GB A100);
/// QLoRA 9.7 GiB (up to 9,435 tokens), LoRA over int8 weights 16.1 GiB (up to 4,285), and
/// with int8 or AWQ weights 14 or 18 sequences (69 or 73).
#[test]
fn readme_language_model_answers() {
    use netc::costs::fit::{Axis, fit};
    let readme = std::fs::read_to_string(crate::support::root().join("README.md")).expect("the README");
    let section = readme.split("### Language models").nth(1).expect("the section");
    let text = section.split("```net\n").nth(1).and_then(|s| s.split("```").next()).expect("its example");
    let answers = |text: String| {
        let mut db = Database::new();
        let file = db.set_file(FileName::new("llm.net"), text);
        let r = report(&db, &[file], None);
        let lora = r.scenarios.iter().find(|s| s.name == "lora").expect("lora");
        let decode = syntax_tree(&db, file)
            .iter()
            .position(|i| matches!(i, Item::Scenario(s) if s.name.text == "decode"))
            .expect("decode") as u32;
        let fits = fit(&db, file, decode, Axis::Batch).expect("a fit").largest;
        (netc::units::bytes(lora.total_bytes), lora.trainable_params, fits)
    };
    // The totals are netc's own figures (the README quotes them); the mechanism behind them
    // is held to transformers' measured peaks in memory.rs. The rest is derived here:
    // peft's adapters are r (in + out) per targeted projection, 32 layers of q, k, v and o
    // (d 4096, 8 key/value heads of 128: k and v are 1024 wide).
    let (d, kv, r) = (4096, 1024, 16);
    let trainable = 32 * r * ((d + d) + (d + kv) + (d + kv) + (d + d));
    // 8 sequences fit and 9 do not, from the ledgers alone: bf16 weights, each sequence's
    // cache after the step (8,193 tokens of 32 layers' keys and values, 8 heads of 128, 2 B)
    // and the card's runtime, against its 24 GiB.
    let weights = 8_030_261_248_i128 * 2;
    let per_sequence = 8193 * 32 * 2 * 8 * 128 * 2;
    let (runtime, card) = (300 << 20, 24_i128 << 30);
    assert!(weights + 8 * per_sequence + runtime < card && weights + 9 * per_sequence + runtime > card);
    assert_eq!(answers(text.to_string()), ("19.4 GiB".to_string(), trainable, Some(8)));
    let full = text.replace(
        "llama3_1_8b(lora_r=16, lora_alpha=32, lora_dropout=0.05, lora_targets=\"q_proj,k_proj,v_proj,o_proj\")",
        "llama3_1_8b()",
    );
    assert_eq!(answers(full).0, "75.1 GiB");
    let a100 = text.replace("cache dynamic  device rtx4090", "cache dynamic  device a100_80gb");
    assert_eq!(answers(a100).2, Some(63));
    // QLoRA: the same adapters over NF4 double-quantized projections. Its weights: the bf16
    // embedding and head (128,256 x 4096 each, 2.0 GiB) and norms, the float32 adapters, and
    // the 32 layers' 7 projections as bitsandbytes 0.50 stores them: two 4-bit codes a byte,
    // a 16-entry float32 codebook, a byte per block of 64, a float32 scale per 256 blocks,
    // the 256-entry float32 code of those bytes and their offset (measured to the byte in
    // memory.rs, `qlora_matches_bitsandbytes_and_peft`).
    let qlora = text.replace(
        "lora_targets=\"q_proj,k_proj,v_proj,o_proj\")",
        "lora_targets=\"q_proj,k_proj,v_proj,o_proj\", quant=\"nf4\", double_quant=true)",
    );
    assert_eq!(answers(qlora.clone()).0, "9.7 GiB");
    let four_bit: i128 = [d * d, d * kv, d * kv, d * d, d * 14_336, d * 14_336, d * 14_336]
        .iter()
        .map(|&n: &i128| {
            let blocks = (n + 63) / 64;
            n / 2 + 16 * 4 + blocks + (blocks + 255) / 256 * 4 + 256 * 4 + 4
        })
        .sum();
    let stored = 2 * 128_256 * d * 2 + (2 * 32 + 1) * d * 2 + trainable * 4 + 32 * four_bit;
    assert_eq!(netc::units::bytes(stored), "5.4 GiB");
    let mut db = Database::new();
    let file = db.set_file(FileName::new("qlora.net"), qlora.clone());
    let r = report(&db, &[file], None);
    assert_eq!(r.scenarios.iter().find(|s| s.name == "lora").expect("lora").ledgers.weights, stored);
    let lora = syntax_tree(&db, file)
        .iter()
        .position(|i| matches!(i, Item::Scenario(s) if s.name.text == "lora"))
        .expect("lora") as u32;
    assert_eq!(fit(&db, file, lora, Axis::Seq).expect("a fit").largest, Some(9435));
    // Prepared as peft's QLoRA recipe prepares it: the embedding, head and norms in float32
    // (two bytes more for each of their parameters) and reentrant checkpointing.
    let recipe = qlora.replace("checkpoint  device", "prepare_kbit  checkpoint  reentrant  device");
    assert_eq!(answers(recipe.clone()).0, "12.7 GiB");
    let mut db = Database::new();
    let file = db.set_file(FileName::new("recipe.net"), recipe);
    let r = report(&db, &[file], None);
    let prepared = stored + (2 * 128_256 * d + (2 * 32 + 1) * d) * 2;
    assert_eq!(r.scenarios.iter().find(|s| s.name == "lora").expect("lora").ledgers.weights, prepared);
    assert_eq!(netc::units::bytes(prepared), "7.3 GiB");
    let lora = syntax_tree(&db, file)
        .iter()
        .position(|i| matches!(i, Item::Scenario(s) if s.name.text == "lora"))
        .expect("lora") as u32;
    assert_eq!(fit(&db, file, lora, Axis::Seq).expect("a fit").largest, Some(6736));
    // LoRA over LLM.int8() weights: less at 2,048 tokens than bf16 LoRA, but fewer tokens fit
    // (every 8-bit projection's input stays on bitsandbytes' `ctx` through checkpointing).
    let int8 = text.replace(
        "lora_targets=\"q_proj,k_proj,v_proj,o_proj\")",
        "lora_targets=\"q_proj,k_proj,v_proj,o_proj\", quant=\"int8\")",
    );
    assert_eq!(answers(int8.clone()).0, "16.1 GiB");
    let longest = |text: String, scenario: &str, axis: Axis| {
        let mut db = Database::new();
        let file = db.set_file(FileName::new("llm.net"), text);
        let item = syntax_tree(&db, file)
            .iter()
            .position(|i| matches!(i, Item::Scenario(s) if s.name.text == scenario))
            .expect("the scenario") as u32;
        fit(&db, file, item, axis).expect("a fit").largest
    };
    assert_eq!(longest(text.to_string(), "lora", Axis::Seq), Some(4443));
    assert_eq!(longest(int8.clone(), "lora", Axis::Seq), Some(4285));
    // With reentrant checkpointing the 8-bit layers keep no input.
    let int8_reentrant = int8.replace("checkpoint  device", "checkpoint  reentrant  device");
    assert_eq!(answers(int8_reentrant.clone()).0, "12.9 GiB");
    assert_eq!(longest(int8_reentrant, "lora", Axis::Seq), Some(7804));
    // LoRA over GPTQ and AWQ checkpoints (groups of 128): the same with checkpointing; without
    // it GPTQ's trainable kernel saves every projection's weight dequantized to bf16 (but
    // layer 0's q, k and v, whose input is the frozen embedding's output), AWQ's none.
    let over = |quant: &str, checkpoint: bool| {
        let adapted = text.replace(
            "lora_targets=\"q_proj,k_proj,v_proj,o_proj\")",
            &format!("lora_targets=\"q_proj,k_proj,v_proj,o_proj\", quant=\"{quant}\")"),
        );
        if checkpoint { adapted } else { adapted.replace("checkpoint  device", "device") }
    };
    assert_eq!(answers(over("gptq", true)).0, "9.7 GiB");
    assert_eq!(answers(over("awq", true)).0, "9.7 GiB");
    assert_eq!(answers(over("awq", false)).0, "22.7 GiB");
    assert_eq!(answers(over("gptq", false)).0, "35.7 GiB");
    let layer: i128 = [d * d, d * kv, d * kv, d * d, d * 14_336, d * 14_336, d * 14_336].iter().sum();
    let saved = 2 * (32 * layer - (d * d + 2 * d * kv));
    let mut db = Database::new();
    let file = db.set_file(FileName::new("gptq.net"), over("gptq", false));
    let lora = syntax_tree(&db, file)
        .iter()
        .position(|i| matches!(i, Item::Scenario(s) if s.name.text == "lora"))
        .expect("lora") as u32;
    let costs = netc::costs::scenario_costs(&db, netc::semantics::files::ItemLoc::new(&db, file, lora))
        .as_ref()
        .expect("simulates");
    assert_eq!(costs.simulation.dequantized_weights_kept.bytes, saved);
    assert_eq!(netc::units::bytes(saved), "13.0 GiB");
    // Serving with int8 and AWQ weights: the decoder's projections stored as each format
    // stores them (the embedding, head and norms bf16), and how many 8k sequences then fit.
    // bitsandbytes' int8 weights are parameters; AWQ's packed weights, zeros and scales are
    // buffers (gptqmodel registers them so), beside the rotary embedding's `inv_freq` and
    // `original_inv_freq`.
    let projections = [(d, d), (d, kv), (d, kv), (d, d), (d, 14_336), (d, 14_336), (14_336, d)];
    let rest = 2 * 128_256 * d * 2 + (2 * 32 + 1) * d * 2;
    let int8_weights: i128 = rest + 32 * projections.iter().map(|&(i, o)| i * o + 4 * o).sum::<i128>();
    let awq_packed: i128 = 32
        * projections.iter().map(|&(i, o)| 4 * i * (o / 8) + 4 * (i / 128) * (o / 8) + 2 * (i / 128) * o).sum::<i128>();
    let rotary_buffers = 2 * 64 * 4;
    for (quant, weights, buffers, on_24, on_80) in
        [("int8", int8_weights, rotary_buffers, 14, 69), ("awq", rest, rotary_buffers + awq_packed, 18, 73)]
    {
        let served =
            text.replace("llama3_1_8b(logits_to_keep=1)", &format!("llama3_1_8b(logits_to_keep=1, quant=\"{quant}\")"));
        let mut db = Database::new();
        let file = db.set_file(FileName::new("serve.net"), served.clone());
        let r = report(&db, &[file], None);
        let ledgers = r.scenarios.iter().find(|s| s.name == "decode").expect("decode").ledgers;
        assert_eq!((ledgers.weights, ledgers.buffers), (weights, buffers), "{quant}");
        assert_eq!(longest(served.clone(), "decode", Axis::Batch), Some(on_24), "{quant}");
        let a100 = served.replace("cache dynamic  device rtx4090", "cache dynamic  device a100_80gb");
        assert_eq!(longest(a100, "decode", Axis::Batch), Some(on_80), "{quant}");
    }
}
