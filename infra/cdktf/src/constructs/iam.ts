import { DataAwsIamPolicyDocument } from '@cdktf/provider-aws/lib/data-aws-iam-policy-document';
import { IamRole } from '@cdktf/provider-aws/lib/iam-role';
import { IamRolePolicy } from '@cdktf/provider-aws/lib/iam-role-policy';
import { IamRolePolicyAttachment } from '@cdktf/provider-aws/lib/iam-role-policy-attachment';
import { Construct } from 'constructs';
import type { AwsContext } from '../aws-context';

export interface Condition {
  readonly test: string;
  readonly variable: string;
  readonly values: string[];
}

export interface Statement {
  readonly sid?: string;
  readonly actions: string[];
  readonly resources: string[];
  readonly conditions?: Condition[];
}

export interface ServiceRoleProps {
  readonly ctx: AwsContext;
  readonly name: string;
  /** The AWS service that assumes the role, e.g. ecs-tasks.amazonaws.com. */
  readonly service: string;
  /** Narrows who may pass the role to the service (confused-deputy protection). */
  readonly trustConditions?: Condition[];
  readonly statements: Statement[];
  /** AWS-managed policies, only where AWS documents one as the way to grant a service its access. */
  readonly managedPolicies?: string[];
}

/**
 * A role for one AWS service with one inline policy. Statements are rendered with the
 * aws_iam_policy_document data source (structured, so the tests can read every action and resource).
 */
export class ServiceRole extends Construct {
  readonly role: IamRole;

  constructor(scope: Construct, id: string, props: ServiceRoleProps) {
    super(scope, id);
    const { ctx } = props;
    const trust = new DataAwsIamPolicyDocument(this, 'trust', {
      provider: ctx.provider,
      statement: [
        {
          actions: ['sts:AssumeRole'],
          principals: [{ type: 'Service', identifiers: [props.service] }],
          condition: props.trustConditions?.map((c) => ({ ...c })),
        },
      ],
    });
    this.role = new IamRole(this, 'role', { provider: ctx.provider, name: props.name, assumeRolePolicy: trust.json });

    if (props.statements.length > 0) {
      const policy = new DataAwsIamPolicyDocument(this, 'policy', {
        provider: ctx.provider,
        statement: props.statements.map((s) => ({
          sid: s.sid,
          effect: 'Allow',
          actions: s.actions,
          resources: s.resources,
          condition: s.conditions?.map((c) => ({ ...c })),
        })),
      });
      new IamRolePolicy(this, 'inline', {
        provider: ctx.provider,
        role: this.role.name,
        name: props.name,
        policy: policy.json,
      });
    }

    props.managedPolicies?.forEach((policyName, i) => {
      new IamRolePolicyAttachment(this, `managed-${i}`, {
        provider: ctx.provider,
        role: this.role.name,
        policyArn: `arn:${ctx.partition}:iam::aws:policy/${policyName}`,
      });
    });
  }
}

/** Only this account's resources of the service may assume the role. */
export function sameAccountTrust(ctx: AwsContext, sourceArnPattern?: string): Condition[] {
  const conditions: Condition[] = [{ test: 'StringEquals', variable: 'aws:SourceAccount', values: [ctx.account] }];
  if (sourceArnPattern) conditions.push({ test: 'ArnLike', variable: 'aws:SourceArn', values: [sourceArnPattern] });
  return conditions;
}

/** PutMetricData cannot be scoped to a resource; the namespace condition keeps each stack to its own. */
export function putMetricData(namespace: string): Statement {
  return {
    sid: 'PublishOwnMetrics',
    actions: ['cloudwatch:PutMetricData'],
    resources: ['*'],
    conditions: [{ test: 'StringEquals', variable: 'cloudwatch:namespace', values: [namespace] }],
  };
}
