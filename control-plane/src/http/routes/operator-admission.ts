import { createRoute, z } from '@hono/zod-openapi';
import { errorResponses } from '@onsale/contracts';
import { revokeAdmission } from '../../admission/revoke';
import { actorName } from '../../lib/actors';
import { asOperator, bearerSecurity } from '../auth';
import type { App } from '../env';

const RevokedForEvent = z
  .string()
  .uuid()
  .optional()
  .openapi({ description: 'The onsale the revocation is made for: its bot report counts it' });

const revoke = createRoute({
  method: 'post',
  path: '/operator/admissions/revocations',
  tags: ['operator'],
  summary: 'Revoke an admission token (jti) or all of a buyer’s admissions (sub); cells refuse within seconds',
  security: bearerSecurity,
  middleware: [asOperator] as const,
  request: {
    body: {
      required: true,
      content: {
        'application/json': {
          schema: z
            .xor([
              z
                .object({
                  jti: z.string().min(8),
                  exp: z
                    .number()
                    .int()
                    .min(0)
                    .max(2 ** 32)
                    .optional(),
                  reason: z.string().min(1).max(500),
                  eventId: RevokedForEvent,
                })
                .strict(),
              z
                .object({ sub: z.string().min(1), reason: z.string().min(1).max(500), eventId: RevokedForEvent })
                .strict(),
            ])
            .openapi('Revoke', { description: 'Exactly one of jti (one token) or sub (every admission of a buyer)' }),
        },
      },
    },
  },
  responses: {
    201: {
      description: 'Revoked',
      content: {
        'application/json': {
          schema: z.object({ id: z.string(), key: z.string(), ttlSeconds: z.number().int(), expiresAt: z.string() }),
        },
      },
    },
    ...errorResponses('validation_failed', 'unauthenticated', 'forbidden'),
  },
});

const Key = z
  .object({
    kid: z.string(),
    alg: z.string(),
    createdAt: z.string(),
    activatesAt: z.string(),
    retiredAt: z.string().nullable(),
    publishedUntil: z.string().nullable(),
  })
  .openapi('SigningKey');
const keyDto = (k: {
  kid: string;
  alg: string;
  createdAt: Date;
  activatesAt: Date;
  retiredAt: Date | null;
  publishedUntil: Date | null;
}) => ({
  kid: k.kid,
  alg: k.alg,
  createdAt: k.createdAt.toISOString(),
  activatesAt: k.activatesAt.toISOString(),
  retiredAt: k.retiredAt?.toISOString() ?? null,
  publishedUntil: k.publishedUntil?.toISOString() ?? null,
});

const rotate = createRoute({
  method: 'post',
  path: '/operator/signing-keys/rotate',
  tags: ['operator'],
  summary: 'Announce a new admission signing key (it signs after the announce period)',
  security: bearerSecurity,
  middleware: [asOperator] as const,
  responses: {
    201: { description: 'Announced', content: { 'application/json': { schema: Key } } },
    ...errorResponses('unauthenticated', 'forbidden'),
  },
});
const list = createRoute({
  method: 'get',
  path: '/operator/signing-keys',
  tags: ['operator'],
  security: bearerSecurity,
  middleware: [asOperator] as const,
  responses: {
    200: {
      description: 'Published keys (no private material)',
      content: { 'application/json': { schema: z.object({ keys: z.array(Key) }) } },
    },
    ...errorResponses('unauthenticated', 'forbidden'),
  },
});

/** Admission tokens: revocation and signing keys (operator only). */
export function registerOperatorAdmission(app: App) {
  app.openapi(revoke, async (c) => {
    const actor = c.get('actor');
    return c.json(
      await revokeAdmission({ ctx: c.get('services'), input: c.req.valid('json'), actor: actorName(actor) }),
      201,
    );
  });
  app.openapi(rotate, async (c) => {
    return c.json(keyDto(await c.get('services').keys.rotate()), 201);
  });
  app.openapi(list, async (c) => {
    return c.json({ keys: (await c.get('services').keys.list(true)).map(keyDto) }, 200);
  });
}
