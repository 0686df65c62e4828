// A passkey authenticator in the test process, for tests at the HTTP level: it answers the
// options a page gives (registration and sign-in) as a browser with a platform authenticator
// would, as JSON with base64url fields, signing with its own P-256 key. What a real one would
// never do can be asked of it: another origin or RP id, no user verification, a counter that goes
// backwards. The browser tests use Chromium's virtual authenticator instead.
import { createHash, generateKeyPairSync, randomBytes, sign } from 'node:crypto';
import { isoCBOR } from '@simplewebauthn/server/helpers';

const b64url = (b: Uint8Array | Buffer) => Buffer.from(b).toString('base64url');
const sha256 = (b: Uint8Array | string) => createHash('sha256').update(b).digest();

/** The JSON options a page carries in `data-passkey-options` (HTML attribute unescaped). */
export function passkeyOptionsIn(page: string, kind: 'create' | 'get'): Record<string, any> | undefined {
  const m = new RegExp(`data-passkey="${kind}" data-passkey-options="([^"]*)"`).exec(page);
  if (!m) return undefined;
  const json = m[1]!
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
  return JSON.parse(json);
}

export class SoftAuthenticator {
  readonly credentialId = randomBytes(16);
  private readonly keys = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  /** the signature counter: increased before each assertion (set it to go backwards) */
  counter = 0;
  /** the user handle of the registered credential */
  private userHandle: Buffer | undefined;

  constructor(
    readonly where: { origin: string; rpId?: string },
    /** whether it verifies the user (PIN, biometrics): the UV flag */
    public userVerified = true,
  ) {}

  get id(): string {
    return b64url(this.credentialId);
  }

  private rpId(): string {
    return this.where.rpId ?? new URL(this.where.origin).hostname;
  }

  private authData(flagsExtra: number, attested?: Buffer): Buffer {
    const flags = 0x01 | (this.userVerified ? 0x04 : 0) | flagsExtra;
    const count = Buffer.alloc(4);
    count.writeUInt32BE(this.counter);
    return Buffer.concat([sha256(this.rpId()), Buffer.from([flags]), count, ...(attested ? [attested] : [])]);
  }

  private coseKey(): Uint8Array {
    const jwk = this.keys.publicKey.export({ format: 'jwk' });
    return isoCBOR.encode(
      new Map<number, number | Uint8Array>([
        [1, 2],
        [3, -7],
        [-1, 1],
        [-2, Buffer.from(jwk.x!, 'base64url')],
        [-3, Buffer.from(jwk.y!, 'base64url')],
      ]),
    );
  }

  /** The answer to registration options (navigator.credentials.create). */
  register(options: Record<string, any>, origin = this.where.origin): string {
    this.userHandle = Buffer.from(options.user.id, 'base64url');
    const idLength = Buffer.alloc(2);
    idLength.writeUInt16BE(this.credentialId.length);
    const attested = Buffer.concat([Buffer.alloc(16), idLength, this.credentialId, Buffer.from(this.coseKey())]);
    const authData = this.authData(0x40, attested);
    const clientDataJSON = Buffer.from(JSON.stringify({ type: 'webauthn.create', challenge: options.challenge, origin, crossOrigin: false }));
    const statement: Map<string, string | Uint8Array | Map<string, number>> = new Map();
    statement.set('fmt', 'none');
    statement.set('attStmt', new Map<string, number>());
    statement.set('authData', new Uint8Array(authData));
    const attestationObject = isoCBOR.encode(statement);
    return JSON.stringify({
      id: this.id,
      rawId: this.id,
      type: 'public-key',
      response: { clientDataJSON: b64url(clientDataJSON), attestationObject: b64url(attestationObject), transports: ['internal'] },
      clientExtensionResults: {},
      authenticatorAttachment: 'platform',
    });
  }

  /** The answer to sign-in options (navigator.credentials.get); the counter goes up by one first
   *  unless `keepCounter`. */
  assert(options: Record<string, any>, opts: { origin?: string; keepCounter?: boolean } = {}): string {
    if (!opts.keepCounter) this.counter += 1;
    const authData = this.authData(0);
    const clientDataJSON = Buffer.from(
      JSON.stringify({ type: 'webauthn.get', challenge: options.challenge, origin: opts.origin ?? this.where.origin, crossOrigin: false }),
    );
    const signature = sign('sha256', Buffer.concat([authData, sha256(clientDataJSON)]), this.keys.privateKey);
    return JSON.stringify({
      id: this.id,
      rawId: this.id,
      type: 'public-key',
      response: {
        clientDataJSON: b64url(clientDataJSON),
        authenticatorData: b64url(authData),
        signature: b64url(signature),
        ...(this.userHandle ? { userHandle: b64url(this.userHandle) } : {}),
      },
      clientExtensionResults: {},
      authenticatorAttachment: 'platform',
    });
  }
}
