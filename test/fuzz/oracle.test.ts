/**
 * The many target's time measurement (oracle.ts, linearity()) on synthetic readers whose cost
 * is known: it must pass a linear reader that pays a collector's pauses by the volume it
 * allocates (as V8's young-generation collections come), and fail a quadratic one.
 */
import {expect} from 'chai'

import {linearity, MAX_PER_ITEM_GROWTH} from './oracle.js'

/** Hold the thread for `ms` (the readers' cost is wall time, like the parsers'). */
function spin(ms: number): void {
  const end = performance.now() + ms
  while (performance.now() < end) {
    // busy
  }
}

/**
 * A reader costing `perItemMs` per item, plus `pauseMs` each time the items read so far
 * (over all reads) cross a multiple of `pauseEvery`: one read of a tenth (1,019 items) mostly
 * crosses none, a read of the whole (10,186) two or three.
 */
function pausingReader(perItemMs: number, pauseEvery: number, pauseMs: number) {
  let done = 0
  return (items: number) => async () => {
    spin(items * perItemMs)
    const pauses = Math.floor((done + items) / pauseEvery) - Math.floor(done / pauseEvery)
    done += items
    spin(pauses * pauseMs)
  }
}

describe('fuzz oracle: linearity()', function () {
  this.timeout(30_000)
  const n = 10_186
  const tenth = Math.ceil(n / 10)

  it('passes a linear reader whose collector pauses come with the volume read (a single read of the tenth has none)', async () => {
    // 2 us an item and 40 ms every 4,000 items: the whole takes 5-7x the time per item of
    // one read of the tenth without a pause (the best of two, as the target once measured).
    const read = pausingReader(0.002, 4000, 40)
    const r = await linearity('linear, pausing', {n: tenth, read: read(tenth)}, {n, read: read(n)})
    expect(r.problem, `growth ${r.growth.toFixed(2)}`).to.equal(null)
    expect(r.growth).to.be.lessThan(MAX_PER_ITEM_GROWTH / 2)
  })

  it('fails a quadratic reader (10x the time per item from the tenth to the whole)', async () => {
    // 1e-6 ms x items^2: the tenth ~1 ms, the whole ~104 ms.
    const read = (items: number) => async () => spin(1e-6 * items * items)
    const r = await linearity('quadratic', {n: tenth, read: read(tenth)}, {n, read: read(n)})
    expect(r.problem).to.match(/^quadratic: not linear: 10186 items took \d+ ms, 10 reads of 1019 took \d+ ms/)
    expect(r.growth).to.be.greaterThan(MAX_PER_ITEM_GROWTH)
  })

  it("loads each input before its timed runs and ignores the tenth's refusal", async () => {
    const loaded: string[] = []
    const r = await linearity(
      'loads',
      {n: tenth, load: () => loaded.push('tenth'), read: async () => Promise.reject(new Error('refused'))},
      {n, load: () => loaded.push('whole'), read: async () => 'whole read'},
    )
    expect(loaded.slice(0, 3)).to.deep.equal(['tenth', 'tenth', 'whole'])
    expect(r.whole.value).to.equal('whole read')
  })
})
