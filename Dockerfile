# The Gatepost image: `docker build -t gatepost:0.1.0 .` (the tag the Helm chart names by default).
# The first stage compiles the TypeScript to dist/; the second holds dist/ and the production
# dependencies only, and runs `node dist/main.js` as an unprivileged user.

FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# Compiling needs no native binary: no install scripts.
RUN npm ci --ignore-scripts
COPY . .
RUN npm run build

FROM node:20-bookworm-slim
ENV NODE_ENV=production \
    GATEPOST_DATA_DIR=/var/lib/gatepost \
    MALLOC_ARENA_MAX=2
WORKDIR /app
COPY package.json package-lock.json ./
# better-sqlite3 downloads a prebuilt binary where one exists for the platform, and compiles
# otherwise: the compilers are there for that install only.
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && npm ci --omit=dev \
 && npm cache clean --force \
 && apt-get purge -y python3 make g++ \
 && apt-get autoremove -y \
 && rm -rf /var/lib/apt/lists/*
COPY --from=build /app/dist ./dist
RUN mkdir -p /var/lib/gatepost && chown node:node /var/lib/gatepost
USER node
VOLUME /var/lib/gatepost
# HTTP (PORT) and SMTP submission (GATEPOST_SMTP_PORT).
EXPOSE 3000 2587
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
CMD ["node", "--expose-gc", "--max-semi-space-size=32", "dist/main.js"]
