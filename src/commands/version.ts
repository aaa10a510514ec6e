import {BaseCommand} from '../cli/base-command.js'
import {cudaInfo} from '../kernels/index.js'

export interface VersionResult {
  name: string
  version: string
  node: string
  platform: string
  arch: string
  /** The native addon: whether it loads, whether it has the CUDA kernels, and whether a GPU can run them. */
  addon: {loaded: boolean; cuda: boolean; gpu: string | null; reason?: string}
}

export default class Version extends BaseCommand<typeof Version> {
  static summary = 'Print the version of sparse, Node.js and the native addon (with its CUDA status).'

  static description = 'One line: sparse/VERSION, the platform and Node.js version, then whether the native addon loads, whether it was built with the CUDA kernels, and the GPU it would use. Paste it into bug reports. --json prints the same as an object.'

  static examples = ['<%= config.bin %> version', '<%= config.bin %> version --json']

  public async run(): Promise<VersionResult> {
    await this.parse(Version)
    const info = cudaInfo()
    const result: VersionResult = {
      name: this.config.name,
      version: this.config.version,
      node: process.versions.node,
      platform: process.platform,
      arch: process.arch,
      addon: {
        loaded: addonLoaded(info),
        cuda: info.built,
        gpu: info.available ? info.name : null,
        ...(info.available ? {} : {reason: info.reason}),
      },
    }
    const addon = !result.addon.loaded
      ? `addon not loaded (${info.reason})`
      : `addon ${result.addon.cuda ? 'with CUDA kernels' : 'CPU kernels only'}, ${result.addon.gpu ? `GPU ${result.addon.gpu}` : `no GPU (${info.reason ?? 'none found'})`}`
    this.report(`${result.name}/${result.version} ${result.platform}-${result.arch} node-v${result.node}; ${addon}`)
    return result
  }
}

/** cudaInfo() reports an addon that cannot be loaded with the loader's error code. */
function addonLoaded(info: ReturnType<typeof cudaInfo>): boolean {
  return info.code !== 'addon-missing' && info.code !== 'addon-load-failed'
}
