// A scenario's memory timeline as an SVG, drawn from `netc report --format json`
// (spec/report.md): per phase of each step, the memory allocated at its start, its peak and its
// end, on top of the runtime (CUDA context, allocator reserve), against the budget and the
// budget divided by the safety margin. No `vscode` import: unit-tested.

/** The fields of a JSON report's scenario this module reads. */
export interface ScenarioJson {
  name: string;
  /** Set when netc could not simulate the scenario: why (its other figures are absent). */
  error?: string;
  kind?: string;
  model?: string;
  device?: string | null;
  peak_bytes?: number;
  runtime_bytes?: number;
  total_bytes?: number;
  budget_bytes?: number | null;
  margin?: number | null;
  peak_step?: number;
  peak_phase?: string;
  peak_op?: string;
  peak_line?: string;
  phases?: { step: number; phase: string; start: number; peak: number; end: number }[];
}

const UNITS = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];

/** Bytes in binary units with one decimal, as netc prints them: `931.9 MiB`, `0 B`. */
export function formatBytes(bytes: number): string {
  if (!Number.isFinite(bytes) || bytes < 1024) return `${Math.max(0, Math.round(bytes || 0))} B`;
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < UNITS.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${value.toFixed(1)} ${UNITS[unit]}`;
}

export function escapeXml(text: string): string {
  return text.replace(/[<>&"']/g, (c) => ({ "<": "&lt;", ">": "&gt;", "&": "&amp;", '"': "&quot;", "'": "&#39;" })[c] as string);
}

/** A round step for the y axis: 1, 2 or 5 times a power of 1024-friendly binary size. */
function niceStep(max: number, ticks: number): number {
  const raw = max / ticks;
  const power = Math.pow(2, Math.floor(Math.log2(Math.max(raw, 1))));
  for (const m of [1, 2, 4, 8]) {
    if (power * m >= raw) return power * m;
  }
  return power * 8;
}

/** The timeline of one scenario; `undefined` when the report has no phases for it. */
export function timelineSvg(s: ScenarioJson): string | undefined {
  const phases = s.phases ?? [];
  if (phases.length === 0) return undefined;
  const runtime = s.runtime_bytes ?? 0;
  const budget = s.budget_bytes ?? undefined;
  const margin = s.margin ?? undefined;
  const width = 760;
  const height = 260;
  const left = 78;
  const right = 150;
  const top = 34;
  const bottom = 46;
  const plotW = width - left - right;
  const plotH = height - top - bottom;
  const highest = Math.max(...phases.map((p) => Math.max(p.start, p.peak, p.end))) + runtime;
  const yMax = Math.max(highest, budget ?? 0, 1) * 1.08;
  const step = niceStep(yMax, 4);
  const yTop = Math.ceil(yMax / step) * step;
  const x = (i: number) => left + (i / (phases.length * 2)) * plotW;
  const y = (bytes: number) => top + plotH - (bytes / yTop) * plotH;
  const n = (v: number) => v.toFixed(1);

  const parts: string[] = [];
  parts.push(
    `<svg xmlns="http://www.w3.org/2000/svg" class="netc-timeline" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="11" role="img" aria-label="${escapeXml(`memory timeline of scenario ${s.name}`)}">`,
  );
  const title = `Memory timeline: ${s.kind ?? "scenario"} ${s.name}${s.device ? ` on ${s.device}` : ""}`;
  parts.push(`<text x="${left}" y="18" font-size="13" font-weight="bold" fill="currentColor">${escapeXml(title)}</text>`);
  // Axes and grid.
  for (let v = 0; v <= yTop + 1e-9; v += step) {
    const yy = n(y(v));
    parts.push(`<line x1="${left}" x2="${left + plotW}" y1="${yy}" y2="${yy}" stroke="currentColor" stroke-opacity="0.15"/>`);
    parts.push(`<text x="${left - 6}" y="${yy}" text-anchor="end" dominant-baseline="middle" fill="currentColor" fill-opacity="0.8">${formatBytes(v)}</text>`);
  }
  // The runtime band.
  if (runtime > 0) {
    parts.push(`<rect x="${left}" y="${n(y(runtime))}" width="${plotW}" height="${n(y(0) - y(runtime))}" fill="#8a8a8a" fill-opacity="0.35"/>`);
    parts.push(`<text x="${left + plotW + 6}" y="${n((y(0) + y(runtime)) / 2)}" dominant-baseline="middle" fill="currentColor" fill-opacity="0.8">runtime ${formatBytes(runtime)}</text>`);
  }
  // Allocated memory: start, peak and end of each phase, on top of the runtime.
  const points: [number, number][] = [];
  phases.forEach((p, i) => {
    points.push([x(2 * i), y(runtime + p.start)]);
    points.push([x(2 * i + 1), y(runtime + p.peak)]);
    points.push([x(2 * i + 2), y(runtime + p.end)]);
  });
  const line = points.map(([px, py]) => `${n(px)},${n(py)}`).join(" ");
  const area = `${n(x(0))},${n(y(runtime))} ${line} ${n(x(phases.length * 2))},${n(y(runtime))}`;
  parts.push(`<polygon points="${area}" fill="#3b82f6" fill-opacity="0.3"/>`);
  parts.push(`<polyline points="${line}" fill="none" stroke="#3b82f6" stroke-width="2"/>`);
  // Phase separators and names.
  phases.forEach((p, i) => {
    const x0 = x(2 * i);
    if (i > 0) parts.push(`<line x1="${n(x0)}" x2="${n(x0)}" y1="${top}" y2="${top + plotH}" stroke="currentColor" stroke-opacity="0.12"/>`);
    const label = phases.some((q) => q.step !== p.step) ? `${p.phase} ${p.step}` : p.phase;
    parts.push(
      `<text x="${n(x(2 * i + 1))}" y="${top + plotH + 14}" text-anchor="middle" fill="currentColor" fill-opacity="0.8" font-size="${phases.length > 6 ? 9 : 11}">${escapeXml(label)}</text>`,
    );
  });
  parts.push(`<line x1="${left}" x2="${left + plotW}" y1="${top + plotH}" y2="${top + plotH}" stroke="currentColor" stroke-opacity="0.6"/>`);
  // The peak.
  let peakIndex = 0;
  phases.forEach((p, i) => {
    if (p.peak > phases[peakIndex].peak) peakIndex = i;
  });
  const peak = phases[peakIndex];
  const px = x(2 * peakIndex + 1);
  const py = y(runtime + peak.peak);
  parts.push(`<circle cx="${n(px)}" cy="${n(py)}" r="4" fill="#3b82f6" stroke="white" stroke-width="1"/>`);
  parts.push(
    `<text x="${left + plotW + 6}" y="${n(py)}" dominant-baseline="middle" fill="#3b82f6" font-weight="bold">peak ${formatBytes(runtime + peak.peak)}</text>`,
  );
  // Budget and margin.
  if (budget && budget > 0) {
    parts.push(`<line x1="${left}" x2="${left + plotW}" y1="${n(y(budget))}" y2="${n(y(budget))}" stroke="#dc2626" stroke-width="1.5" stroke-dasharray="6 4"/>`);
    parts.push(`<text x="${left + plotW + 6}" y="${n(y(budget))}" dominant-baseline="middle" fill="#dc2626">budget ${formatBytes(budget)}</text>`);
    if (margin && margin > 1) {
      const safe = budget / margin;
      const sy = y(safe);
      // Keep the labels apart when the lines are close.
      const labelY = Math.abs(sy - py) < 12 ? sy + 12 : sy;
      parts.push(`<line x1="${left}" x2="${left + plotW}" y1="${n(sy)}" y2="${n(sy)}" stroke="#d97706" stroke-width="1" stroke-dasharray="2 3"/>`);
      parts.push(`<text x="${left + plotW + 6}" y="${n(labelY)}" dominant-baseline="middle" fill="#d97706">budget ÷ ${margin}</text>`);
    }
  }
  parts.push(
    `<text x="${left}" y="${height - 8}" fill="currentColor" fill-opacity="0.8">Each phase: allocated at its start, its peak and its end, runtime included.</text>`,
  );
  parts.push("</svg>");
  return parts.join("\n");
}
