// Worker threads do not inherit the TypeScript loader of their parent (Node 20): register it,
// then load the render thread.
import { register } from 'tsx/esm/api';

register();
await import('./render.worker.ts');
