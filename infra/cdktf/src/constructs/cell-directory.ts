import { SsmParameter } from '@cdktf/provider-aws/lib/ssm-parameter';
import { Construct } from 'constructs';
import type { AwsContext } from '../aws-context';
import { checkovSkip } from '../checkov';

export interface CellDirectoryEntryProps {
  /** A context aliased to the control plane's region, where the directory lives. */
  readonly ctx: AwsContext;
  readonly path: string;
  readonly values: Record<string, string>;
}

/** Publishes a cell's endpoints where the control plane discovers them (see CELL_DIRECTORY_PATH). */
export class CellDirectoryEntry extends Construct {
  constructor(scope: Construct, id: string, props: CellDirectoryEntryProps) {
    super(scope, id);
    for (const [key, value] of Object.entries(props.values)) {
      const parameter = new SsmParameter(this, key, {
        provider: props.ctx.provider,
        name: `${props.path}/${key}`,
        type: 'String',
        value,
      });
      checkovSkip(parameter, {
        CKV2_AWS_34:
          'a cell directory entry (region, load balancer and broker names, topic) is not secret; the router reads it as plain text',
      });
    }
  }
}
