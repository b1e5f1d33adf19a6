// Closes every run with one plain line, "tests: N passed, N failed, N skipped", that any CI
// can read whatever it knows of vitest.
import type { Reporter, TestModule } from 'vitest/node';

export default class SummaryReporter implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<unknown>): void {
    const counts = { passed: 0, failed: 0, skipped: 0 };
    for (const m of modules) {
      for (const test of m.children.allTests()) {
        const state = test.result().state;
        if (state === 'passed') counts.passed++;
        else if (state === 'failed') counts.failed++;
        else counts.skipped++;
      }
      // A file that failed to load has no tests to count: count it as a failure.
      if (m.state() === 'failed' && [...m.children.allTests()].length === 0) counts.failed++;
    }
    counts.failed += unhandledErrors.length;
    console.log(`tests: ${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped`);
  }
}
