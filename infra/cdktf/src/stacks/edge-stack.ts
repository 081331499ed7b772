import { CloudfrontDistribution } from '@cdktf/provider-aws/lib/cloudfront-distribution';
import { CloudfrontVpcOrigin } from '@cdktf/provider-aws/lib/cloudfront-vpc-origin';
import { CloudwatchLogGroup } from '@cdktf/provider-aws/lib/cloudwatch-log-group';
import { Wafv2WebAcl, type Wafv2WebAclRule } from '@cdktf/provider-aws/lib/wafv2-web-acl';
import { Wafv2WebAclLoggingConfiguration } from '@cdktf/provider-aws/lib/wafv2-web-acl-logging-configuration';
import { TerraformOutput } from 'cdktf';
import type { Construct } from 'constructs';
import { EDGE_REGION, type Manifest } from '../manifest';
import { StackName } from '../naming';
import type { ControlPlaneStack } from './control-plane-stack';
import { OnsaleStack } from './onsale-stack';

// AWS-managed CloudFront policies (stable ids, documented by AWS).
const CACHING_DISABLED = '4135ea2d-6df8-44a3-9df3-4b5a84be39ad';
const ORIGIN_REQUEST_ALL_VIEWER = '216adef6-5c7f-47e4-b989-5492eafa07d3';
const RESPONSE_HEADERS_SECURITY = '67f7725c-6f97-4210-82d7-5512b31e9d03';

const ROUTER_ORIGIN = 'router';

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

function rateLimit(priority: number, name: string, limit: number, onlyMethod?: string): Wafv2WebAclRule {
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
              byte_match_statement: {
                field_to_match: { method: {} },
                positional_constraint: 'EXACTLY',
                search_string: onlyMethod,
                text_transformation: [{ priority: 0, type: 'NONE' }],
              },
            }
          : undefined,
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

    const webAcl = new Wafv2WebAcl(this, 'waf', {
      provider: global.provider,
      name: 'onsale-edge',
      description: 'Buyer and promoter traffic in front of the router',
      scope: 'CLOUDFRONT',
      defaultAction: { allow: {} },
      rule: [
        managedRuleGroup(0, 'AWSManagedRulesAmazonIpReputationList'),
        rateLimit(1, 'rate-per-ip', edge.rateLimitPerIp),
        rateLimit(2, 'post-rate-per-ip', edge.writeRateLimitPerIp, 'POST'),
        // Stripe's signed webhook bodies can exceed the rule set's 8 KB body limit; the signature check
        // in the cell is the real gate for them.
        managedRuleGroup(3, 'AWSManagedRulesCommonRuleSet', ['SizeRestrictions_BODY']),
        managedRuleGroup(4, 'AWSManagedRulesKnownBadInputsRuleSet'),
      ],
      visibilityConfig: visibility('onsale-edge'),
    });

    // WAF requires this name prefix for a log group destination.
    const wafLogs = new CloudwatchLogGroup(this, 'waf-logs', {
      provider: global.provider,
      name: 'aws-waf-logs-onsale-edge',
      retentionInDays: 90,
    });
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
      restrictions: { geoRestriction: { restrictionType: 'none' } },
      viewerCertificate: {
        acmCertificateArn: edge.certificateArn,
        sslSupportMethod: 'sni-only',
        minimumProtocolVersion: 'TLSv1.2_2021',
      },
    });

    new TerraformOutput(this, 'distribution_domain', { value: distribution.domainName });
  }
}
