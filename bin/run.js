#!/usr/bin/env node
// NOTE: the signal handlers go in before oclif loads (about 0.15 s), so that Ctrl-C or
// SIGTERM at any moment prints its one line and exits 130/143 (see src/cli/signals.ts).
const {installSignalHandlers} = await import('../dist/cli/signals.js')
installSignalHandlers()
const {execute} = await import('@oclif/core')

await execute({dir: import.meta.url})
