// Baseline A, the HTTP ceiling: bare Fastify that parses the JSON body and answers 202.
import Fastify from 'fastify';

const app = Fastify({ logger: false });
app.post('/v1/emails', async (_request, reply) => reply.code(202).send({ id: 'msg_x', status: 'queued' }));

const address = await app.listen({ port: 0, host: '127.0.0.1' });
console.log(`Fastify baseline listening on ${address}`);
process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));
