import { ref, TerraformElement, TerraformStack, Token } from 'cdktf';
import type { Construct } from 'constructs';

const TYPE = 'aws_secretsmanager_random_password';

/**
 * Terraform's `ephemeral "aws_secretsmanager_random_password"` block, which cdktf 0.21 has no class for.
 * Its value exists only while Terraform runs, so fed into write-only (`*_wo`) arguments it never lands in
 * the plan or the state. Needs Terraform or OpenTofu 1.11+.
 */
export class EphemeralRandomPassword extends TerraformElement {
  constructor(
    scope: Construct,
    id: string,
    private readonly length: number,
  ) {
    super(scope, id, `ephemeral.${TYPE}`);
  }

  /** A reference token, so it stays an expression inside other expressions such as jsonencode(). */
  get value(): string {
    return Token.asString(ref(`ephemeral.${TYPE}.${this.friendlyUniqueId}.random_password`, TerraformStack.of(this)));
  }

  override toTerraform(): Record<string, unknown> {
    return {
      ephemeral: {
        [TYPE]: {
          // Punctuation is excluded because RDS refuses some of it and connection URLs mangle the rest.
          [this.friendlyUniqueId]: { password_length: this.length, exclude_punctuation: true },
        },
      },
    };
  }
}
