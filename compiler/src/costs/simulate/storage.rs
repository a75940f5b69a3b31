//! The storage model: every allocation a storage with its bytes (rounded as the device's
//! allocator rounds them) and its ledger, held by reference counts; the live totals and
//! the peak check after each allocation.

use super::*;

/// The storages and what is live.
pub(super) struct Store {
    /// Whether the peak, the phases and the timeline are recorded (not when only the
    /// per-line figures are asked for: [`Extent::Lines`]).
    pub(super) peaks: bool,
    pub(super) bytes: Vec<i128>,
    pub(super) category: Vec<Category>,
    pub(super) live: Vec<bool>,
    /// Holders: program references, autograd saves, aliases.
    pub(super) holds: Vec<u32>,
    pub(super) totals: [i128; CATEGORIES],
    pub(super) live_bytes: i128,
    pub(super) live_rounded: i128,
    pub(super) rounding: i128,
    pub(super) peak: Option<Peak>,
    pub(super) rounded_peak: i128,
    pub(super) phase: Phase,
    pub(super) step: u8,
    pub(super) phases: Vec<PhaseFigures>,
    pub(super) timeline: Recorder,
    /// The timeline position of the peak.
    pub(super) peak_at: u64,
    /// A byte count reached `i128::MAX` (saturated, see [`crate::costs::product`]): the
    /// figures are not exact and the scenario is reported as E0503.
    pub(super) overflowed: bool,
    /// The line whose op is running (`LineId::MAX`: none, as the loss), and each storage's.
    pub(super) current_line: LineId,
    pub(super) line: Vec<LineId>,
    /// The line of each node.
    pub(super) node_lines: Vec<LineId>,
    /// The allocation count at which to take [`Store::snapshot`] (the peak of an earlier
    /// replay of the same run), and the snapshot: the activation bytes (inputs, activations,
    /// backward temporaries) live then, by line.
    pub(super) snapshot_at: Option<usize>,
    pub(super) snapshot: Option<Vec<i128>>,
    /// The storages autograd functions kept on their `ctx` inside checkpoint segments in the
    /// first forward pass, each once: what checkpointing does not free.
    pub(super) kept_past_checkpoint: Vec<usize>,
    /// The optimizer state a paged optimizer keeps in unified memory, outside the allocator.
    pub(super) paged_optimizer_state: i128,
    /// The storages GPTQ layers saved outside checkpoint segments in the first forward pass:
    /// their dequantized weights.
    pub(super) dequantized_weights_kept: Vec<usize>,
}

impl Store {
    /// How many of `storages` there are and their bytes.
    pub(super) fn kept(&self, storages: &[usize]) -> KeptTensors {
        KeptTensors { tensors: storages.len(), bytes: storages.iter().map(|&s| self.bytes[s]).sum() }
    }

    pub(super) fn rounded(&self, bytes: i128) -> i128 {
        let up = bytes.saturating_add(self.rounding - 1);
        // An i128 division is a library call; sizes and roundings fit in an i64.
        match (i64::try_from(up), i64::try_from(self.rounding)) {
            (Ok(up), Ok(rounding)) => i128::from(up / rounding * rounding),
            _ => (up / self.rounding).saturating_mul(self.rounding),
        }
    }

    pub(super) fn alloc(&mut self, bytes: i128, category: Category) -> usize {
        self.line.push(self.current_line);
        self.bytes.push(bytes);
        self.category.push(category);
        self.live.push(true);
        self.holds.push(1);
        let (total, live, rounded) = (
            self.totals[category as usize].checked_add(bytes),
            self.live_bytes.checked_add(bytes),
            self.live_rounded.checked_add(self.rounded(bytes)),
        );
        match (total, live, rounded) {
            (Some(total), Some(live), Some(rounded)) if bytes < i128::MAX => {
                self.totals[category as usize] = total;
                self.live_bytes = live;
                self.live_rounded = rounded;
            }
            _ => {
                self.overflowed = true;
                self.totals[category as usize] = i128::MAX;
                self.live_bytes = i128::MAX;
                self.live_rounded = i128::MAX;
            }
        }
        self.bytes.len() - 1
    }

