import { CloudfrontCachePolicy } from '@cdktf/provider-aws/lib/cloudfront-cache-policy';
import { CloudfrontDistribution } from '@cdktf/provider-aws/lib/cloudfront-distribution';
import { CloudfrontVpcOrigin } from '@cdktf/provider-aws/lib/cloudfront-vpc-origin';
import { CloudwatchLogGroup } from '@cdktf/provider-aws/lib/cloudwatch-log-group';
import { Wafv2IpSet } from '@cdktf/provider-aws/lib/wafv2-ip-set';
import { Wafv2WebAcl, type Wafv2WebAclRule } from '@cdktf/provider-aws/lib/wafv2-web-acl';
import { Wafv2WebAclLoggingConfiguration } from '@cdktf/provider-aws/lib/wafv2-web-acl-logging-configuration';
import { TerraformOutput, type TerraformProvider } from 'cdktf';
import type { Construct } from 'constructs';
import { checkovSkip, SkipReason } from '../checkov';
import { EDGE_REGION, type Manifest } from '../manifest';
import { StackName } from '../naming';
import { STRIPE_WEBHOOK_IPS, STRIPE_WEBHOOK_PATH_REGEX } from '../stripe';
import type { ControlPlaneStack } from './control-plane-stack';
import { OnsaleStack } from './onsale-stack';

// AWS-managed CloudFront policies (stable ids, documented by AWS).
const CACHING_DISABLED = '4135ea2d-6df8-44a3-9df3-4b5a84be39ad';
const ORIGIN_REQUEST_ALL_VIEWER = '216adef6-5c7f-47e4-b989-5492eafa07d3';
const RESPONSE_HEADERS_SECURITY = '67f7725c-6f97-4210-82d7-5512b31e9d03';

const ROUTER_ORIGIN = 'router';
const ROUTER_METRICS_PATH = '/metrics';

function visibility(metricName: string) {
  return { cloudwatchMetricsEnabled: true, sampledRequestsEnabled: true, metricName };
}

function managedRuleGroup(
  priority: number,
  name: string,
  countInsteadOfBlock: readonly string[] = [],
): Wafv2WebAclRule {
  return {
    name,
    priority,
    overrideAction: { none: {} },
    // `statement` is untyped in the provider bindings, so it is written in Terraform's own field names.
    statement: {
      managed_rule_group_statement: {
        vendor_name: 'AWS',
        name,
        rule_action_override: countInsteadOfBlock.map((rule) => ({ name: rule, action_to_use: { count: {} } })),
      },
    },
    visibilityConfig: visibility(name),
  };
}

/**
 * A Stripe webhook delivery: the router's webhook path for any cell, from one of Stripe's documented source
 * addresses. Stripe retries a throttled delivery with backoff, so a 429 at the edge during an onsale would
 * delay confirmations for hours; the signature check in the cell stays the real gate.
 */
function stripeWebhookStatement(ipSetArn: string) {
  return {
    and_statement: {
      statement: [
        { ip_set_reference_statement: { arn: ipSetArn } },
        {
          regex_match_statement: {
            regex_string: STRIPE_WEBHOOK_PATH_REGEX,
            field_to_match: { uri_path: {} },
            text_transformation: [{ priority: 0, type: 'NONE' }],
          },
        },
      ],
    },
  };
}

/**
 * The router's /metrics is for the Prometheus collector beside it in its task (metrics-sidecar.ts), which reads it
 * on the router's health port over the task's loopback; the port the edge reaches serves no /metrics (a 404). The
 * edge answers the path 404 itself as well, before it reaches the router, so no later change to the router's
 * public paths can publish it. The path is URL-decoded and lowercased first, so no spelling of it gets through.
 */
function operatorPathsOnlyInside(priority: number): Wafv2WebAclRule {
  return {
    name: 'operator-paths',
    priority,
    action: { block: { customResponse: { responseCode: 404 } } },
    statement: {
      byte_match_statement: {
        field_to_match: { uri_path: {} },
        positional_constraint: 'EXACTLY',
        search_string: ROUTER_METRICS_PATH,
        text_transformation: [
          { priority: 0, type: 'URL_DECODE' },
          { priority: 1, type: 'LOWERCASE' },
        ],
      },
    },
    visibilityConfig: visibility('operator-paths'),
  };
}

