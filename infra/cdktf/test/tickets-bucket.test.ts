import { beforeAll, describe, expect, it } from 'vitest';
import { defaultManifest } from './support/manifests';
import {
  containerDefinitions,
  policyStatements,
  refTo,
  resources,
  type StackJson,
  synthPlatform,
} from './support/terraform';

/** Each cell's tickets bucket: the ticket worker writes it, the API reads it, nobody else touches it. */
describe("a cell's tickets bucket", () => {
  let cells: { name: string; json: StackJson }[];
  beforeAll(() => {
    const synth = synthPlatform(defaultManifest());
    cells = [...synth.stacks.entries()]
      .filter(([name]) => name.startsWith('cell-') && !name.includes('dr'))
      .map(([name, s]) => ({ name, json: s.json }));
    expect(cells.length).toBeGreaterThan(0);
  });

  it('is private, encrypted with the cell key, versioned, and named in the API and ticket tasks only', () => {
    for (const { name, json } of cells) {
      const [bucket, ...others] = resources(json, 'aws_s3_bucket').filter((b) =>
        String(b.body.bucket_prefix ?? '').startsWith('tickets-'),
      );
      expect(others, name).toEqual([]);
      const id = refTo('aws_s3_bucket', bucket!.name, 'id');
      const on = (type: string) => resources(json, type).filter((r) => r.body.bucket === id);
      expect(on('aws_s3_bucket_public_access_block')[0]?.body, name).toMatchObject({
        block_public_acls: true,
        block_public_policy: true,
        ignore_public_acls: true,
        restrict_public_buckets: true,
      });
      expect(on('aws_s3_bucket_versioning')[0]?.body.versioning_configuration, name).toMatchObject({
        status: 'Enabled',
      });
      const sse = JSON.stringify(on('aws_s3_bucket_server_side_encryption_configuration')[0]?.body);
      expect(sse, name).toContain('aws:kms');

      const bucketName = refTo('aws_s3_bucket', bucket!.name, 'bucket');
      const withBucket = resources(json, 'aws_ecs_task_definition')
        .filter((t) =>
          containerDefinitions(t.body).some((c) =>
            c.environment.some((e) => e.name === 'TICKETS_BUCKET' && e.value === bucketName),
          ),
        )
        .map((t) => String(t.body.family));
      expect(withBucket.sort(), name).toEqual([expect.stringMatching(/-api$/), expect.stringMatching(/-ticket$/)]);
    }
  });

  it('grants the ticket task get and put on its objects, the API get only, and no other role anything', () => {
    for (const { name, json } of cells) {
      const bucket = resources(json, 'aws_s3_bucket').find((b) =>
        String(b.body.bucket_prefix ?? '').startsWith('tickets-'),
      )!;
      const objects = `${refTo('aws_s3_bucket', bucket.name, 'arn')}/*`;
      const grants = policyStatements(json).filter((s) => s.effect === 'Allow' && s.resources.includes(objects));
      const byRole = new Map<string, string[]>();
      for (const g of grants) {
        const role = /service-([a-z]+)_task-role/.exec(g.where)?.[1] ?? g.where;
        byRole.set(role, [...(byRole.get(role) ?? []), ...g.actions].sort());
      }
      expect(Object.fromEntries(byRole), name).toEqual({
        ticket: ['s3:GetObject', 's3:PutObject'],
        api: ['s3:GetObject'],
      });
    }
  });
});

/** Door scanners sync keys from the cell that sells the event, which an evacuation may have changed. */
describe("a cell's published ticket keys", () => {
  it("every cell's API publishes every cell's ticket key, and no worker is given them", () => {
    const manifest = defaultManifest();
    const synth = synthPlatform(manifest);
    const expected = manifest.ticketKeys.map((k) => ({ ...k, alg: 'EdDSA', use: 'sig' }));
    for (const [name, stack] of synth.stacks) {
      if (!name.startsWith('cell-')) continue;
      for (const task of resources(stack.json, 'aws_ecs_task_definition')) {
        const published = containerDefinitions(task.body)
          .flatMap((c) => c.environment)
          .filter((e) => e.name === 'TICKET_PUBLIC_JWKS');
        if (String(task.body.family).endsWith('-api')) {
          expect(published, `${name} ${task.body.family}`).toHaveLength(1);
          expect(JSON.parse(published[0]!.value).keys).toEqual(expected);
        } else expect(published, `${name} ${task.body.family}`).toEqual([]);
      }
    }
  });
});
