import { SsmParameter } from '@cdktf/provider-aws/lib/ssm-parameter';
import { Construct } from 'constructs';
import type { AwsContext } from '../aws-context';

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
      new SsmParameter(this, key, {
        provider: props.ctx.provider,
        name: `${props.path}/${key}`,
        type: 'String',
        value,
      });
    }
  }
}