/** A per-IP rate limit that never counts Stripe's webhook deliveries (and, if given, only one method). */
function rateLimit(
  priority: number,
  name: string,
  limit: number,
  exempt: Record<string, unknown>,
  onlyMethod?: string,
): Wafv2WebAclRule {
  const notExempt = { not_statement: { statement: [exempt] } };
  return {
    name,
    priority,
    action: { block: { customResponse: { responseCode: 429 } } },
    statement: {
      rate_based_statement: {
        limit,
        aggregate_key_type: 'IP',
        evaluation_window_sec: 300,
        scope_down_statement: onlyMethod
          ? {
              and_statement: {
                statement: [
                  {
                    byte_match_statement: {
                      field_to_match: { method: {} },
                      positional_constraint: 'EXACTLY',
                      search_string: onlyMethod,
                      text_transformation: [{ priority: 0, type: 'NONE' }],
                    },
                  },
                  notExempt,
                ],
              },
            }
          : notExempt,
      },
    },
    visibilityConfig: visibility(name),
  };
}

/**
 * CloudFront and WAF in front of the router. CloudFront reaches the router's internal load balancer
 * through a VPC origin, so the router has no public address at all.
 */
export class EdgeStack extends OnsaleStack {
  constructor(scope: Construct, manifest: Manifest, controlPlane: ControlPlaneStack) {
    super(scope, StackName.edge, manifest.controlPlane.region, { 'onsale:plane': 'edge' });
    const { edge } = manifest;
    // A web ACL for CloudFront (scope CLOUDFRONT) can only be created in us-east-1.
    const global = this.regionContext('us-east-1', EDGE_REGION);

    const stripeIps = new Wafv2IpSet(this, 'stripe-webhook-ips', {
      provider: global.provider,
      name: 'onsale-stripe-webhooks',
      description: 'Stripe webhook source addresses (docs.stripe.com/ips#webhook-notifications)',
      scope: 'CLOUDFRONT',
      ipAddressVersion: 'IPV4',
      addresses: STRIPE_WEBHOOK_IPS.map((ip) => `${ip}/32`),
    });
    const stripeWebhook = stripeWebhookStatement(stripeIps.arn);

    const webAcl = new Wafv2WebAcl(this, 'waf', {
      provider: global.provider,
      name: 'onsale-edge',
      description: 'Buyer and promoter traffic in front of the router',
      scope: 'CLOUDFRONT',
      defaultAction: { allow: {} },
      rule: [
        operatorPathsOnlyInside(0),
        managedRuleGroup(1, 'AWSManagedRulesAmazonIpReputationList'),
        rateLimit(2, 'rate-per-ip', edge.rateLimitPerIp, stripeWebhook),
        rateLimit(3, 'post-rate-per-ip', edge.writeRateLimitPerIp, stripeWebhook, 'POST'),
        // Stripe's signed webhook bodies can exceed the rule set's 8 KB body limit; the signature check
        // in the cell is the real gate for them.
        managedRuleGroup(4, 'AWSManagedRulesCommonRuleSet', ['SizeRestrictions_BODY']),
        managedRuleGroup(5, 'AWSManagedRulesKnownBadInputsRuleSet'),
      ],
      visibilityConfig: visibility('onsale-edge'),
    });

    // WAF requires this name prefix for a log group destination.
    const wafLogs = new CloudwatchLogGroup(this, 'waf-logs', {
      provider: global.provider,
      name: 'aws-waf-logs-onsale-edge',
      retentionInDays: 90,
    });
    checkovSkip(wafLogs, { CKV_AWS_158: SkipReason.logGroupKms, CKV_AWS_338: SkipReason.logRetention });
    new Wafv2WebAclLoggingConfiguration(this, 'waf-logging', {
      provider: global.provider,
      resourceArn: webAcl.arn,
      logDestinationConfigs: [wafLogs.arn],
      // Bearer and admission tokens never reach a log.
      redactedFields: [{ singleHeader: { name: 'authorization' } }, { singleHeader: { name: 'cookie' } }],
    });

    const router = controlPlane.routerLoadBalancer.lb;
    const origin = new CloudfrontVpcOrigin(this, 'router-origin', {
      vpcOriginEndpointConfig: [
        {
          name: 'onsale-router',
          arn: router.arn,
          httpPort: 80,
          httpsPort: 443,
          originProtocolPolicy: 'https-only',
          originSslProtocols: [{ items: ['TLSv1.2'], quantity: 1 }],
        },
      ],
    });

    // The availability documents every seat map polls: public, the same for every buyer, and kept by the edge as
    // long as the cell's Cache-Control says (max-age=1, stale-while-revalidate=2), never longer, so a stadium's
    // polls reach the cells once per second per edge location instead of once per buyer.
    const availabilityCache = publicDocumentCache(this, global.provider, 'availability', 5, 'Seat availability');

    // The public catalog (an event's page and its seat map): the same for every buyer, kept by the edge as long as
    // the control plane's Cache-Control says (the page 10 s, the seat map 5 min, which changes only on an upload),
    // never past an hour, so an onsale's page views reach the control plane once per period per edge location.
    const catalogCache = publicDocumentCache(this, global.provider, 'catalog', 3600, 'Event pages and seat maps');

    const distribution = new CloudfrontDistribution(this, 'distribution', {
      enabled: true,
      comment: 'onsale buyer and promoter entry point',
      aliases: edge.domainNames,
      httpVersion: 'http2and3',
      isIpv6Enabled: true,
      priceClass: 'PriceClass_All',
      webAclId: webAcl.arn,
      origin: [
        {
          originId: ROUTER_ORIGIN,
          domainName: router.dnsName,
          vpcOriginConfig: { vpcOriginId: origin.id, originReadTimeout: 30, originKeepaliveTimeout: 5 },
        },
      ],
      defaultCacheBehavior: {
        targetOriginId: ROUTER_ORIGIN,
        viewerProtocolPolicy: 'redirect-to-https',
        allowedMethods: ['GET', 'HEAD', 'OPTIONS', 'PUT', 'POST', 'PATCH', 'DELETE'],
        cachedMethods: ['GET', 'HEAD'],
        // The router decides what is cacheable (seat maps, briefly); the edge forwards everything, including
        // the viewer's Host, which the router's certificate is issued for.
        cachePolicyId: CACHING_DISABLED,
        originRequestPolicyId: ORIGIN_REQUEST_ALL_VIEWER,
        responseHeadersPolicyId: RESPONSE_HEADERS_SECURITY,
        compress: true,
      },
      orderedCacheBehavior: [
        {
          pathPattern: '/events/*/availability*',
          targetOriginId: ROUTER_ORIGIN,
          viewerProtocolPolicy: 'redirect-to-https',
          allowedMethods: ['GET', 'HEAD'],
          cachedMethods: ['GET', 'HEAD'],
          cachePolicyId: availabilityCache.id,
          responseHeadersPolicyId: RESPONSE_HEADERS_SECURITY,
          compress: true,
        },
        {
          pathPattern: '/events/*/catalog*',
          targetOriginId: ROUTER_ORIGIN,
          viewerProtocolPolicy: 'redirect-to-https',
          allowedMethods: ['GET', 'HEAD'],
          cachedMethods: ['GET', 'HEAD'],
          cachePolicyId: catalogCache.id,
          responseHeadersPolicyId: RESPONSE_HEADERS_SECURITY,
          compress: true,
        },
      ],
      restrictions: { geoRestriction: { restrictionType: 'none' } },
      viewerCertificate: {
        acmCertificateArn: edge.certificateArn,
        sslSupportMethod: 'sni-only',
        minimumProtocolVersion: 'TLSv1.2_2021',
      },
    });
    checkovSkip(distribution, {
      CKV_AWS_86:
        'the web ACL logs every request (authorization and cookie headers redacted); CloudFront standard logs need an ACL-enabled bucket',
      CKV_AWS_374: 'tickets are sold worldwide; where an event may sell is decided per event by the application',
      CKV_AWS_310:
        'one origin: the router ALB spans three AZs, and there is no second control-plane region to fail over to',
      CKV_AWS_305: 'no static root object: the router answers every path, including /',
      CKV2_AWS_32: 'the AWS-managed SecurityHeadersPolicy is attached by id; checkov only recognises a policy resource',
      CKV2_AWS_47:
        'AWSManagedRulesKnownBadInputsRuleSet (which holds the Log4JRCE rules) is in the web ACL; checkov does not read the statement as written',
    });

    new TerraformOutput(this, 'distribution_domain', { value: distribution.domainName });
  }
}

/**
 * A cache policy for a public document every buyer gets alike: the origin's Cache-Control decides, within 0 and
 * `maxTtl` seconds; no cookie, header or query string in the key.
 */
function publicDocumentCache(
  scope: Construct,
  provider: TerraformProvider | undefined,
  name: string,
  maxTtl: number,
  what: string,
) {
  return new CloudfrontCachePolicy(scope, `${name}-cache`, {
    provider,
    name: `onsale-${name}`,
    comment: `${what}: the origin's Cache-Control decides, within 0-${maxTtl} s; no cookie, header or query in the key`,
    minTtl: 0,
    defaultTtl: 0,
    maxTtl,
    parametersInCacheKeyAndForwardedToOrigin: {
      cookiesConfig: { cookieBehavior: 'none' },
      headersConfig: { headerBehavior: 'none' },
      queryStringsConfig: { queryStringBehavior: 'none' },
      enableAcceptEncodingGzip: true,
      enableAcceptEncodingBrotli: true,
    },
  });
}
