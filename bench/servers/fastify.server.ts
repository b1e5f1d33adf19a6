// Baseline A, the HTTP ceiling: bare Fastify that parses the JSON body and answers 202 (bench:send),
// and answers a GET of a tracked link's path with a 302 (bench:tracking).
import Fastify from 'fastify';

const app = Fastify({ logger: false });
app.post('/v1/emails', async (_request, reply) => reply.code(202).send({ id: 'msg_x', status: 'queued' }));
app.get('/t/c/*', async (_request, reply) => reply.redirect('https://shop.example/sale?item=42', 302));

const address = await app.listen({ port: 0, host: '127.0.0.1' });
console.log(`Fastify baseline listening on ${address}`);
process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));
