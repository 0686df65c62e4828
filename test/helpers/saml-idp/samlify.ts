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

const xmllint = (require('@authenio/samlify-xmllint-wasm') as { validate(xml: string): Promise<true> }).validate;

/** xs:ID (an NCName) and xs:dateTime, as the schemas check them */
const NCNAME = /^[A-Za-z_][\w.-]*$/;
const DATE_TIME = /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])T([01]\d|2[0-3]):[0-5]\d:[0-5]\d(\.\d+)?(Z|[+-]\d{2}:\d{2})?$/;
/** the shapes found valid, and those found invalid (with their error), by the text of the shape */
const checked = new Map<string, Promise<true>>();
const MAX_CHECKED = 500;

/**
 * Validates a SAML message against the SAML 2.0 schemas: resolves, or rejects with
 * ERR_EXCEPTION_VALIDATE_XML. xmllint compiled to WebAssembly (offline, no Java), 0.1-0.3 s of
 * CPU in a worker thread each time. The AuthnRequests of one service provider differ only in
 * their `ID` and `IssueInstant`, so a message is checked once per shape: those two values are
 * checked here against their schema types, then replaced by fixed valid ones, and xmllint checks
 * the rest once (a message whose values do not fit keeps them, and xmllint sees it whole).
 */
export function validateSchema(xml: string): Promise<true> {
  const shape = xml
    .replace(/(<(?:\w+:)?AuthnRequest\b[^>]*?\sID=")([^"]*)"/, (m, head: string, id: string) => (NCNAME.test(id) ? `${head}_shape"` : m))
    .replace(/(<(?:\w+:)?AuthnRequest\b[^>]*?\sIssueInstant=")([^"]*)"/, (m, head: string, at: string) =>
      DATE_TIME.test(at) ? `${head}2000-01-01T00:00:00Z"` : m,
    );
  let result = checked.get(shape);
  if (!result) {
    result = xmllint(shape);
    if (checked.size >= MAX_CHECKED) checked.clear();
    checked.set(shape, result);
  }
  return result;
}

// samlify refuses to parse anything until a schema validator is set
samlify.setSchemaValidator({ validate: validateSchema });
