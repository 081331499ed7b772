import { ApplicationAutoScalingClient } from '@aws-sdk/client-application-auto-scaling';
import type { ScalingClients } from './sync';

/**
 * One Application Auto Scaling client per region, made on first use, with the SDK's own credentials chain (the
 * task role) and endpoint (AWS_ENDPOINT_URL_APPLICATION_AUTO_SCALING points it at a local emulator).
 */
export function scalingClients(
  options: Omit<ConstructorParameters<typeof ApplicationAutoScalingClient>[0], 'region'> = {},
): ScalingClients {
  const byRegion = new Map<string, ApplicationAutoScalingClient>();
  return (region) => {
    let client = byRegion.get(region);
    if (!client) {
      client = new ApplicationAutoScalingClient({ maxAttempts: 3, ...options, region });
      byRegion.set(region, client);
    }
    return client;
  };
}
