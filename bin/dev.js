#!/usr/bin/env node
// Development entry point: recompiles the TypeScript sources (incrementally fast enough on
// this project's size), then runs the CLI from dist/ exactly as bin/run.js does.
// NOTE: oclif 4's in-place TypeScript mode cannot register tsx 4.2x, so we build instead.
import {execFileSync} from 'node:child_process'
import {createRequire} from 'node:module'
import {dirname, join} from 'node:path'
import {fileURLToPath} from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc')
execFileSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json')], {stdio: 'inherit'})
const {installSignalHandlers} = await import('../dist/cli/signals.js')
installSignalHandlers()
const {execute} = await import('@oclif/core')
await execute({dir: import.meta.url})
