// Run by memory.test.ts as `node --expose-gc --import tsx heap.growth.fixture.ts [bounded]`: keeps
// about 120 MiB alive and allocates six million short-lived objects beside it, as a fan-out does,
// then prints the most heap in use it saw and, after a full collection, what was alive.
import { getHeapStatistics } from 'node:v8';
import { boundHeapGrowth } from './memory.ts';

if (process.argv[2] === 'bounded') boundHeapGrowth();
const used = () => getHeapStatistics().used_heap_size;
const alive = Array.from({ length: 500_000 }, (_, i) => ({ text: `kept ${i} `.repeat(20), n: i }));
let most = 0;
let garbage: { text: string }[] = [];
for (let round = 0; round < 6_000; round++) {
  for (let i = 0; i < 1_000; i++) garbage.push({ text: `garbage ${round} ${i} ` });
  if (garbage.length >= 100_000) garbage = [];
  if (round % 10 === 0) most = Math.max(most, used());
}
garbage = [];
globalThis.gc!();
console.log(JSON.stringify({ most, alive: used(), kept: alive.length }));
