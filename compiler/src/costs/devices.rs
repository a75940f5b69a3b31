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
    /// The preset of `model`. Capacities are what the driver reports (nvidia-smi's total, in
    /// MiB).
    pub const fn of(model: DeviceModel) -> Device {
        use DeviceKind::{Cpu, Cuda, Mps};
        use DeviceModel as M;
        let (kind, capacity, runtime) = match model {
            M::Cpu => (Cpu, None, 0),
            M::A100_40gb => (Cuda, Some(40_960 * MIB), 500 * MIB),
            M::A100_80gb => (Cuda, Some(81_920 * MIB), 500 * MIB),
            M::H100_80gb => (Cuda, Some(81_559 * MIB), 500 * MIB),
            M::H200 => (Cuda, Some(143_771 * MIB), 500 * MIB),
            M::L4 => (Cuda, Some(23_034 * MIB), 400 * MIB),
            M::T4 => (Cuda, Some(15_360 * MIB), 300 * MIB),
            M::V100_16gb => (Cuda, Some(16_384 * MIB), 300 * MIB),
            M::V100_32gb => (Cuda, Some(32_768 * MIB), 300 * MIB),
            M::Rtx3090 => (Cuda, Some(24_576 * MIB), 300 * MIB),
            M::Rtx4090 => (Cuda, Some(24_564 * MIB), 300 * MIB),
            M::JetsonOrin => (Cuda, Some(32 * GIB), 400 * MIB),
            M::JetsonNano => (Cuda, Some(4 * GIB), 300 * MIB),
            M::AppleM2 => (Mps, Some(16 * GIB), 200 * MIB),
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

    /// The allocator's rounding of each allocation (CUDA's caching allocator: 512 bytes).
    pub fn allocation_rounding(&self) -> i128 {
        match self.kind {
            DeviceKind::Cuda => 512,
            DeviceKind::Cpu | DeviceKind::Mps => 1,
        }
    }
}
