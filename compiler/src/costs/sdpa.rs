//! Which kernel `torch.nn.functional.scaled_dot_product_attention` runs, and so what it keeps
//! for backward: PyTorch picks it at run time from the device, the dtype and the shapes
//! (`sdp::select_sdp_backend` in aten/src/ATen/native/transformers/cuda/sdp_utils.cpp, and
//! `select_sdp_backend_cpp` in sdp_utils_cpp.cpp, PyTorch 2.15), walking a priority order
//! and taking the first kernel whose constraints hold. netc's `sdpa` has no dropout and no
//! nested tensors, so the constraints on those always pass; a mask rules out FlashAttention
//! on CUDA (`check_for_attn_mask`), and every kernel that takes one checks only its shape,
//! which the shape rule has checked.

use super::devices::{Device, DeviceKind};

/// An attention kernel (PyTorch's `SDPBackend`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SdpaBackend {
    /// FlashAttention-2 (CUDA, fp16/bf16, sm80 and newer) or the CPU's flash kernel
    /// (`_scaled_dot_product_flash_attention_for_cpu`): saves q, k, v, the output and a
    /// float32 log-sum-exp per query row.
    Flash,
    /// The memory-efficient (CUTLASS) kernel: saves q, k, v, the output and a log-sum-exp
    /// whose rows are padded to a multiple of 32.
    Efficient,
    /// cuDNN's fused attention: saves q, k, v, the output and float32 softmax statistics.
    Cudnn,
    /// `_scaled_dot_product_attention_math`, the attention written out: it keeps the scaled
    /// queries and keys it multiplied and the `Tq x Tk` attention weights.
    Math,
}

impl SdpaBackend {
    /// Every kernel, in the order their names are listed.
    pub const ALL: [SdpaBackend; 4] =
        [SdpaBackend::Flash, SdpaBackend::Efficient, SdpaBackend::Cudnn, SdpaBackend::Math];

    /// The name of the `sdpa` op's `backend` argument that forces this kernel (as
    /// `torch.nn.attention.sdpa_kernel` does).
    pub fn name(self) -> &'static str {
        match self {
            SdpaBackend::Flash => "flash",
            SdpaBackend::Efficient => "efficient",
            SdpaBackend::Cudnn => "cudnn",
            SdpaBackend::Math => "math",
        }
    }

    /// The backend a `backend` argument names (`None` for `"auto"` and unknown names).
    pub fn from_name(name: &str) -> Option<SdpaBackend> {
        SdpaBackend::ALL.into_iter().find(|b| b.name() == name)
    }
}

/// The element type the kernel sees (after autocast or a half model's conversion).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KernelDtype {
    /// float16.
    Half,
    /// bfloat16.
    BFloat16,
    /// float32.
    Float,
    /// float64.
    Double,
}

impl KernelDtype {
    /// The PyTorch name of the type.
    pub fn name(self) -> &'static str {
        match self {
            KernelDtype::Half => "float16",
            KernelDtype::BFloat16 => "bfloat16",
            KernelDtype::Float => "float32",
            KernelDtype::Double => "float64",
        }
    }

    /// Bytes of one element, as `DType::size` gives them for the same types.
    pub fn size(self) -> i128 {
        match self {
            KernelDtype::Half | KernelDtype::BFloat16 => 2,
            KernelDtype::Float => 4,
            KernelDtype::Double => 8,
        }
    }

    fn is_low_precision(self) -> bool {
        matches!(self, KernelDtype::Half | KernelDtype::BFloat16)
    }
}

/// What the kernel choice depends on.
#[derive(Debug, Clone, Copy)]
pub struct SdpaCall {
    /// All of q, k and v have 4 dimensions (`[N, H, T, D]`), which every fused kernel needs.
    pub four_d: bool,
    /// The element type.
    pub dtype: KernelDtype,
    /// Head sizes of q, k and v (their last dimensions).
    pub head_dims: (i128, i128, i128),
    /// Sequence lengths of q and k.
    pub lengths: (i128, i128),
    /// `is_causal`.
    pub causal: bool,
    /// An `attn_mask` is given (FlashAttention on CUDA takes none).
    pub masked: bool,
    /// Whether an input requires grad (autograd records the call).
    pub requires_grad: bool,
    /// Query heads per key/value head under `enable_gqa` (1 without): every fused kernel
    /// takes grouped heads as they are (`check_batch_size_and_num_heads_dense` with
    /// `supports_gqa`); the math path repeats k and v first.
    pub head_groups: i128,
    /// Query heads per key/value head when they differ without `enable_gqa` (1 when they are
    /// equal): the batched matmuls of the math path broadcast them, and no fused kernel takes
    /// them (`check_batch_size_and_num_heads_dense` wants equal heads), as Falcon-7B's
    /// multi-query attention runs.
    pub broadcast_heads: i128,
}

