// samlify, loaded with require() and typed by the few members the test IdP uses. Its own type
// declarations import @xmldom/xmldom's, which say `/// <reference lib="dom" />` and so pull
// TypeScript's DOM library into the whole program: browser globals for a Node project, and type
// errors where Node's Buffer meets DOM's Blob (test/helpers/db.ts). TypeScript does not follow
// require(), so nothing of that enters the program.
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

export interface Endpoint {
  Binding: string;
  Location: string;
}

export interface IdentityProvider {
  /** Parses an AuthnRequest: schema validation, and the signature when the IdP wants it signed. */
  parseLoginRequest(
    sp: ServiceProvider,
    binding: 'redirect' | 'post',
    request: { query?: Record<string, string>; body?: Record<string, string>; octetString?: string },
  ): Promise<{ samlContent: string; extract: { request?: Record<string, string | undefined>; issuer?: unknown } }>;
  getMetadata(): string;
}

/** Opaque here: the test IdP only hands it back to parseLoginRequest. */
export type ServiceProvider = object;

interface Samlify {
  IdentityProvider(settings: {
    entityID: string;
    privateKey: string;
    signingCert: string | string[];
    wantAuthnRequestsSigned: boolean;
    nameIDFormat: string[];
    singleSignOnService: Endpoint[];
  }): IdentityProvider;
  ServiceProvider(settings: { entityID: string; signingCert?: string }): ServiceProvider;
  setSchemaValidator(validator: { validate(xml: string): Promise<unknown> }): void;
  SamlLib: {
    defaultLoginResponseTemplate: { context: string };
    /** fills `{Tag}` placeholders with XML-escaped values; null drops the attribute or element */
    replaceTagsByValue(template: string, tags: Record<string, string | null>): string;
    constructSAMLSignature(options: {
      rawSamlMessage: string;
      privateKey: string;
      /** the certificate's base64 body, put in KeyInfo */
      signingCert: string;
      signatureAlgorithm: string;
      isBase64Output: false;
      referenceTagXPath?: string;
      isMessageSigned?: boolean;
      signatureConfig: { prefix: string; location: { reference: string; action: 'after' } };
    }): string;
  };
  Constants: {
    StatusCode: { Success: string };
    namespace: {
      binding: { redirect: string; post: string };
      format: { emailAddress: string };
      authnContextClassRef: { passwordProtectedTransport: string };
    };
    algorithms: { signature: { RSA_SHA256: string } };
  };
}

export const samlify = require('samlify') as Samlify;

/** Validates a SAML message against the SAML 2.0 schemas: resolves, or rejects with
 *  ERR_EXCEPTION_VALIDATE_XML. xmllint compiled to WebAssembly (offline, no Java), 0.1-0.3 s. */
export const validateSchema = (require('@authenio/samlify-xmllint-wasm') as { validate(xml: string): Promise<true> }).validate;

// samlify refuses to parse anything until a schema validator is set
samlify.setSchemaValidator({ validate: validateSchema });
