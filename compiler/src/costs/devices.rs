//! Device presets: capacity, runtime overhead, and the PyTorch behaviours that differ by
//! device (dropout masks, the default optimizer implementation, allocator rounding), by the
//! [`DeviceModel`] a scenario names.

use crate::knobs::DeviceModel;

/// Whether a device runs PyTorch's CPU or CUDA code paths.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DeviceKind {
    /// CPU tensors (oneDNN kernels, host memory).
    Cpu,
    /// CUDA tensors (cuDNN/cuBLAS, the caching allocator).
    Cuda,
    /// Apple silicon (MPS, unified memory).
    Mps,
}

/// A device preset.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Device {
    /// Which preset (`device a100_80gb`).
    pub model: DeviceModel,
    /// Code paths.
    pub kind: DeviceKind,
    /// Memory capacity in bytes (`None` for the host CPU: the budget decides).
    pub capacity: Option<i128>,
    /// Default runtime overhead: CUDA context and framework runtime, outside tensors.
    pub runtime: i128,
}

const GIB: i128 = 1 << 30;
const MIB: i128 = 1 << 20;

/// Every preset, in the order of [`DeviceModel::ALL`] (which is declaration order, so a
/// model's discriminant indexes it).
static PRESETS: [Device; DeviceModel::ALL.len()] = {
    let mut presets = [Device::of(DeviceModel::Cpu); DeviceModel::ALL.len()];
    let mut i = 0;
    while i < presets.len() {
        presets[i] = Device::of(DeviceModel::ALL[i]);
        i += 1;
    }
    presets
};

impl Device {
    /// The preset of `model`. A capacity is the memory the vendor's data sheet gives (named
    /// beside each preset), as the driver reports it where that is less (nvidia-smi's total,
    /// in MiB: ECC and the driver's reservations taken off): that is what a run can allocate
    /// into, and what the `device-memory-exceeded` lint checks a scenario against, less the
    /// runtime. A data sheet's "GB" of GPU memory is GiB-sized DRAM (24 GB = 24,576 MiB).
    pub const fn of(model: DeviceModel) -> Device {
        use DeviceKind::{Cpu, Cuda, Mps};
        use DeviceModel as M;
        let (kind, capacity, runtime) = match model {
            M::Cpu => (Cpu, None, 0),
            // NVIDIA A100 Tensor Core GPU data sheet: 40GB HBM2 (PCIe: nvidia-smi 40,960 MiB).
            M::A100_40gb => (Cuda, Some(40_960 * MIB), 500 * MIB),
            // NVIDIA A100 Tensor Core GPU data sheet: 80GB HBM2e.
            M::A100_80gb => (Cuda, Some(81_920 * MIB), 500 * MIB),
            // NVIDIA H100 Tensor Core GPU data sheet: 80GB HBM3 (SXM5: nvidia-smi 81,559 MiB).
            M::H100_80gb => (Cuda, Some(81_559 * MIB), 500 * MIB),
            // NVIDIA H200 Tensor Core GPU data sheet: 141GB HBM3e (nvidia-smi 143,771 MiB).
            M::H200 => (Cuda, Some(143_771 * MIB), 500 * MIB),
            // NVIDIA L4 Tensor Core GPU data sheet: 24GB GDDR6 (ECC on: nvidia-smi 23,034 MiB).
            M::L4 => (Cuda, Some(23_034 * MIB), 400 * MIB),
            // NVIDIA T4 Tensor Core GPU data sheet: 16 GB GDDR6 (ECC on: nvidia-smi 15,360 MiB).
            M::T4 => (Cuda, Some(15_360 * MIB), 300 * MIB),
            // NVIDIA Tesla V100 GPU Accelerator data sheet: 16 GB HBM2 (the data sheet's figure:
            // no driver total checked).
            M::V100_16gb => (Cuda, Some(16_384 * MIB), 300 * MIB),
            // NVIDIA Tesla V100 GPU Accelerator data sheet: 32 GB HBM2 (Tesla V100-PCIE-32GB:
            // nvidia-smi 32,480 MiB; the preset said 32,768, the data sheet's figure).
            M::V100_32gb => (Cuda, Some(32_480 * MIB), 300 * MIB),
            // NVIDIA GeForce RTX 3090 specifications: 24 GB GDDR6X (nvidia-smi 24,576 MiB).
            M::Rtx3090 => (Cuda, Some(24_576 * MIB), 300 * MIB),
            // NVIDIA GeForce RTX 4090 specifications: 24 GB GDDR6X (nvidia-smi 24,564 MiB).
            M::Rtx4090 => (Cuda, Some(24_564 * MIB), 300 * MIB),
            // NVIDIA Jetson AGX Orin series data sheet: 32GB LPDDR5, shared with the CPU.
            M::JetsonOrin => (Cuda, Some(32 * GIB), 400 * MIB),
            // NVIDIA Jetson Nano data sheet: 4 GB LPDDR4, shared with the CPU.
            M::JetsonNano => (Cuda, Some(4 * GIB), 300 * MIB),
            // Apple M2 technical specifications: 8, 16 or 24 GB unified memory (16 GB taken).
            M::AppleM2 => (Mps, Some(16 * GIB), 200 * MIB),
            // Apple M3 technical specifications: 8, 16 or 24 GB unified memory (24 GB taken).
            M::AppleM3 => (Mps, Some(24 * GIB), 200 * MIB),
        };
        Device { model, kind, capacity, runtime }
    }

    /// The preset of `model`, shared (a scenario's simulation keeps a reference).
    pub fn preset(model: DeviceModel) -> &'static Device {
        &PRESETS[model as usize]
    }

    /// The name used in scenarios.
    pub fn name(&self) -> &'static str {
        self.model.name()
    }
}

impl Device {
    /// Bytes per element of a dropout mask: CPU saves a float32 noise tensor, CUDA's fused
    /// `native_dropout` a bool mask.
    pub fn dropout_mask_bytes(&self) -> i128 {
        match self.kind {
            DeviceKind::Cpu => 4,
            DeviceKind::Cuda | DeviceKind::Mps => 1,
        }
    }

    /// Whether optimizers default to the foreach implementation (CUDA) or the for-loop (CPU).
    pub fn foreach_by_default(&self) -> bool {
        self.kind != DeviceKind::Cpu
    }

    /// The CUDA compute capability (major, minor) of a CUDA preset, from NVIDIA's table of
    /// CUDA GPUs (developer.nvidia.com/cuda-gpus): what PyTorch's kernel choices test
    /// (`getCurrentDeviceProperties()->major/minor`), such as which attention kernels run.
    pub fn compute_capability(&self) -> Option<(u8, u8)> {
        use DeviceModel as M;
        match self.model {
            M::A100_40gb | M::A100_80gb => Some((8, 0)),
            M::H100_80gb | M::H200 => Some((9, 0)),
            M::L4 | M::Rtx4090 => Some((8, 9)),
            M::Rtx3090 => Some((8, 6)),
            M::T4 => Some((7, 5)),
            M::V100_16gb | M::V100_32gb => Some((7, 0)),
            M::JetsonOrin => Some((8, 7)),
            M::JetsonNano => Some((5, 3)),
            M::Cpu | M::AppleM2 | M::AppleM3 => None,
        }
    }

    /// The allocator's rounding of each allocation (CUDA's caching allocator: 512 bytes).
    pub fn allocation_rounding(&self) -> i128 {
        match self.kind {
            DeviceKind::Cuda => 512,
            DeviceKind::Cpu | DeviceKind::Mps => 1,
        }
    }
}
