//! The timeline recorder: live bytes after every allocation, downsampled as it goes to
//! about [`TIMELINE_POINTS`] samples, always keeping the peak.

use super::*;

/// Builds a [`Timeline`] in one pass: samples are grouped in buckets of `width` consecutive
/// samples, each keeping its lowest and highest; when more than [`TIMELINE_POINTS`] are
/// kept, the width doubles and the kept samples are merged pairwise. Linear overall.
#[derive(Default)]
pub(super) struct Recorder {
    /// Samples kept, with whether they must stay (phase starts, the end).
    pub(super) kept: Vec<(Sample, bool)>,
    pub(super) width: u64,
    pub(super) count: u64,
    /// The current bucket and its lowest and highest samples so far.
    pub(super) bucket: u64,
    pub(super) low: Option<Sample>,
    pub(super) high: Option<Sample>,
}

impl Recorder {
    pub(super) fn record(&mut self, step: u8, phase: Phase, op: &str, totals: &[i128; CATEGORIES], forced: bool) {
        let at = self.count;
        self.count += 1;
        let total = totals.iter().fold(0i128, |sum, &b| sum.saturating_add(b));
        let at = at.min(u32::MAX as u64) as u32;
        let width = self.width.max(1);
        if forced {
            self.flush();
            let sample = Sample { at, step, phase, op: op.to_string(), live: Breakdown::from_totals(totals) };
            self.kept.push((sample, true));
        } else {
            if at as u64 / width != self.bucket {
                self.flush();
                self.bucket = at as u64 / width;
            }
            // Most samples replace the bucket's lowest or highest: overwritten in place, their
            // op's text reuses the string already there.
            if self.high.as_ref().is_none_or(|h| total > h.live.total()) {
                overwrite(&mut self.high, at, step, phase, op, totals);
            }
            if self.low.as_ref().is_none_or(|l| total < l.live.total()) {
                overwrite(&mut self.low, at, step, phase, op, totals);
            }
        }
        if self.kept.len() > TIMELINE_POINTS {
            self.compact();
        }
    }

    /// Moves the current bucket's lowest and highest samples to `kept`, in run order.
    pub(super) fn flush(&mut self) {
        let (low, high) = (self.low.take(), self.high.take());
        match (low, high) {
            (Some(l), Some(h)) if l.at == h.at => self.kept.push((h, false)),
            (Some(l), Some(h)) => {
                let (a, b) = if l.at < h.at { (l, h) } else { (h, l) };
                self.kept.push((a, false));
                self.kept.push((b, false));
            }
            (Some(s), None) | (None, Some(s)) => self.kept.push((s, false)),
            (None, None) => {}
        }
    }

    /// Doubles the bucket width and merges the kept samples accordingly.
    pub(super) fn compact(&mut self) {
        self.width = self.width.max(1) * 2;
        let width = self.width;
        let old = std::mem::take(&mut self.kept);
        let mut group: Option<u64> = None;
        let (mut low, mut high): (Option<Sample>, Option<Sample>) = (None, None);
        let mut out: Vec<(Sample, bool)> = Vec::with_capacity(old.len() / 2 + 2);
        let flush = |low: &mut Option<Sample>, high: &mut Option<Sample>, out: &mut Vec<(Sample, bool)>| {
            let mut pair: Vec<Sample> = low.take().into_iter().chain(high.take()).collect();
            pair.sort_by_key(|s| s.at);
            pair.dedup_by_key(|s| s.at);
            out.extend(pair.into_iter().map(|s| (s, false)));
        };
        for (s, forced) in old {
            if forced {
                flush(&mut low, &mut high, &mut out);
                group = None;
                out.push((s, true));
                continue;
            }
            let g = s.at as u64 / width;
            if group != Some(g) {
                flush(&mut low, &mut high, &mut out);
                group = Some(g);
            }
            let total = s.live.total();
            if low.as_ref().is_none_or(|l| total < l.live.total()) {
                low = Some(s.clone());
            }
            if high.as_ref().is_none_or(|h| total > h.live.total()) {
                high = Some(s);
            }
        }
        flush(&mut low, &mut high, &mut out);
        self.kept = out;
        // The current bucket continues with the new width.
        self.bucket = self.count.saturating_sub(1) / width;
    }

    pub(super) fn finish(mut self, peak_at: u64) -> Timeline {
        self.flush();
        Timeline {
            samples: self.kept.into_iter().map(|(s, _)| s).collect(),
            recorded: self.count.min(u32::MAX as u64) as u32,
            peak_at: peak_at.min(u32::MAX as u64) as u32,
        }
    }
}

/// Sets `slot` to a sample, reusing the string of the one it holds.
pub(super) fn overwrite(
    slot: &mut Option<Sample>,
    at: u32,
    step: u8,
    phase: Phase,
    op: &str,
    totals: &[i128; CATEGORIES],
) {
    match slot {
        Some(sample) => {
            sample.at = at;
            sample.step = step;
            sample.phase = phase;
            sample.op.clear();
            sample.op.push_str(op);
            sample.live = Breakdown::from_totals(totals);
        }
        None => *slot = Some(Sample { at, step, phase, op: op.to_string(), live: Breakdown::from_totals(totals) }),
    }
}
