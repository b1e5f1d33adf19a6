// Worker threads do not inherit the TypeScript loader of their parent (Node 20): register it,
// then load the writer thread.
import { register } from 'tsx/esm/api';

register();
await import('./committer.worker.ts');
