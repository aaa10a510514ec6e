/**
 * The benchmark harness's view of the native addon. The addon itself is loaded only by
 * src/kernels/binding.ts; this module checks that the bench functions are there and casts.
 */
import {DeviceError} from '../errors.js'
import {loadAddon} from '../kernels/binding.js'
import type {BenchNative} from './types.js'

let cached: BenchNative | undefined

/** The bench functions of the addon; DeviceError (exit 3) when the addon or they are missing. */
export function getBenchNative(): BenchNative {
  if (cached) return cached
  const addon = loadAddon<Partial<BenchNative>>()
  if (typeof addon.benchSpmm !== 'function' || typeof addon.benchSddmm !== 'function' || typeof addon.benchCeilings !== 'function') {
    throw new DeviceError('addon-outdated', 'the native addon has no benchmark harness (built from older sources)', 'rebuild it: npx node-gyp rebuild')
  }
  cached = addon as BenchNative
  return cached
}
