import { createDeviceKey, type DeviceKey, dpopProof } from '@onsale/contracts/device-proof';

/**
 * A buyer's device as the tests drive one: the same WebCrypto code a buyer's page runs (contracts/src/device-proof.ts).
 * `headers` gives what a request carrying a device-bound admission token needs: the token and a fresh DPoP proof.
 */
export async function testDevice() {
  const key: DeviceKey = await createDeviceKey();
  return {
    key,
    jkt: key.jkt,
    proof: (method: string, url: string, accessToken: string, o: { iat?: number; jti?: string } = {}) =>
      dpopProof(key, { method, url, accessToken, ...o }),
    async headers(method: string, url: string, accessToken: string): Promise<Record<string, string>> {
      return { 'x-admission-token': accessToken, dpop: await dpopProof(key, { method, url, accessToken }) };
    },
  };
}
export type TestDevice = Awaited<ReturnType<typeof testDevice>>;
