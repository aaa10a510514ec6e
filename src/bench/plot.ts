/**
 * `--plot FILE.svg|.png`: speedup over each baseline against sparsity, one series per
 * baseline (geometric mean per level, with each case as a faint point), one panel per op
 * and dtype, log scale, with the break-even line at 1. Made with vega-lite, rendered to
 * SVG by vega in Node (no browser); PNG through resvg.
 */
import {Resvg} from '@resvg/resvg-js'
import * as vega from 'vega'
import {compile, type TopLevelSpec} from 'vega-lite'

import {UsageError} from '../errors.js'
import {writeAtomically, type WrittenFile} from '../formats/output.js'
import {levelOf} from './summary.js'
import type {BenchReport} from './types.js'

interface Point {
  panel: string
  baseline: string
  /** The case's group ('rn50', 'transformer', 'llm', 'attention', 'input'): levels are averaged per group. */
  group: string
  sparsity: number
  speedup: number
  kind: 'case' | 'level'
  file?: string
  n?: number
}

/** The plotted data: every case's speedups and the geometric mean per level. */
export function plotData(report: BenchReport): Point[] {
  const points: Point[] = []
  const devicePrefix = report.device.kind === 'cpu' ? 'CPU ' : ''
  for (const c of report.cases) {
    if (c.status !== 'ok') continue
    for (const [baseline, s] of Object.entries(c.speedup)) {
      if (!(s > 0) || !Number.isFinite(s)) continue
      points.push({panel: `${devicePrefix}${c.op} ${c.dtype}`, baseline, group: c.group, sparsity: levelOf(c.level), speedup: s, kind: 'case', file: c.file, n: c.n})
    }
  }
  // Geometric means per (panel, baseline, group, level): groups (models) are not mixed, as
  // their levels differ (DLMC has 0.6 for the Transformer only).
  const groups = new Map<string, Point[]>()
  for (const p of points) {
    const k = `${p.panel}|${p.baseline}|${p.group}|${p.sparsity}`
    const list = groups.get(k)
    if (list) list.push(p)
    else groups.set(k, [p])
  }
  for (const list of groups.values()) {
    const g = Math.exp(list.reduce((a, p) => a + Math.log(p.speedup), 0) / list.length)
    points.push({panel: list[0].panel, baseline: list[0].baseline, group: list[0].group, sparsity: list[0].sparsity, speedup: g, kind: 'level'})
  }
  return points
}

/** Per-case points are drawn up to this many (beyond, the file grows large: lines only). */
export const MAX_PLOT_POINTS = 2000

/** The vega-lite specification of the plot. */
export function plotSpec(report: BenchReport): TopLevelSpec {
  let values = plotData(report)
  const casePoints = values.filter((p) => p.kind === 'case').length
  const withPoints = casePoints <= MAX_PLOT_POINTS
  if (!withPoints) values = values.filter((p) => p.kind === 'level')
  const manyGroups = new Set(values.map((p) => p.group)).size > 1
  const title = `sparse bench: speedup of our ${report.device.kind === 'cpu' ? 'CPU kernels (CPU figures)' : 'kernels'} over each baseline (${report.device.name})`
  const subtitle = withPoints
    ? `above 1: sparse is faster; lines: geometric mean per sparsity level${manyGroups ? ' and model' : ''}; points: cases`
    : `above 1: sparse is faster; lines: geometric mean per sparsity level${manyGroups ? ' and model' : ''} (${casePoints} case points not drawn)`
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: {text: title, subtitle},
    data: {values},
    facet: {field: 'panel', type: 'nominal', title: null},
    columns: 2,
    spec: {
      width: 360,
      height: 240,
      layer: [
        {
          transform: [{filter: "datum.kind === 'case'"}],
          mark: {type: 'point', opacity: 0.25, size: 14, filled: true},
          encoding: {
            x: {field: 'sparsity', type: 'quantitative', title: 'sparsity', scale: {zero: false}},
            y: {field: 'speedup', type: 'quantitative', title: 'speedup (baseline time / sparse time)', scale: {type: 'log'}},
            color: {field: 'baseline', type: 'nominal', title: 'baseline'},
          },
        },
        {
          transform: [{filter: "datum.kind === 'level'"}],
          mark: {type: 'line', point: true, strokeWidth: 2},
          encoding: {
            x: {field: 'sparsity', type: 'quantitative'},
            y: {field: 'speedup', type: 'quantitative', scale: {type: 'log'}},
            color: {field: 'baseline', type: 'nominal'},
            ...(manyGroups ? {strokeDash: {field: 'group', type: 'nominal', title: 'model', legend: {symbolType: 'stroke', symbolStrokeColor: 'black', symbolStrokeWidth: 2, symbolSize: 300}}, detail: {field: 'group'}} : {}),
          },
        },
        {
          mark: {type: 'rule', color: 'black', strokeDash: [4, 3]},
          encoding: {y: {datum: 1}},
        },
      ],
    },
    resolve: {scale: {y: 'shared'}},
    config: {font: 'sans-serif'},
  } as TopLevelSpec
}

/** The plot as an SVG document. */
export async function renderPlotSvg(report: BenchReport): Promise<string> {
  if (report.cases.every((c) => c.status !== 'ok')) throw new UsageError('nothing-to-plot', '--plot: no case succeeded, nothing to plot')
  const vgSpec = compile(plotSpec(report)).spec
  // NOTE: vega-lite draws the dash legend's symbols with a transparent stroke (inherited from
  // the filled point layer); give them a visible one.
  for (const legend of vgSpec.legends ?? []) {
    if (legend.strokeDash) legend.encode = {...legend.encode, symbols: {update: {stroke: {value: 'black'}, fill: {value: 'transparent'}, opacity: {value: 1}}}}
  }
  const view = new vega.View(vega.parse(vgSpec), {renderer: 'none'})
  try {
    return await view.toSVG()
  } finally {
    view.finalize()
  }
}

/** PNG bytes of an SVG document (white background). */
export function svgToPng(svg: string, scale = 2): Uint8Array {
  const resvg = new Resvg(svg, {background: 'white', fitTo: {mode: 'zoom', value: scale}, font: {loadSystemFonts: true, defaultFontFamily: 'DejaVu Sans'}})
  return resvg.render().asPng()
}

/** Writes the plot to `path` (.svg or .png), atomically; refuses to overwrite without force. */
export async function writePlot(report: BenchReport, path: string, opts: {force?: boolean} = {}): Promise<WrittenFile> {
  const lower = path.toLowerCase()
  if (!lower.endsWith('.svg') && !lower.endsWith('.png')) {
    throw new UsageError('bad-plot-name', `--plot ${path}: the name must end in .svg or .png`, 'e.g. --plot bench.svg')
  }
  const svg = await renderPlotSvg(report)
  const bytes = lower.endsWith('.png') ? svgToPng(svg) : new TextEncoder().encode(svg)
  return writeAtomically(path, {force: opts.force}, async (sink) => sink.write(bytes))
}
