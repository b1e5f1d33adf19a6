// Worker threads do not inherit the TypeScript loader of their parent (Node 20): register it,
// then load the parser's thread.
import { register } from 'tsx/esm/api';

register();
await import('./submission.parser.worker.ts');
