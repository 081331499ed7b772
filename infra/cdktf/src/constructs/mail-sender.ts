import { Sesv2ConfigurationSet } from '@cdktf/provider-aws/lib/sesv2-configuration-set';
import { Sesv2EmailIdentity } from '@cdktf/provider-aws/lib/sesv2-email-identity';
import { Construct } from 'constructs';
import { type AwsContext, arn } from '../aws-context';
import type { CellMailSender } from '../manifest';
import type { Statement } from './iam';

export interface MailSenderProps {
  readonly ctx: AwsContext;
  readonly sender: CellMailSender;
}

/**
 * A cell's way to mail its buyers in one region: an SES domain identity of its own (Easy DKIM; the DKIM
 * CNAMEs in `dkimTokens` are published in the mail domain's DNS) with a configuration set that requires TLS to
 * the receiving server and suppresses addresses that bounced or complained. The notifier's task role may send
 * through it as the cell's From address only.
 */
export class MailSender extends Construct {
  readonly identity: Sesv2EmailIdentity;
  readonly configurationSet: Sesv2ConfigurationSet;
  private readonly props: MailSenderProps;

  constructor(scope: Construct, id: string, props: MailSenderProps) {
    super(scope, id);
    this.props = props;
    const { ctx, sender } = props;
    this.configurationSet = new Sesv2ConfigurationSet(this, 'configuration-set', {
      provider: ctx.provider,
      configurationSetName: sender.domain.replaceAll('.', '-'),
      deliveryOptions: { tlsPolicy: 'REQUIRE' },
      reputationOptions: { reputationMetricsEnabled: true },
      suppressionOptions: { suppressedReasons: ['BOUNCE', 'COMPLAINT'] },
    });
    this.identity = new Sesv2EmailIdentity(this, 'identity', {
      provider: ctx.provider,
      emailIdentity: sender.domain,
      configurationSetName: this.configurationSet.configurationSetName,
    });
  }

  /** The DKIM tokens to publish as `<token>._domainkey.<domain>` CNAMEs to `<token>.dkim.amazonses.com`. */
  get dkimTokens(): string[] {
    return this.identity.dkimSigningAttributes.tokens;
  }

  /** SES's SendEmail authorizes against the identity and the configuration set it applies; only as the cell's From. */
  sendStatement(): Statement {
    const { ctx, sender } = this.props;
    return {
      sid: 'SendBuyerMailAsTheCell',
      actions: ['ses:SendEmail', 'ses:SendRawEmail'],
      resources: [
        arn(ctx, 'ses', `identity/${sender.domain}`),
        arn(ctx, 'ses', `configuration-set/${this.configurationSet.configurationSetName}`),
      ],
      conditions: [{ test: 'StringEquals', variable: 'ses:FromAddress', values: [sender.address] }],
    };
  }
}
