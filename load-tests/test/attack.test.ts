import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ATTACK_PLATFORM_ENV, type AttackOptions, runAttack } from '../attack/attack';
import { type LoadPlatform, startLoadPlatform } from '../local/platform';

/** The scripted attack (pnpm attack) at 20 bots and 20 buyers: what the door's defences refuse, and what they let through when off. */
let platform: LoadPlatform;

beforeAll(async () => {
  platform = await startLoadPlatform({ env: ATTACK_PLATFORM_ENV });
});

afterAll(async () => {
  await platform?.stop();
});

const tiny: Omit<AttackOptions, 'defended'> = {
  buyers: 20,
  bots: 20,
  // Two bots an account: few enough that the per-buyer rate limit does not answer before the door does.
  botAccounts: 10,
  botIps: 4,
  powDifficulty: 8,
  releaseRate: 50,
  arrivalSeconds: 2,
  pollMs: 500,
  maxSeconds: 60,
};

describe('the scripted attack, 20 bots against 20 buyers', () => {
  it('lets no bot hold with a copied token or another client’s place on a shared account while the door is on', async () => {
    const r = await runAttack(platform, { ...tiny, defended: true });
    expect(r.bots.holdsSucceeded.shared_token).toBe(0);
    expect(r.bots.holdsSucceeded.shared_account).toBe(0);
    expect(r.bots.refusals['token_copier hold 403 admission_invalid/dpop_key_mismatch']).toBe(
      r.bots.byKind.token_copier,
    );
    expect(r.bots.refusals['no_pow join 403 proof_of_work_invalid/missing']).toBe(r.bots.byKind.no_pow);
    expect(r.bots.refusals['spent_challenge rejoin 403 proof_of_work_invalid/spent']).toBe(
      r.bots.byKind.spent_challenge,
    );
    expect(r.buyers.admitted).toBe(tiny.buyers);
    expect(r.botReport).toMatchObject({ challenges: { solved: expect.any(Number) } });
  });

  it('lets copied tokens and shared accounts hold when the door is off', async () => {
    const r = await runAttack(platform, { ...tiny, defended: false });
    expect(r.bots.holdsSucceeded.shared_token).toBeGreaterThan(0);
    expect(r.bots.refusals['no_pow join 403 proof_of_work_invalid/missing']).toBeUndefined();
    expect(r.buyers.admitted).toBe(tiny.buyers);
  });
});
