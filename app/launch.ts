// How a Gatepost process is started on the embedded runtime: `npm start` builds dist/ and runs
// `node ${V8_FLAGS} dist/main.js` (app/launch.test.ts holds it to that); the test harness and the
// benchmarks run the TypeScript sources with the same V8 flags, `node ${NODE_ARGS} main.ts`, so
// they measure what an operator runs.

/**
 * V8 flags. A young generation of 64 MiB a semi-space, not 16: each send's objects live a few
 * milliseconds (until its commit, its capture), so a scavenge every ~20 ms of work found a quarter of
 * them still alive and copied them. Four times rarer, it copies far fewer: the scavenger's time
 * fell by about a third (bench/RESULTS.md, tenth pass). The cost: V8 may keep up to 144 MiB
 * more for the young generation (three times the semi-space) under load.
 *
 * `--expose-gc`: lib/memory.ts collects once the process goes quiet after work, which V8 does not
 * do by itself while nothing allocates (the heap a burst grew stayed resident through idle).
 */
export const V8_FLAGS = ['--max-semi-space-size=64', '--expose-gc'];

/** Everything between `node` and a TypeScript entry point (main.ts): the V8 flags and tsx. */
export const NODE_ARGS = [...V8_FLAGS, '--import', 'tsx'];
