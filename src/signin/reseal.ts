// After GATEHOUSE_ENCRYPTION_KEY is rotated (a new key first, the old one still listed), start-up
// seals every TOTP secret again under the new key, as it does the signing keys, so that the old
// key can then be dropped. Each row is replaced only if it is still what was read: several
// processes starting together re-seal each secret once.
import type { SealedBox } from '../crypto/sealed-box.js';
import { TOTP_CONTEXT } from './model.js';
import type { SignInStore } from './store.js';

export async function resealTotpSecrets(
  store: { signIn: Pick<SignInStore, 'listSealedTotpSecrets' | 'replaceSealedTotpSecret'> },
  box: SealedBox,
): Promise<number> {
  let resealed = 0;
  for (const { userId, sealed } of await store.signIn.listSealedTotpSecrets(box.sealingKeyId)) {
    const again = box.reseal(sealed, TOTP_CONTEXT);
    if (again !== undefined && (await store.signIn.replaceSealedTotpSecret(userId, sealed, again))) resealed++;
  }
  return resealed;
}