/// The cuDNN version of the CUDA 13.2 wheels of PyTorch 2.15 (`torch.backends.cudnn.version()`
/// = 92600, recorded by the calibration): it decides cuDNN attention's priority and limits.
const CUDNN_VERSION: u32 = 92_600;

/// The kernel PyTorch runs for `call` on `device`: the first of the priority order whose
/// constraints hold, or only `forced` (`sdpa_kernel`); `None` when the forced kernel cannot
/// run (PyTorch raises "No available kernel").
pub fn select(device: &Device, call: &SdpaCall, forced: Option<SdpaBackend>) -> Option<SdpaBackend> {
    let order: &[SdpaBackend] = match (device.kind, device.compute_capability()) {
        (DeviceKind::Cuda, Some(cc)) if prefers_cudnn(cc) => {
            &[SdpaBackend::Cudnn, SdpaBackend::Flash, SdpaBackend::Efficient, SdpaBackend::Math]
        }
        (DeviceKind::Cuda, _) => &[SdpaBackend::Flash, SdpaBackend::Efficient, SdpaBackend::Math, SdpaBackend::Cudnn],
        // The CPU tries its flash kernel, then the math path. MPS is not modelled: its own
        // kernels are not measured, and the math path is what it falls back to.
        (DeviceKind::Cpu, _) => &[SdpaBackend::Flash, SdpaBackend::Math],
        (DeviceKind::Mps, _) => &[SdpaBackend::Math],
    };
    order.iter().copied().filter(|b| forced.is_none_or(|f| f == *b)).find(|b| can_use(device, call, *b))
}

/// `check_prefer_cudnn_attention`: with cuDNN newer than 9.15 and CUDA 13, sm90 and sm10x
/// try cuDNN's kernel first.
fn prefers_cudnn((major, _): (u8, u8)) -> bool {
    CUDNN_VERSION > 91_500 && (major == 9 || major == 10)
}

fn sm_between(device: &Device, low: (u8, u8), high: (u8, u8)) -> bool {
    device.compute_capability().is_some_and(|cc| low <= cc && cc <= high)
}

/// Whether `backend` can run `call` on `device` (the `can_use_*` functions).
fn can_use(device: &Device, call: &SdpaCall, backend: SdpaBackend) -> bool {
    rejection(device, call, backend).is_none()
}

