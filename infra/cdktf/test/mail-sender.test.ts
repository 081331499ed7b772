import { beforeAll, describe, expect, it } from 'vitest';
import { cellMailSender, parseManifest } from '../src/manifest';
import { defaultManifest } from './support/manifests';
import {
  type Block,
  containerDefinitions,
  dataSources,
  policyStatements,
  refTo,
  resources,
  type StackJson,
  synthPlatform,
} from './support/terraform';

/** Each cell mails its buyers through SES as itself: its own identity, its From only, no SMTP password anywhere. */
describe("a cell's mail sender", () => {
  const input = defaultManifest();
  const manifest = parseManifest(input);
  let stacks: { name: string; cellId: string; json: StackJson }[];
  beforeAll(() => {
    const synth = synthPlatform(input);
    stacks = [...synth.stacks.entries()]
      .filter(([name]) => name.startsWith('cell-'))
      .map(([name, s]) => ({ name, cellId: manifest.cells.find((c) => name.includes(`-${c.id}`))!.id, json: s.json }));
    expect(stacks.length).toBeGreaterThan(0);
  });

  it('has an SES identity for its own domain in its region (the DR stack too), behind a TLS-only, suppressing configuration set', () => {
    for (const { name, cellId, json } of stacks) {
      const sender = cellMailSender(manifest, cellId);
      expect(sender.domain, name).toBe(`${cellId}.mail.${manifest.edge.domainNames[0]}`);
      const identities = resources(json, 'aws_sesv2_email_identity');
      expect(
        identities.map((i) => i.body.email_identity),
        name,
      ).toEqual([sender.domain]);
      const [set] = resources(json, 'aws_sesv2_configuration_set');
      expect(identities[0]!.body.configuration_set_name, name).toBe(
        refTo('aws_sesv2_configuration_set', set!.name, 'configuration_set_name'),
      );
      expect(set!.body, name).toMatchObject({
        delivery_options: { tls_policy: 'REQUIRE' },
        suppression_options: { suppressed_reasons: ['BOUNCE', 'COMPLAINT'] },
      });
    }
  });

  it('lets only the notifier task send, only as the cell From, and gives it MAIL_TRANSPORT=ses and no SMTP secret', () => {
    for (const { name, cellId, json } of stacks) {
      const sender = cellMailSender(manifest, cellId);
      const sends = policyStatements(json).filter((s) => s.actions.some((a) => a.startsWith('ses:')));
      expect(
        sends.map((s) => s.where),
        name,
      ).toEqual([expect.stringMatching(/service-notifier_task-role.*\/SendBuyerMailAsTheCell$/)]);
      expect(sends[0]!.actions.sort(), name).toEqual(['ses:SendEmail', 'ses:SendRawEmail']);
      expect(
        sends[0]!.resources.some((r) => r.endsWith(`:identity/${sender.domain}`)),
        name,
      ).toBe(true);
      const document = dataSources(json, 'aws_iam_policy_document').find((d) =>
        ((d.body.statement as Block[] | undefined) ?? []).some((s) => s.sid === 'SendBuyerMailAsTheCell'),
      )!;
      const statement = (document.body.statement as Block[]).find((s) => s.sid === 'SendBuyerMailAsTheCell')!;
      expect(statement.condition, name).toEqual([
        { test: 'StringEquals', variable: 'ses:FromAddress', values: [sender.address] },
      ]);

      const [task] = resources(json, 'aws_ecs_task_definition').filter((t) =>
        String(t.body.family).endsWith('-notifier'),
      );
      const [container] = containerDefinitions(task!.body);
      const env = Object.fromEntries(container!.environment.map((e) => [e.name, e.value]));
      expect(env, name).toMatchObject({ MAIL_TRANSPORT: 'ses', MAIL_FROM: sender.from });
      expect(env.SMTP_URL, name).toBeUndefined();
      expect(container!.secrets ?? [], name).toEqual([]);
    }
  });
});
