# One image for every process of the platform; each ECS task definition picks its process with its
# command (`node <package>/dist/bin/<process>.mjs`, see processes/src/index.ts). Built here with
# `docker build -t <ecr>/onsale:<tag> .`; the manifest's images (and a canary cell's imageTag) name the tag.

FROM node:24.22.3-bookworm-slim AS build
WORKDIR /src
RUN npm i -g pnpm@10.34.8 --no-fund --no-audit
COPY . .
RUN pnpm install --frozen-lockfile \
 && pnpm run bundle \
 && pnpm --filter @onsale/control-plane build:console

FROM node:24.22.3-bookworm-slim
WORKDIR /app
# The migration task connects to the Aurora writer itself (RDS Proxy presents a public ACM certificate;
# the writer presents one from the RDS CAs), with sslmode=verify-full.
ADD --chmod=0444 https://truststore.pki.rds.amazonaws.com/global/global-bundle.pem /app/rds-global-bundle.pem
ENV NODE_ENV=production NODE_EXTRA_CA_CERTS=/app/rds-global-bundle.pem
# The bundles, and what they read beside themselves (migrations, the console's built assets); no
# node_modules, no TypeScript, no tsx.
COPY --from=build /src/cell/dist/bin cell/dist/bin
COPY --from=build /src/cell/drizzle cell/drizzle
COPY --from=build /src/control-plane/dist/bin control-plane/dist/bin
COPY --from=build /src/control-plane/drizzle control-plane/drizzle
COPY --from=build /src/control-plane/console-web/dist control-plane/console-web/dist
COPY --from=build /src/reporting/dist/bin reporting/dist/bin
COPY --from=build /src/reporting/drizzle reporting/drizzle
COPY --from=build /src/router/dist/bin router/dist/bin
USER node
