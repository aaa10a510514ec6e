/**
 * The early output check lives with the writers (src/formats/output.ts), so that the rules
 * for what may be written over are in one place; re-exported here for the pruning core.
 */
export {checkOutputPath} from '../formats/output.js'
