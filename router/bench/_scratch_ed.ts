import { generateKeyPairSync, sign, verify, webcrypto } from 'node:crypto';

const { privateKey, publicKey } = generateKeyPairSync('ed25519');
const data = Buffer.from('x'.repeat(300));
const sig = sign(null, data, privateKey);
let t = performance.now();
for (let i = 0; i < 5000; i++) verify(null, data, publicKey, sig);
console.log('node sync verify us', ((performance.now() - t) / 5000) * 1000);
const key = await webcrypto.subtle.importKey('jwk', publicKey.export({ format: 'jwk' }), { name: 'Ed25519' }, false, [
  'verify',
]);
t = performance.now();
for (let i = 0; i < 5000; i++) await webcrypto.subtle.verify('Ed25519', key, sig, data);
console.log('webcrypto verify us', ((performance.now() - t) / 5000) * 1000);
