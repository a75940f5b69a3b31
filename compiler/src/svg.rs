//! The memory timeline of a scenario as a standalone SVG (`netc report --svg FILE`): live bytes
//! over the run, op by op, as stacked areas by ledger on top of the runtime band, with the
//! phase boundaries, the budget and the budget divided by the margin, and the peak marked
//! with its op and source line.
//!
//! Hand-written string building: the plot is rectangles, paths and text, and an SVG library
//! would add a dependency without removing much code.

use std::fmt::Write as _;

use crate::costs::scenario_costs;
use crate::costs::simulate::{Breakdown, Sample, Timeline};
use crate::db::SourceFile;
use crate::elaborate::Db;
use crate::report::{ScenarioReport, scenario_report};
use crate::semantics::files::ItemLoc;
use crate::units::bytes;

const WIDTH: f64 = 1100.0;
const HEIGHT: f64 = 640.0;
const LEFT: f64 = 84.0;
const RIGHT: f64 = WIDTH - 36.0;
const TOP: f64 = 118.0;
const BOTTOM: f64 = HEIGHT - 96.0;
const FONT: &str = "system-ui, -apple-system, 'Segoe UI', Helvetica, Arial, sans-serif";

/// The ledgers drawn, bottom to top, with their colours (Okabe and Ito's palette).
const LAYERS: [(&str, &str); 5] = [
    ("weights", "#0072B2"),
    ("optimizer state", "#CC79A7"),
    ("gradients", "#E69F00"),
    ("activations", "#009E73"),
    ("workspace", "#D55E00"),
];
const RUNTIME_COLOR: &str = "#9a9a9a";
const BUDGET_COLOR: &str = "#c0392b";

/// A sample's bytes per drawn ledger.
fn ledgers(b: &Breakdown) -> [i128; 5] {
    [b.parameters + b.buffers, b.optimizer_ledger(), b.gradients, b.activations_ledger(), b.workspace]
}

/// Text for XML.
fn escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// Bytes in the largest binary unit that keeps them at 1 or more, with at most two decimals
/// and no trailing zeros: `768 MiB`, `1.25 GiB`.
fn tick_label(v: i128) -> String {
    const UNITS: [&str; 6] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut value = v as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit < UNITS.len() - 1 {
        value /= 1024.0;
        unit += 1;
    }
    let text = format!("{value:.2}");
    let text = text.trim_end_matches('0').trim_end_matches('.');
    format!("{text} {}", UNITS[unit])
}

/// A power-of-two step that gives 4 to 8 ticks up to `max`.
fn tick_step(max: i128) -> i128 {
    let mut step: i128 = 1;
    while max / step > 8 {
        step *= 2;
    }
    step
}

fn f(v: f64) -> String {
    let text = format!("{v:.1}");
    text.strip_suffix(".0").map(str::to_string).unwrap_or(text)
}

/// About how wide a text is at `size` pixels.
fn text_width(text: &str, size: f64) -> f64 {
    text.chars().count() as f64 * size * 0.56
}

/// A rectangle, to keep labels apart.
struct Rect {
    x0: f64,
    y0: f64,
    x1: f64,
    y1: f64,
}

impl Rect {
    fn overlaps(&self, other: &Rect) -> bool {
        self.x0 < other.x1 && other.x0 < self.x1 && self.y0 < other.y1 && other.y0 < self.y1
    }
}

/// The box of a right-aligned label ending at `x` on baseline `y`.
fn label_box(text: &str, x: f64, y: f64, size: f64) -> Rect {
    Rect { x0: x - text_width(text, size) - 4.0, y0: y - size - 2.0, x1: x + 4.0, y1: y + 4.0 }
}

/// A path through `points`, without the points that lie on a straight horizontal or
/// vertical run.
fn path(points: &[(f64, f64)]) -> String {
    let mut kept: Vec<(f64, f64)> = Vec::with_capacity(points.len());
    for &p in points {
        if kept.last() == Some(&p) {
            continue;
        }
        if kept.len() >= 2 {
            let (a, b) = (kept[kept.len() - 2], kept[kept.len() - 1]);
            let straight = (a.0 == b.0 && b.0 == p.0) || (a.1 == b.1 && b.1 == p.1);
            if straight {
                kept.pop();
            }
        }
        kept.push(p);
    }
    let mut d = String::new();
    for (i, (x, y)) in kept.iter().enumerate() {
        let _ = write!(d, "{}{},{}", if i == 0 { "M" } else { " L" }, f(*x), f(*y));
    }
    d.push_str(" Z");
    d
}

