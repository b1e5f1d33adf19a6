// How a Gatepost process is started on the embedded runtime: `npm start` builds dist/ and runs
// `${LAUNCH_ENV} node ${V8_FLAGS} dist/main.js` (app/launch.test.ts holds it, the image and the
// chart to that); the test harness and the benchmarks run it with the same environment and V8
// flags (the tests from the TypeScript sources, `node ${NODE_ARGS} main.ts`), so they measure
// what an operator runs.

/**
 * V8 flags. `--expose-gc`: lib/memory.ts collects once the process goes quiet after work, which V8
 * does not do by itself while nothing allocates (the heap a burst grew stayed resident through idle).
 *
 * `--max-semi-space-size=32`: a young generation of 32 MiB a semi-space, twice V8's own. A send's
 * objects live a few milliseconds, but a scavenge copies whatever is still under way, and under
 * load they came every 150 ms or so (bench:broadcast, 16 MiB). In rotating `bench:send
 * --gatepost-only` runs on 2026-11-28, 32 was the fastest (median 5,151 sends/s against 4,968 at
 * 16 and 4,279 at 64, four rounds each; 64 also held 30-70 MiB more after a burst); in
 * alternating `--idle 60` pairs on 2026-11-29, 9-11 % more sends a second than 16 in each of
 * three pairs, 6-8 % less CPU a send, 386-387 against 355-365 MiB resident after the burst and
 * the same 247-252 after the idle minute (bench/RESULTS.md, twenty-ninth and thirty-seventh
 * passes).
 */
export const V8_FLAGS = ['--expose-gc', '--max-semi-space-size=32'];

/**
 * The environment the C library's allocator reads as the process starts. `MALLOC_ARENA_MAX=2`:
 * glibc gives each thread that allocates an arena of its own, up to eight a core, and keeps what
 * they grew; Gatepost's worker threads (the writers, SMTP parsing, the queue's reads) made them
 * many. In `bench:send --gatepost-only --idle 60`, alternating, two arenas held 445-483 MiB
 * resident after the burst against 513-560 with glibc's own, at the same speed (2026-11-29,
 * bench/RESULTS.md thirty-sixth pass).
 */
export const LAUNCH_ENV = { MALLOC_ARENA_MAX: '2' };

/** Everything between `node` and a TypeScript entry point (main.ts): the V8 flags and tsx. */
export const NODE_ARGS = [...V8_FLAGS, '--import', 'tsx'];