/// Why `backend` cannot run `call` on `device`: the first of its `can_use_*` checks that
/// fails, in words ("an explicit mask"); `None` when it can run it.
pub fn rejection(device: &Device, call: &SdpaCall, backend: SdpaBackend) -> Option<String> {
    let (dq, dk, dv) = call.head_dims;
    let (tq, tk) = call.lengths;
    let major = device.compute_capability().map_or(0, |cc| cc.0);
    // The checks in the order the kernel's `can_use_*` runs them: the first that fails is
    // the reason.
    let first_failing =
        |checks: &[(bool, &dyn Fn() -> String)]| checks.iter().find(|(ok, _)| !ok).map(|(_, why)| why());
    let dtype = || format!("{} inputs", call.dtype.name());
    let not_4d = || "inputs that are not 4-D".to_string();
    let head_sizes = || format!("head sizes that differ ({dq}, {dk}, {dv})");
    let gpu = || {
        let (major, minor) = device.compute_capability().unwrap_or((0, 0));
        format!("the {} (sm{major}{minor})", device.name())
    };
    match (device.kind, backend) {
        (_, SdpaBackend::Math) => None,
        // `check_batch_size_and_num_heads_dense`, in every fused kernel's constraints.
        _ if call.broadcast_heads > 1 => {
            Some(format!("{} query heads per key head without `enable_gqa`", call.broadcast_heads))
        }
        // use_flash_attention_cpp: 4-D, equal head sizes, fp32/fp64/bf16/fp16.
        (DeviceKind::Cpu, SdpaBackend::Flash) => first_failing(&[
            (call.four_d, &not_4d),
            (dq == dk && dq == dv, &head_sizes),
            (tq > 0 && tk > 0, &|| "an empty sequence".to_string()),
        ]),
        (DeviceKind::Cpu | DeviceKind::Mps, _) => Some(format!("no {} kernel on {}", backend.name(), device.name())),
        (DeviceKind::Cuda, SdpaBackend::Flash) => {
            let sm86_89_or_120 = sm_between(device, (8, 6), (8, 9)) || sm_between(device, (12, 0), (12, 1));
            // Training with head sizes in (192, 224] fails in backward there (no dropout here).
            let head_ok_for_training = !(call.requires_grad && sm86_89_or_120) || dq <= 192 || dq > 224;
            first_failing(&[
                (call.four_d, &not_4d),
                (dq == dk && dq == dv, &head_sizes),
                (dq <= 256, &|| format!("a head size of {dq}, over 256")),
                (sm_between(device, (8, 0), (12, 1)), &gpu),
                (head_ok_for_training, &|| format!("training with a head size of {dq} on the {}", device.name())),
                (!call.causal || tq == tk, &|| format!("a causal mask over {tk} keys for {tq} queries")),
                (!call.masked, &|| "an explicit mask".to_string()),
                (call.dtype.is_low_precision(), &dtype),
            ])
        }
        (DeviceKind::Cuda, SdpaBackend::Efficient) => {
            let alignment = minimum_gemm_alignment(major, call.dtype);
            let dtype_ok = match call.dtype {
                KernelDtype::Half | KernelDtype::Float => true,
                KernelDtype::BFloat16 => major >= 8,
                KernelDtype::Double => false,
            };
            // `check_batch_size_and_num_heads_dense<false>`: no grouped heads.
            first_failing(&[
                (sm_between(device, (5, 0), (12, 1)), &gpu),
                (call.four_d, &not_4d),
                (call.head_groups <= 1, &|| "grouped heads (`enable_gqa`)".to_string()),
                (dq == dk, &head_sizes),
                (dq > 0 && dq % alignment == 0 && dv > 0 && dv % alignment == 0, &|| {
                    format!("head sizes ({dq}, {dv}) that are not multiples of {alignment}")
                }),
                (dtype_ok, &dtype),
            ])
        }
        (DeviceKind::Cuda, SdpaBackend::Cudnn) => {
            let sm90_or_10x = matches!(device.compute_capability(), Some((9, 0)) | Some((10, _)));
            let newer_cudnn_on_hopper = sm90_or_10x && CUDNN_VERSION > 92_200;
            let head_limit = if newer_cudnn_on_hopper { 256 } else { 128 };
            // Training with large heads is limited to the (q, v) head sizes cuDNN's backward has.
            let backward_ok = !(call.requires_grad && newer_cudnn_on_hopper)
                || (dq <= 128 && dv <= 128)
                || (dq == 192 && dv == 128)
                || (dq == 256 && dv == 256);
            first_failing(&[
                (call.four_d, &not_4d),
                (call.dtype.is_low_precision(), &dtype),
                (sm_between(device, (8, 0), (12, 1)), &gpu),
                (dq <= head_limit && dv <= head_limit, &|| format!("head sizes ({dq}, {dv}) over {head_limit}")),
                (dq % 8 == 0 && dv % 8 == 0, &|| format!("head sizes ({dq}, {dv}) that are not multiples of 8")),
                (tk != 1, &|| "a single key".to_string()),
                (backward_ok, &|| format!("training with head sizes ({dq}, {dv}), which its backward lacks")),
            ])
        }
    }
}

/// `minimum_gemm_alignment`: the head-size multiple the efficient kernel's GEMMs need (4 on
/// sm80+, 128 bits of elements where tensor cores run).
fn minimum_gemm_alignment(major: u8, dtype: KernelDtype) -> i128 {
    let half = dtype.is_low_precision();
    let tensor_cores = major >= 8 || (major >= 7 && half);
    let base = if major >= 8 { 4 } else { 1 };
    if tensor_cores { base.max(128 / if half { 16 } else { 32 }) } else { base }
}

