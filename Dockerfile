# The standalone Bayou server (`bayou start`), configured by environment variables:
#   docker build -t bayou .
#   docker run -p 8080:8080 -e BAYOU_JWT_SECRET=... -e BAYOU_API_KEY=... bayou
# Every flag has a BAYOU_* variable (see packages/server/README.md); PORT and HOST too.
# A config file can be mounted and named with BAYOU_CONFIG=/config/bayou.config.mjs.
# Behind a load balancer or TLS proxy, set BAYOU_TRUST_PROXY to its address(es) or CIDR
# range, so the per-IP limits see clients and not the proxy (see SECURITY.md).

FROM node:20-bookworm-slim AS build
WORKDIR /src
COPY . .
# The root project (`bayou`) brings the TypeScript compiler.
# fastify is a peer dependency of @bayou/server (an app brings its own), so the deployed
# server adds it itself, in the range the repository develops against.
RUN npx -y pnpm@10.34.9 install --frozen-lockfile --filter bayou --filter "@bayou/server..." \
 && npx -y pnpm@10.34.9 --filter "@bayou/server..." run build \
 && npx -y pnpm@10.34.9 --filter @bayou/server deploy --prod --legacy /out \
 && cd /out && npm pkg delete devDependencies \
 && npx -y pnpm@10.34.9 add --prod "fastify@$(node -p "require('/src/packages/server/package.json').devDependencies.fastify")"

FROM node:20-bookworm-slim
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8080 \
    BAYOU_LOG_FORMAT=json
WORKDIR /app
# Owned by root and not writable by the user the server runs as.
COPY --from=build /out /app
USER node
EXPOSE 8080
# /healthz over http, or over https when a certificate is configured (self-signed accepted).
HEALTHCHECK --interval=15s --timeout=3s --start-period=10s --retries=3 \
  CMD ["node", "-e", "const t=!!process.env.BAYOU_TLS_CERT;require(t?'node:https':'node:http').get({host:'127.0.0.1',port:process.env.PORT||8080,path:'/healthz',rejectUnauthorized:false,timeout:2500},r=>process.exit(r.statusCode===200?0:1)).on('error',()=>process.exit(1)).on('timeout',()=>process.exit(1))"]
ENTRYPOINT ["node", "/app/dist/cli.js"]
CMD ["start"]
