/**
 * Stage 2 of a run: the device. Describes the GPU (or the CPU) the cases will run on and
 * measures its ceilings (copy bandwidth, dense GEMM rates), or refuses with a DeviceError
 * (exit 3) when the addon has no CUDA or there is no usable GPU, before any case runs.
 */
import {cpus} from 'node:os'

import {DeviceError} from '../errors.js'
import {errorMessage} from './failure.js'
import type {BenchDevice, BenchNative, DeviceSummary} from './types.js'

/**
 * `auto` (the default, as in verify): the GPU when the addon has CUDA and a GPU is usable, else
 * the CPU. An explicit device is kept (and refused later if it cannot run).
 */
export function resolveDevice(requested: BenchDevice | 'auto', native: BenchNative): BenchDevice {
  if (requested !== 'auto') return requested
  return native.benchCudaBuilt && native.benchDeviceInfo().available ? 'cuda' : 'cpu'
}

/** The device summary of the report (its `clocks.smMhzSeen` is filled in when the report is assembled). */
export async function describeDevice(native: BenchNative, device: BenchDevice, threads: number | undefined): Promise<DeviceSummary> {
  if (device === 'cpu') {
    const ceilings = await native.benchCeilings('cpu', threads ?? 0)
    const list = cpus()
    return {
      kind: 'cpu',
      label: 'CPU figures',
      name: `${list[0]?.model?.trim() ?? 'CPU'} (${list.length} threads)`,
      smCount: null,
      computeCapability: null,
      l2Bytes: null,
      memoryBytes: null,
      driver: null,
      clocks: {maxSmMhz: null, smMhzAtStart: null, memMhz: null, smMhzSeen: null},
      ceilings,
      libraries: {cublas: null, cusparse: null},
    }
  }
  if (!native.benchCudaBuilt) {
    throw new DeviceError('cuda-not-built', 'CUDA not built: this addon was compiled without the CUDA toolkit', 'use --device cpu, or rebuild on a machine with nvcc: npx node-gyp rebuild')
  }
  const info = native.benchDeviceInfo()
  if (!info.available) {
    throw new DeviceError('no-gpu', `no usable GPU (${info.reason})`, 'run on a machine with an NVIDIA GPU and driver, or use --device cpu')
  }
  const ceilings = await native.benchCeilings('cuda').catch((error: unknown) => {
    throw new DeviceError('ceilings-failed', `measuring the device's ceilings failed: ${errorMessage(error)}`, 'check the GPU with nvidia-smi')
  })
  return {
    kind: 'cuda',
    label: 'CUDA',
    name: info.name,
    smCount: info.smCount,
    computeCapability: info.computeCapability,
    l2Bytes: info.l2Bytes,
    memoryBytes: info.memoryBytes,
    driver: info.driver,
    clocks: {maxSmMhz: info.maxSmClockMhz, smMhzAtStart: info.smClockMhz, memMhz: info.memClockMhz, smMhzSeen: null},
    ceilings,
    libraries: {cublas: info.cublas, cusparse: info.cusparse},
  }
}