/// Bytes of the tensors a kernel makes for backward besides q, k, v and the output, for
/// `rows` query rows (`N x H x Tq`), as the kernels' meta functions give them (measured:
/// tests/fixtures/ops/measurements_sdpa.json): the float32 log-sum-exp, and on CUDA the
/// random-number state (the efficient and cuDNN kernels: a seed and an offset, 8 B each;
/// flash: a 2 x 8 B state and an 8 B placeholder).
pub fn fused_extras(device: &Device, backend: SdpaBackend, rows: i128, tq: i128) -> i128 {
    let cuda = device.kind == DeviceKind::Cuda;
    match backend {
        SdpaBackend::Flash if cuda => rows.saturating_mul(4).saturating_add(24),
        SdpaBackend::Flash => rows.saturating_mul(4),
        // The log-sum-exp's rows are padded to a multiple of 32 per (batch, head).
        SdpaBackend::Efficient => {
            let heads = if tq > 0 { rows / tq } else { 0 };
            let padded = (tq.saturating_add(31) / 32).saturating_mul(32);
            heads.saturating_mul(padded).saturating_mul(4).saturating_add(16)
        }
        SdpaBackend::Cudnn => rows.saturating_mul(4).saturating_add(16),
        SdpaBackend::Math => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::knobs::DeviceModel;

    /// The shape layer checks `backend=` against its own list (it comes before costs): the
    /// same names as the kernels here, and `auto`.
    #[test]
    fn the_backend_names_the_shape_layer_accepts_are_the_kernels() {
        let names: Vec<&str> = std::iter::once("auto").chain(SdpaBackend::ALL.map(SdpaBackend::name)).collect();
        assert_eq!(names, crate::shapes::ops::SDPA_BACKENDS);
    }

    fn call(dtype: KernelDtype, d: i128) -> SdpaCall {
        SdpaCall {
            four_d: true,
            dtype,
            head_dims: (d, d, d),
            lengths: (1024, 1024),
            causal: true,
            masked: false,
            requires_grad: true,
            head_groups: 1,
            broadcast_heads: 1,
        }
    }

    /// The choices of sdp_utils.cpp, case by case: (device, dtype, head size, expected).
    #[test]
    fn kernel_choice_follows_pytorchs_constraints() {
        use KernelDtype::*;
        use SdpaBackend::*;
        let cases = [
            // A100 (sm80): flash for half, efficient for float32 (flash needs fp16/bf16).
            (DeviceModel::A100_80gb, BFloat16, 64, Some(Flash)),
            (DeviceModel::A100_80gb, Float, 64, Some(Efficient)),
            // Double runs no fused CUDA kernel.
            (DeviceModel::A100_80gb, Double, 64, Some(Math)),
            // H100 (sm90): cuDNN first with cuDNN 9.26; not for float32.
            (DeviceModel::H100_80gb, Half, 128, Some(Cudnn)),
            (DeviceModel::H100_80gb, Float, 128, Some(Efficient)),
            // cuDNN's backward takes head sizes up to 128, 192/128 or 256/256: 160 falls to flash.
            (DeviceModel::H200, BFloat16, 160, Some(Flash)),
            // Head size over 256: no flash; efficient takes it.
            (DeviceModel::H100_80gb, Half, 320, Some(Efficient)),
            // T4 (sm75): no flash, no cuDNN; efficient runs fp16, not bf16.
            (DeviceModel::T4, Half, 64, Some(Efficient)),
            (DeviceModel::T4, BFloat16, 64, Some(Math)),
            // RTX 4090 (sm89): flash cannot train head sizes in (192, 224].
            (DeviceModel::Rtx4090, Half, 200, Some(Efficient)),
            (DeviceModel::Rtx4090, Half, 128, Some(Flash)),
            // A head size the efficient kernel cannot align: fp32 needs a multiple of 4.
            (DeviceModel::A100_80gb, Float, 66, Some(Math)),
            // The CPU: its flash kernel, whatever the dtype.
            (DeviceModel::Cpu, Float, 64, Some(Flash)),
            (DeviceModel::Cpu, BFloat16, 80, Some(Flash)),
        ];
        for (model, dtype, d, expected) in cases {
            let got = select(Device::preset(model), &call(dtype, d), None);
            assert_eq!(got, expected, "{model:?} {dtype:?} head {d}");
        }
    }

    /// A mask rules out FlashAttention on CUDA (`check_for_attn_mask`), not the CPU's flash
    /// kernel, the efficient kernel or cuDNN's; the efficient kernel takes no grouped heads
    /// (`check_batch_size_and_num_heads_dense<false>`), so fp32 GQA on CUDA runs the math path;
    /// key heads that differ from the query's without `enable_gqa` rule out every fused kernel.
    #[test]
    fn a_mask_and_grouped_heads_rule_out_kernels() {
        use KernelDtype::*;
        use SdpaBackend::*;
        let masked = |dtype, d| SdpaCall { masked: true, causal: false, ..call(dtype, d) };
        let grouped = |dtype, d| SdpaCall { head_groups: 4, ..call(dtype, d) };
        let broadcast = |dtype, d| SdpaCall { broadcast_heads: 16, masked: true, causal: false, ..call(dtype, d) };
        let cases = [
            (DeviceModel::A100_80gb, masked(BFloat16, 64), Some(Efficient)),
            (DeviceModel::H100_80gb, masked(BFloat16, 128), Some(Cudnn)),
            (DeviceModel::Cpu, masked(Float, 64), Some(Flash)),
            (DeviceModel::A100_80gb, grouped(BFloat16, 64), Some(Flash)),
            (DeviceModel::A100_80gb, grouped(Float, 64), Some(Math)),
            (DeviceModel::T4, grouped(Half, 64), Some(Math)),
            // One key head for 16 query heads without `enable_gqa` (Falcon-7B): math everywhere.
            (DeviceModel::A100_80gb, broadcast(BFloat16, 64), Some(Math)),
            (DeviceModel::H100_80gb, broadcast(BFloat16, 64), Some(Math)),
            (DeviceModel::Cpu, broadcast(Float, 64), Some(Math)),
        ];
        for (model, c, expected) in cases {
            assert_eq!(select(Device::preset(model), &c, None), expected, "{model:?} {c:?}");
        }
    }

    #[test]
    fn forcing_a_kernel_that_cannot_run_finds_none() {
        let a100 = Device::preset(DeviceModel::A100_80gb);
        let fp32 = call(KernelDtype::Float, 64);
        assert_eq!(select(a100, &fp32, Some(SdpaBackend::Flash)), None);
        assert_eq!(select(a100, &fp32, Some(SdpaBackend::Math)), Some(SdpaBackend::Math));
        let cpu = Device::preset(DeviceModel::Cpu);
        assert_eq!(select(cpu, &fp32, Some(SdpaBackend::Efficient)), None);
        // 3-D inputs: no fused kernel anywhere.
        let three_d = SdpaCall { four_d: false, ..fp32 };
        assert_eq!(select(cpu, &three_d, None), Some(SdpaBackend::Math));
        assert_eq!(select(a100, &three_d, None), Some(SdpaBackend::Math));
    }

    /// Measured (tests/fixtures/ops/measurements_sdpa.json, N 4, H 4, T 100): log-sum-exp of
    /// 4 x 4 x 100 float32 (6,400 B); padded to 128 rows for the efficient kernel (8,192 B).
    #[test]
    fn extras_are_the_kernels_saved_tensors() {
        let a100 = Device::preset(DeviceModel::A100_80gb);
        let cpu = Device::preset(DeviceModel::Cpu);
        assert_eq!(fused_extras(cpu, SdpaBackend::Flash, 1600, 100), 6400);
        assert_eq!(fused_extras(a100, SdpaBackend::Flash, 1600, 100), 6400 + 16 + 8);
        assert_eq!(fused_extras(a100, SdpaBackend::Efficient, 1600, 100), 8192 + 8 + 8);
        assert_eq!(fused_extras(a100, SdpaBackend::Cudnn, 1600, 100), 6400 + 8 + 8);
    }

    /// Each kernel's reason is the first of its checks that fails, in words; a kernel that
    /// runs the call has none.
    #[test]
    fn a_rejection_names_the_first_failing_check() {
        use KernelDtype::*;
        use SdpaBackend::*;
        let (a100, t4) = (Device::preset(DeviceModel::A100_80gb), Device::preset(DeviceModel::T4));
        let bf16 = call(BFloat16, 64);
        assert_eq!(rejection(a100, &bf16, Flash), None);
        assert_eq!(rejection(a100, &bf16, Math), None);
        let reasons = |device, c: &SdpaCall| [Flash, Efficient, Cudnn].map(|b| rejection(device, c, b));
        let broadcast = SdpaCall { broadcast_heads: 71, ..bf16 };
        let why = "71 query heads per key head without `enable_gqa`".to_string();
        assert_eq!(reasons(a100, &broadcast), [Some(why.clone()), Some(why.clone()), Some(why)]);
        assert_eq!(
            reasons(t4, &bf16),
            [Some("the t4 (sm75)".into()), Some("bfloat16 inputs".into()), Some("the t4 (sm75)".into())]
        );
        let masked = SdpaCall { masked: true, causal: false, ..bf16 };
        assert_eq!(rejection(a100, &masked, Flash), Some("an explicit mask".into()));
        let odd = call(Float, 66);
        assert_eq!(rejection(a100, &odd, Flash), Some("float32 inputs".into()));
        assert_eq!(rejection(a100, &odd, Efficient), Some("head sizes (66, 66) that are not multiples of 4".into()));
    }
}
