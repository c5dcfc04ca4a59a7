import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { chromium } from "playwright-core";
import { CHROMIUM, CHROMIUM_ARGS } from "../../test/support/browser.ts";
import type { SoakSample } from "./samples.ts";

/** One panel of the chart: some series over the soak's minutes, on one axis. */
interface Panel {
  readonly title: string;
  readonly unit: string;
  readonly series: readonly { name: string; values: readonly number[] }[];
}

const COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#17becf"];
const WIDTH = 1200;
const PANEL_W = 560;
const PANEL_H = 230;
const MARGIN = { left: 64, top: 56, right: 16, bottom: 30 };
/** Legend entries a row, above the plot. */
const LEGEND_ROW = 4;

/** The soak's panels: lag, latency, memory, the database's size and its dead tuples. */
export function soakPanels(samples: readonly SoakSample[]): Panel[] {
  const processes = [...new Set(samples.flatMap((s) => Object.keys(s.memoryMiB)))];
  return [
    {
      title: "Capture lag (ldapmodify answered → event in the log)",
      unit: "ms",
      series: [
        { name: "p99", values: samples.map((s) => s.captureLagP99Ms) },
        { name: "max", values: samples.map((s) => s.captureLagMaxMs) },
      ],
    },
    {
      title: "REST read latency",
      unit: "ms",
      series: [{ name: "p99", values: samples.map((s) => s.restP99Ms) }],
    },
    {
      title: "Memory (annal and slapd: RSS; PostgreSQL: PSS of all its processes)",
      unit: "MiB",
      series: processes.map((name) => ({
        name,
        values: samples.map((s) => s.memoryMiB[name] ?? 0),
      })),
    },
    {
      title: "PostgreSQL: database, tables (heap+TOAST) and indexes",
      unit: "MiB",
      series: [
        { name: "database", values: samples.map((s) => s.databaseMiB) },
        { name: "tables", values: samples.map((s) => s.tablesMiB) },
        { name: "indexes", values: samples.map((s) => s.indexesMiB) },
      ],
    },
    {
      title: "Dead tuples (all user tables)",
      unit: "tuples",
      series: [{ name: "dead", values: samples.map((s) => s.deadTuples) }],
    },
    {
      title: "Dead share of all tuples",
      unit: "%",
      series: [{ name: "dead", values: samples.map((s) => s.deadShare * 100) }],
    },
  ];
}

