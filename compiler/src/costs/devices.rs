//! Device presets: capacity, runtime overhead, and the PyTorch behaviours that differ by
//! device (dropout masks, the default optimizer implementation, allocator rounding).

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
    /// The name used in scenarios (`device a100_80gb`).
    pub name: &'static str,
    /// Code paths.
    pub kind: DeviceKind,
    /// Memory capacity in bytes (`None` for the host CPU: the budget decides).
    pub capacity: Option<i128>,
    /// Default runtime overhead: CUDA context and framework runtime, outside tensors.
    pub runtime: i128,
}

const GIB: i128 = 1 << 30;
const MIB: i128 = 1 << 20;

/// Every preset. Capacities are what the driver reports (nvidia-smi's total, in MiB).
pub const DEVICES: &[Device] = &[
    Device { name: "cpu", kind: DeviceKind::Cpu, capacity: None, runtime: 0 },
    Device { name: "a100_40gb", kind: DeviceKind::Cuda, capacity: Some(40_960 * MIB), runtime: 500 * MIB },
    Device { name: "a100_80gb", kind: DeviceKind::Cuda, capacity: Some(81_920 * MIB), runtime: 500 * MIB },
    Device { name: "h100_80gb", kind: DeviceKind::Cuda, capacity: Some(81_559 * MIB), runtime: 500 * MIB },
    Device { name: "h200", kind: DeviceKind::Cuda, capacity: Some(143_771 * MIB), runtime: 500 * MIB },
    Device { name: "l4", kind: DeviceKind::Cuda, capacity: Some(23_034 * MIB), runtime: 400 * MIB },
    Device { name: "t4", kind: DeviceKind::Cuda, capacity: Some(15_360 * MIB), runtime: 300 * MIB },
    Device { name: "v100_16gb", kind: DeviceKind::Cuda, capacity: Some(16_384 * MIB), runtime: 300 * MIB },
    Device { name: "v100_32gb", kind: DeviceKind::Cuda, capacity: Some(32_768 * MIB), runtime: 300 * MIB },
    Device { name: "rtx3090", kind: DeviceKind::Cuda, capacity: Some(24_576 * MIB), runtime: 300 * MIB },
    Device { name: "rtx4090", kind: DeviceKind::Cuda, capacity: Some(24_564 * MIB), runtime: 300 * MIB },
    Device { name: "jetson_orin", kind: DeviceKind::Cuda, capacity: Some(32 * GIB), runtime: 400 * MIB },
    Device { name: "jetson_nano", kind: DeviceKind::Cuda, capacity: Some(4 * GIB), runtime: 300 * MIB },
    Device { name: "apple_m2", kind: DeviceKind::Mps, capacity: Some(16 * GIB), runtime: 200 * MIB },
    Device { name: "apple_m3", kind: DeviceKind::Mps, capacity: Some(24 * GIB), runtime: 200 * MIB },
];

/// The preset named `name`.
pub fn device(name: &str) -> Option<&'static Device> {
    DEVICES.iter().find(|d| d.name == name)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_device_name_is_a_preset() {
        for name in crate::semantics::scenario::DEVICES {
            assert!(device(name).is_some(), "{name} has no preset");
        }
        assert_eq!(DEVICES.len(), crate::semantics::scenario::DEVICES.len());
    }
}