/// The timeline plot of the scenario at `index` in `file`, or `None` when it cannot be
/// simulated (see its diagnostics).
pub fn scenario(db: &dyn Db, file: SourceFile, index: u32) -> Option<String> {
    let report = scenario_report(db, file, index)?;
    let costs = scenario_costs(db, ItemLoc::new(db, file, index)).as_ref()?;
    Some(timeline(&report, &costs.simulation.timeline))
}

/// The timeline of `report`'s scenario as an SVG document.
pub fn timeline(report: &ScenarioReport, timeline: &Timeline) -> String {
    let samples = &timeline.samples;
    let runtime = report.runtime_bytes;
    let highest = samples.iter().map(|s| s.live.total()).max().unwrap_or(0) + runtime;
    let safe = report.budget_bytes.map(|b| (b as f64 / report.margin.max(1e-9)) as i128);
    // The budget is drawn when it is not far above the run; otherwise a note says where it is.
    let budget_shown = report.budget_bytes.filter(|b| *b <= highest.saturating_mul(4));
    let top = budget_shown.unwrap_or(0).max(highest).max(1);
    let step = tick_step(top + top / 12);
    let y_max = (top + top / 12 + step - 1) / step * step;
    let last = timeline.recorded.saturating_sub(1).max(1) as f64;
    let x = |at: u32| LEFT + (at as f64 / last) * (RIGHT - LEFT);
    let y = |v: i128| BOTTOM - (v as f64 / y_max as f64) * (BOTTOM - TOP);

    let mut svg = String::new();
    let _ = writeln!(
        svg,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" font-family="{FONT}" font-size="12" role="img">"#
    );
    let title = format!(
        "{}: {} scenario \"{}\"{}, {}",
        report.model,
        report.kind,
        report.name,
        report.batch.map(|b| format!(", batch {b}")).unwrap_or_default(),
        report.device
    );
    let _ = writeln!(svg, "<title>{}</title>", escape(&format!("Memory timeline of {title}")));
    let _ = writeln!(
        svg,
        r##"<defs><pattern id="runtime" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="6" height="6" fill="#e4e4e4"/><line x1="0" y1="0" x2="0" y2="6" stroke="{RUNTIME_COLOR}" stroke-width="2"/></pattern></defs>"##
    );
    let _ = writeln!(svg, r#"<rect width="{WIDTH}" height="{HEIGHT}" fill="white"/>"#);
    let _ = writeln!(svg, r#"<text x="{LEFT}" y="28" font-size="17" font-weight="600">{}</text>"#, escape(&title));
    let mut subtitle = format!(
        "{}: live bytes after every allocation, op by op ({} of {} moments shown)",
        report.file,
        samples.len(),
        timeline.recorded
    );
    if samples.len() as u32 == timeline.recorded {
        subtitle = format!("{}: live bytes after every allocation, op by op", report.file);
    }
    let _ = writeln!(svg, r##"<text x="{LEFT}" y="48" fill="#555">{}</text>"##, escape(&subtitle));

    // Phases: backward and the optimizer step shaded, boundaries, names; steps above them.
    let starts: Vec<&Sample> = samples.iter().filter(|s| s.op.is_empty()).collect();
    let phase_label_y = TOP - 8.0;
    let step_label_y = TOP - 40.0;
    for (i, start) in starts.iter().enumerate() {
        let Some(end) = starts.get(i + 1) else { break };
        let (x0, x1) = (x(start.at), x(end.at));
        let shade = match start.phase.name() {
            "backward" => Some("#f1f1f1"),
            "step" => Some("#f8eef4"),
            _ => None,
        };
        if let Some(shade) = shade {
            let _ = writeln!(
                svg,
                r#"<rect x="{}" y="{TOP}" width="{}" height="{}" fill="{shade}"/>"#,
                f(x0),
                f((x1 - x0).max(0.0)),
                f(BOTTOM - TOP)
            );
        }
        let name = start.phase.name();
        let short = match name {
            "forward" => "fwd",
            "backward" => "bwd",
            "zero_grad" => "zg",
            other => other,
        };
        let label = [name, short].into_iter().find(|l| text_width(l, 11.0) + 4.0 <= x1 - x0);
        if let Some(label) = label {
            let _ = writeln!(
                svg,
                r##"<text x="{}" y="{phase_label_y}" font-size="11" fill="#444" text-anchor="middle">{label}</text>"##,
                f((x0 + x1) / 2.0)
            );
        }
    }
    for start in starts.iter().skip(1) {
        let _ = writeln!(
            svg,
            r##"<line x1="{0}" y1="{TOP}" x2="{0}" y2="{BOTTOM}" stroke="#bbb" stroke-dasharray="3,3"/>"##,
            f(x(start.at))
        );
    }
    if report.kind == "train" {
        for step in 1..=2u8 {
            let in_step: Vec<&Sample> = samples.iter().filter(|s| s.step == step).collect();
            let (Some(first), Some(last_sample)) = (in_step.first(), in_step.last()) else { continue };
            let x1 = samples.iter().find(|s| s.step > step).map_or(x(last_sample.at), |s| x(s.at));
            let x0 = x(first.at);
            let _ = writeln!(
                svg,
                r##"<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="#888"/>"##,
                f(x0 + 2.0),
                step_label_y + 5.0,
                f(x1 - 2.0),
                step_label_y + 5.0
            );
            let _ = writeln!(
                svg,
                r##"<text x="{}" y="{}" font-size="12" font-weight="600" fill="#333" text-anchor="middle" paint-order="stroke" stroke="white" stroke-width="6">step {step}</text>"##,
                f((x0 + x1) / 2.0),
                step_label_y + 9.0
            );
            if step == 2 {
                let _ = writeln!(
                    svg,
                    r##"<line x1="{0}" y1="{1}" x2="{0}" y2="{BOTTOM}" stroke="#666"/>"##,
                    f(x0),
                    step_label_y
                );
            }
        }
    }

    // Grid and the y axis.
    let mut v = 0;
    while v <= y_max {
        let yy = f(y(v));
        let _ = writeln!(svg, r##"<line x1="{LEFT}" y1="{yy}" x2="{RIGHT}" y2="{yy}" stroke="#e2e2e2"/>"##);
        let _ = writeln!(
            svg,
            r##"<text x="{}" y="{}" text-anchor="end" fill="#333">{}</text>"##,
            LEFT - 8.0,
            f(y(v) + 4.0),
            tick_label(v)
        );
        v += step;
    }

    // The runtime band, then the ledgers stacked on it, as steps (each sample holds until the
    // next one).
    let _ = writeln!(
        svg,
        r##"<rect x="{LEFT}" y="{}" width="{}" height="{}" fill="url(#runtime)" stroke="{RUNTIME_COLOR}" stroke-width="0.5"/>"##,
        f(y(runtime)),
        f(RIGHT - LEFT),
        f(BOTTOM - y(runtime))
    );
    let mut lower: Vec<i128> = vec![runtime; samples.len()];
    for (k, (_, color)) in LAYERS.iter().enumerate() {
        let upper: Vec<i128> = samples.iter().zip(&lower).map(|(s, l)| l + ledgers(&s.live)[k]).collect();
        if upper == lower {
            continue;
        }
        let mut points = Vec::with_capacity(samples.len() * 4);
        for (i, s) in samples.iter().enumerate() {
            let next = samples.get(i + 1).map_or(x(s.at), |n| x(n.at));
            points.push((x(s.at), y(upper[i])));
            points.push((next, y(upper[i])));
        }
        for (i, s) in samples.iter().enumerate().rev() {
            let next = samples.get(i + 1).map_or(x(s.at), |n| x(n.at));
            points.push((next, y(lower[i])));
            points.push((x(s.at), y(lower[i])));
        }
        let _ = writeln!(svg, r#"<path d="{}" fill="{color}" fill-opacity="0.85"/>"#, path(&points));
        lower = upper;
    }
    // The total's outline.
    let mut outline = String::new();
    for (i, s) in samples.iter().enumerate() {
        let next = samples.get(i + 1).map_or(x(s.at), |n| x(n.at));
        let top = y(lower[i]);
        let _ = write!(outline, "{}{},{} L{},{}", if i == 0 { "M" } else { " L" }, f(x(s.at)), f(top), f(next), f(top));
    }
    if !outline.is_empty() {
        let _ = writeln!(svg, r##"<path d="{outline}" fill="none" stroke="#222" stroke-width="1"/>"##);
    }
    // Axes.
    let _ =
        writeln!(svg, r##"<path d="M{LEFT},{TOP} L{LEFT},{BOTTOM} L{RIGHT},{BOTTOM}" fill="none" stroke="#333"/>"##);
    let _ = writeln!(
        svg,
        r##"<text x="{}" y="{}" text-anchor="middle" fill="#333">ops, in the order they run</text>"##,
        f((LEFT + RIGHT) / 2.0),
        BOTTOM + 18.0
    );
    let _ = writeln!(
        svg,
        r##"<text transform="translate(18,{}) rotate(-90)" text-anchor="middle" fill="#333">device memory (binary units)</text>"##,
        f((TOP + BOTTOM) / 2.0)
    );

    // The budget and the budget divided by the margin; their labels' boxes, which the peak's
    // label avoids.
    let mut taken: Vec<Rect> = Vec::new();
    let note_y = 68.0;
    match (report.budget_bytes, safe) {
        (Some(budget), Some(safe)) if budget_shown.is_some() => {
            let label = format!("budget {}", bytes(budget));
            taken.push(label_box(&label, RIGHT - 4.0, y(budget) - 5.0, 12.0));
            let _ = writeln!(
                svg,
                r#"<line class="budget" x1="{LEFT}" y1="{0}" x2="{RIGHT}" y2="{0}" stroke="{BUDGET_COLOR}" stroke-width="2"/>"#,
                f(y(budget))
            );
            let _ = writeln!(
                svg,
                r#"<text x="{}" y="{}" text-anchor="end" fill="{BUDGET_COLOR}" font-weight="600" paint-order="stroke" stroke="white" stroke-width="4">{label}</text>"#,
                RIGHT - 4.0,
                f(y(budget) - 5.0)
            );
            if safe < y_max {
                let label = format!("budget ÷ margin {} = {}", report.margin, crate::snapshot::readable(safe));
                taken.push(label_box(&label, RIGHT - 4.0, y(safe) - 5.0, 12.0));
                let _ = writeln!(
                    svg,
                    r#"<line class="budget-margin" x1="{LEFT}" y1="{0}" x2="{RIGHT}" y2="{0}" stroke="{BUDGET_COLOR}" stroke-width="1.5" stroke-dasharray="7,4"/>"#,
                    f(y(safe))
                );
                let _ = writeln!(
                    svg,
                    r#"<text x="{}" y="{}" text-anchor="end" fill="{BUDGET_COLOR}" paint-order="stroke" stroke="white" stroke-width="4">{}</text>"#,
                    RIGHT - 4.0,
                    f(y(safe) - 5.0),
                    escape(&label)
                );
            }
        }
        (Some(budget), Some(safe)) => {
            let share = 100.0 * report.total_bytes as f64 * report.margin / budget.max(1) as f64;
            let note = format!(
                "budget {} (÷ margin {} = {}) is above the scale: the total × margin is {share:.0} % of it",
                bytes(budget),
                report.margin,
                crate::snapshot::readable(safe)
            );
            let _ = writeln!(
                svg,
                r#"<text class="budget" x="{LEFT}" y="{note_y}" fill="{BUDGET_COLOR}">{}</text>"#,
                escape(&note)
            );
        }
        _ => {
            let _ = writeln!(svg, r##"<text x="{LEFT}" y="{note_y}" fill="#555">no budget set</text>"##);
        }
    }

    // The peak.
    if let Some(peak) = timeline.peak() {
        // In the middle of the step the peak's sample draws.
        let next = samples.iter().find(|s| s.at > peak.at).map_or(x(peak.at), |n| x(n.at));
        let (px, py) = ((x(peak.at) + next) / 2.0, y(peak.live.total() + runtime));
        let step = if report.kind == "train" { format!("step {}, ", report.peak_step) } else { String::new() };
        let lines = [
            format!("peak {} allocated + {} runtime", bytes(report.peak_bytes), bytes(runtime)),
            format!("{step}{}, {}", report.peak_phase, report.peak_op),
            report.peak_line.clone().unwrap_or_default(),
        ];
        // The first line is bold: a little wider.
        let width = lines.iter().map(|l| text_width(l, 12.0)).fold(0.0, f64::max) * 1.08 + 16.0;
        let height = if lines[2].is_empty() { 40.0 } else { 56.0 };
        // Above or below the point, on the side with more room first, clear of the budget's
        // labels and inside the plot.
        let (right, left) = (px + 14.0, px - width - 14.0);
        let (above, below) = ((py - height - 10.0).max(TOP + 4.0), py + 12.0);
        let sides = if px < (LEFT + RIGHT) / 2.0 { [right, left] } else { [left, right] };
        let candidates = [(sides[0], above), (sides[1], above), (sides[0], below), (sides[1], below)];
        let fits = |&(bx, by): &(f64, f64)| {
            let r = Rect { x0: bx, y0: by, x1: bx + width, y1: by + height };
            r.x0 >= LEFT + 2.0 && r.x1 <= RIGHT - 2.0 && r.y1 <= BOTTOM - 2.0 && !taken.iter().any(|t| t.overlaps(&r))
        };
        let (bx, by) =
            candidates.iter().copied().find(fits).unwrap_or((sides[0].clamp(LEFT + 2.0, RIGHT - width), above));
        let left_side = bx < px;
        let _ = writeln!(
            svg,
            r##"<line x1="{0}" y1="{1}" x2="{0}" y2="{BOTTOM}" stroke="#222" stroke-dasharray="2,3"/>"##,
            f(px),
            f(py)
        );
        let _ = writeln!(
            svg,
            r##"<circle class="peak" cx="{}" cy="{}" r="5" fill="#222" stroke="white" stroke-width="1.5"/>"##,
            f(px),
            f(py)
        );
        let (ax, ay) = (if left_side { bx + width } else { bx }, if by < py { by + height } else { by });
        let ax = ax.clamp(bx, bx + width);
        let _ = writeln!(svg, r##"<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="#222"/>"##, f(px), f(py), f(ax), f(ay));
        let _ = writeln!(
            svg,
            r##"<rect x="{}" y="{}" width="{}" height="{height}" rx="4" fill="white" fill-opacity="0.95" stroke="#222"/>"##,
            f(bx),
            f(by),
            f(width)
        );
        let _ = writeln!(svg, r#"<text class="peak-label" x="{}" y="{}">"#, f(bx + 8.0), f(by + 17.0));
        for (i, line) in lines.iter().enumerate().filter(|(_, l)| !l.is_empty()) {
            let weight = if i == 0 { r#" font-weight="600""# } else { "" };
            let dy = if i == 0 { 0.0 } else { 16.0 };
            let _ = writeln!(svg, r#"<tspan x="{}" dy="{dy}"{weight}>{}</tspan>"#, f(bx + 8.0), escape(line));
        }
        let _ = writeln!(svg, "</text>");
    }

    // The legend.
    let mut lx = LEFT;
    let ly = BOTTOM + 44.0;
    let items: Vec<(&str, String)> = LAYERS
        .iter()
        .map(|(name, color)| (*name, format!(r#"fill="{color}" fill-opacity="0.85""#)))
        .chain([("runtime (CUDA context, framework)", r#"fill="url(#runtime)""#.to_string())])
        .collect();
    for (name, fill) in &items {
        let _ = writeln!(svg, r#"<rect x="{}" y="{}" width="14" height="14" {fill}/>"#, f(lx), ly - 11.0);
        let _ = writeln!(svg, r##"<text x="{}" y="{ly}" fill="#222">{}</text>"##, f(lx + 20.0), escape(name));
        lx += 20.0 + text_width(name, 12.0) + 22.0;
    }
    if budget_shown.is_some() {
        let ly2 = ly + 24.0;
        let _ = writeln!(
            svg,
            r#"<line x1="{LEFT}" y1="{0}" x2="{1}" y2="{0}" stroke="{BUDGET_COLOR}" stroke-width="2"/>"#,
            ly2 - 4.0,
            LEFT + 22.0
        );
        let _ = writeln!(svg, r##"<text x="{}" y="{ly2}" fill="#222">budget</text>"##, LEFT + 28.0);
        let _ = writeln!(
            svg,
            r#"<line x1="{0}" y1="{1}" x2="{2}" y2="{1}" stroke="{BUDGET_COLOR}" stroke-width="1.5" stroke-dasharray="7,4"/>"#,
            LEFT + 90.0,
            ly2 - 4.0,
            LEFT + 112.0
        );
        let _ = writeln!(
            svg,
            r##"<text x="{}" y="{ly2}" fill="#222">budget ÷ margin: the most the run may need and still fit with the margin</text>"##,
            LEFT + 118.0
        );
    }
    svg.push_str("</svg>\n");
    svg
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_binary() {
        assert_eq!(tick_label(768 << 20), "768 MiB");
        assert_eq!(tick_label(5 << 28), "1.25 GiB");
        assert_eq!(tick_label(0), "0 B");
        let step = tick_step(3 << 30);
        assert!(step.count_ones() == 1 && (3i128 << 30) / step <= 8);
    }

    #[test]
    fn text_is_escaped() {
        assert_eq!(escape("<std>/blocks.net & \"x\""), "&lt;std&gt;/blocks.net &amp; &quot;x&quot;");
    }
}