const escapeXml = (text: string) =>
  text.replace(/[<>&"]/g, (c) => ({ "<": "&lt;", ">": "&gt;", "&": "&amp;", '"': "&quot;" })[c]!);

/** A tick's label: whole minutes, or tenths on a run shorter than ten minutes; hours past 2 h. */
function minuteLabel(minute: number, last: number): string {
  if (last > 120) return `${(minute / 60).toFixed(minute % 60 === 0 ? 0 : 1)} h`;
  return `${last < 10 ? minute.toFixed(1) : Math.round(minute)} min`;
}

/** A nice upper bound for an axis: 1, 2 or 5 times a power of ten, at least `max`. */
function niceMax(max: number): number {
  if (max <= 0) return 1;
  const power = 10 ** Math.floor(Math.log10(max));
  return [1, 2, 5, 10].map((m) => m * power).find((bound) => bound >= max)!;
}

function panelSvg(panel: Panel, minutes: readonly number[], x0: number, y0: number): string {
  const w = PANEL_W - MARGIN.left - MARGIN.right;
  const h = PANEL_H - MARGIN.top - MARGIN.bottom;
  const top = niceMax(Math.max(0, ...panel.series.flatMap((s) => s.values)));
  const last = Math.max(1, minutes.at(-1) ?? 1);
  const x = (minute: number) => x0 + MARGIN.left + (minute / last) * w;
  const y = (value: number) => y0 + MARGIN.top + h - (value / top) * h;
  const parts = [
    `<text x="${x0 + MARGIN.left}" y="${y0 + 18}" font-size="13" font-weight="bold">${escapeXml(panel.title)}</text>`,
    `<rect x="${x0 + MARGIN.left}" y="${y0 + MARGIN.top}" width="${w}" height="${h}" fill="none" stroke="#999"/>`,
  ];
  for (let i = 0; i <= 4; i++) {
    const value = (top * i) / 4;
    parts.push(
      `<line x1="${x0 + MARGIN.left}" x2="${x0 + MARGIN.left + w}" y1="${y(value)}" y2="${y(value)}" stroke="#eee"/>`,
      `<text x="${x0 + MARGIN.left - 6}" y="${y(value) + 4}" font-size="11" text-anchor="end">${value.toLocaleString("en")}</text>`,
    );
  }
  for (let i = 0; i <= 4; i++) {
    const minute = (last * i) / 4;
    parts.push(
      `<text x="${x(minute)}" y="${y0 + PANEL_H - 10}" font-size="11" text-anchor="middle">${minuteLabel(minute, last)}</text>`,
    );
  }
  parts.push(
    `<text x="${x0 + 14}" y="${y0 + MARGIN.top + h / 2}" font-size="11" transform="rotate(-90 ${x0 + 14} ${y0 + MARGIN.top + h / 2})" text-anchor="middle">${escapeXml(panel.unit)}</text>`,
  );
  panel.series.forEach((series, i) => {
    const colour = COLOURS[i % COLOURS.length]!;
    const points = series.values.map((v, j) => `${x(minutes[j]!)},${y(v)}`).join(" ");
    parts.push(
      `<polyline points="${points}" fill="none" stroke="${colour}" stroke-width="2"/>`,
      ...series.values.map(
        (v, j) => `<circle cx="${x(minutes[j]!)}" cy="${y(v)}" r="2.5" fill="${colour}"/>`,
      ),
      `<text x="${x0 + MARGIN.left + (i % LEGEND_ROW) * 120}" y="${y0 + 34 + Math.floor(i / LEGEND_ROW) * 14}" font-size="11" fill="${colour}">■ ${escapeXml(series.name)}</text>`,
    );
  });
  return parts.join("\n");
}

/** The whole chart as an SVG document: the panels two by two, a title over them. */
export function soakSvg(title: string, samples: readonly SoakSample[]): string {
  const panels = soakPanels(samples);
  const minutes = samples.map((s) => s.minute);
  const rows = Math.ceil(panels.length / 2);
  const height = 40 + rows * PANEL_H;
  const body = panels
    .map((panel, i) =>
      panelSvg(panel, minutes, (i % 2) * (PANEL_W + 40), 40 + Math.floor(i / 2) * PANEL_H),
    )
    .join("\n");
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" font-family="sans-serif">
<rect width="100%" height="100%" fill="white"/>
<text x="12" y="24" font-size="16" font-weight="bold">${escapeXml(title)}</text>
${body}
</svg>`;
}

/** Rasterises an SVG document to a PNG file with Debian's Chromium (as the web tests run it). */
export async function writePng(svg: string, file: string): Promise<void> {
  const profile = await mkdtemp(path.join(tmpdir(), "annal-soak-chromium-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: [...CHROMIUM_ARGS],
    // Playwright's own handlers end the process on SIGINT; the soak's end it with its results.
    handleSIGINT: false,
    handleSIGTERM: false,
    handleSIGHUP: false,
  });
  try {
    const page = context.pages()[0] ?? (await context.newPage());
    const size = /width="(\d+)" height="(\d+)"/.exec(svg)!;
    await page.setViewportSize({ width: Number(size[1]), height: Number(size[2]) });
    await page.setContent(`<html><body style="margin:0">${svg}</body></html>`);
    await page.screenshot({ path: file, fullPage: true });
  } finally {
    await context.close();
    await rm(profile, { recursive: true, force: true });
  }
}