    /// Attributes the allocations that follow to node `i`'s line.
    pub(super) fn at_node(&mut self, i: usize) {
        self.current_line = self.node_lines.get(i).copied().unwrap_or(LineId::MAX);
    }

    pub(super) fn hold(&mut self, s: usize) {
        self.holds[s] += 1;
    }

    /// Drops one holder; the storage is freed when none is left.
    pub(super) fn release(&mut self, s: usize) {
        if !self.live[s] {
            return;
        }
        self.holds[s] = self.holds[s].saturating_sub(1);
        if self.holds[s] == 0 {
            self.live[s] = false;
            if !self.overflowed {
                self.totals[self.category[s] as usize] -= self.bytes[s];
                self.live_bytes -= self.bytes[s];
                self.live_rounded -= self.rounded(self.bytes[s]);
            }
        }
    }

    /// Books a live storage to another ledger (a gradient autograd hands to a parameter).
    pub(super) fn recategorize(&mut self, s: usize, category: Category) {
        if self.live[s] && !self.overflowed {
            self.totals[self.category[s] as usize] -= self.bytes[s];
            self.totals[category as usize] += self.bytes[s];
        }
        self.category[s] = category;
    }

    /// Records a possible peak just after an allocation.
    pub(super) fn check(&mut self, op: &str, site: Option<&Site>) {
        if !self.peaks {
            return;
        }
        if self.snapshot.is_none() && self.snapshot_at == Some(self.bytes.len()) {
            // The first check after that many allocations is the peak's moment (a later one
            // without an allocation between has at most as much live).
            let mut by_line = Vec::new();
            for s in 0..self.bytes.len() {
                if self.live[s] && self.category[s].in_activations_ledger() && self.line[s] != LineId::MAX {
                    let line = self.line[s] as usize;
                    if by_line.len() <= line {
                        by_line.resize(line + 1, 0);
                    }
                    by_line[line] += self.bytes[s];
                }
            }
            self.snapshot = Some(by_line);
        }
        self.rounded_peak = self.rounded_peak.max(self.live_rounded);
        if let Some(figures) = self.phases.last_mut() {
            figures.peak = figures.peak.max(self.live_bytes);
        }
        if self.peak.as_ref().is_none_or(|p| self.live_bytes > p.bytes) {
            // In a forward pass nearly every allocation is a new peak: update it in place.
            let breakdown = Breakdown::from_totals(&self.totals);
            match &mut self.peak {
                Some(peak) => {
                    peak.bytes = self.live_bytes;
                    peak.step = self.step;
                    peak.phase = self.phase;
                    peak.op.clear();
                    peak.op.push_str(op);
                    peak.site = site.cloned();
                    peak.breakdown = breakdown;
                    peak.allocations = self.bytes.len();
                }
                None => {
                    self.peak = Some(Peak {
                        bytes: self.live_bytes,
                        step: self.step,
                        phase: self.phase,
                        op: op.to_string(),
                        site: site.cloned(),
                        breakdown,
                        allocations: self.bytes.len(),
                    })
                }
            }
            self.peak_at = self.timeline.count;
        }
        self.timeline.record(self.step, self.phase, op, &self.totals, false);
    }

    pub(super) fn begin(&mut self, step: u8, phase: Phase) {
        if !self.peaks {
            return;
        }
        self.end_phase();
        self.step = step;
        self.phase = phase;
        self.phases.push(PhaseFigures { step, phase, start: self.live_bytes, peak: self.live_bytes, end: 0 });
        self.timeline.record(step, phase, "", &self.totals, true);
    }

    pub(super) fn end_phase(&mut self) {
        let live = self.live_bytes;
        if let Some(figures) = self.phases.last_mut() {
            figures.end = live;
        }
    }

    /// The end of the run: the last phase ends, the timeline's last sample.
    pub(super) fn end(&mut self) {
        if !self.peaks {
            return;
        }
        self.end_phase();
        self.timeline.record(self.step, self.phase, "", &self.totals, true);
    }
}

pub(super) fn known(d: Option<crate::shapes::Dim>) -> i128 {
    d.and_then(|d| d.known()).unwrap_or(0)
}
