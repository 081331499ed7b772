import type { PromoterRole } from '@onsale/contracts';
import { DomainError } from '@onsale/contracts';

export interface PromoterActor {
  kind: 'promoter';
  sub: string;
  tenantId: string;
  role: PromoterRole;
}
export interface OperatorActor {
  kind: 'operator';
  sub: string;
}
export interface BuyerActor {
  kind: 'buyer';
  sub: string;
}

const rank: Record<PromoterRole, number> = { viewer: 0, manager: 1, owner: 2 };

export function assertRole(actor: PromoterActor, min: PromoterRole): void {
  if (rank[actor.role] < rank[min])
    throw new DomainError('forbidden', `role ${actor.role} cannot do this (needs ${min})`);
}

export const actorName = (a: PromoterActor | OperatorActor) => `${a.kind}:${a.sub}`;
