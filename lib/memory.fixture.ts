// Run by memory.test.ts as `node --expose-gc --import tsx memory.fixture.ts`: grows the heap
// with garbage the way a burst does, goes quiet, and prints the heap's size every 100 ms.
import { getHeapStatistics } from 'node:v8';
import { releaseMemoryWhenQuiet } from './memory.ts';

const release = releaseMemoryWhenQuiet({ tickMs: 200, spacingMs: 0 });
let kept: string[][] = [];
for (let i = 0; i < 40; i++) kept.push(Array.from({ length: 50_000 }, (_, j) => `garbage ${i} ${j} `.repeat(4)));
console.log(`heap ${getHeapStatistics().total_heap_size}`);
kept = [];
const report = setInterval(() => console.log(`heap ${getHeapStatistics().total_heap_size}`), 100);
process.on('message', () => {
  clearInterval(report);
  release.stop();
});
