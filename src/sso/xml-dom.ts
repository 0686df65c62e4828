// @xmldom/xmldom (0.8, the line node-saml uses), made strict, loaded without its type
// declarations: they begin with `/// <reference lib="dom" />`, which would add the browser's DOM
// library to the whole program (and break Node-typed code elsewhere, e.g. Buffer as a BlobPart).
// The few members the SAML modules read are declared here instead.
//
// xmldom 0.8 reports most malformations to the error handler, but not all: an end tag that
// matches no open element is skipped and elements left open at the end are closed silently
// ('<a><b></a>' parses). Its own DOM builder is wrapped to count elements opened and closed, so
// such a document is refused like any other malformation. It also counts root elements, so that
// a second one is named as such rather than as a malformation.
import { createRequire } from 'node:module';

export interface XmlNode {
  readonly nodeType: number;
  readonly nodeValue: string | null;
  readonly namespaceURI: string | null;
  readonly localName: string | null;
  readonly textContent: string | null;
  readonly firstChild: XmlNode | null;
  readonly nextSibling: XmlNode | null;
}

export interface XmlElement extends XmlNode {
  /** xmldom answers '' (not null) for an absent attribute: ask hasAttribute when absence matters */
  getAttribute(name: string): string | null;
  hasAttribute(name: string): boolean;
}

export interface XmlDocument {
  readonly firstChild: XmlNode | null;
}

/** Why a document was refused: not well-formed, or well-formed pieces with more than one root element. */
export class XmlSyntaxError extends Error {
  constructor(readonly problem: 'malformed' | 'several roots') {
    super(problem);
    this.name = 'XmlSyntaxError';
  }
}

interface DomBuilder {
  startElement(...args: unknown[]): void;
  endElement(...args: unknown[]): void;
}

interface XmldomParserModule {
  DOMParser: new (options: {
    /** hears every warning, error and fatal error */
    errorHandler: (level: string, message: string) => void;
    domBuilder: DomBuilder;
  }) => { parseFromString(source: string, mimeType: string): XmlDocument };
  /** the DOM builder DOMParser uses by default; exported by lib/dom-parser.js, if as an internal */
  __DOMHandler: new () => DomBuilder;
}

// Checked at load, so an upgrade that drops the internal fails every test of the SAML modules
// rather than quietly parsing less strictly.
const { DOMParser, __DOMHandler: DOMHandler } = createRequire(import.meta.url)('@xmldom/xmldom/lib/dom-parser.js') as XmldomParserModule;
if (typeof DOMParser !== 'function' || typeof DOMHandler !== 'function') throw new Error('@xmldom/xmldom: DOMParser or __DOMHandler missing');

export const ELEMENT_NODE = 1;
export const TEXT_NODE = 3;
export const CDATA_SECTION_NODE = 4;
export const PROCESSING_INSTRUCTION_NODE = 7;
export const COMMENT_NODE = 8;

/**
 * Parses XML (not HTML), refusing with XmlSyntaxError whatever the parser complains about (its
 * warnings too: an unclosed attribute is only a warning to xmldom), elements not closed in
 * order, and a second root element (CVE-2022-39353's class).
 */
export function parseXml(xml: string): XmlDocument {
  const domBuilder = new DOMHandler();
  const { startElement, endElement } = domBuilder;
  let open = 0;
  let roots = 0;
  domBuilder.startElement = function (this: DomBuilder, ...args) {
    if (open === 0) roots++;
    open++;
    startElement.apply(this, args);
  };
  domBuilder.endElement = function (this: DomBuilder, ...args) {
    open--;
    endElement.apply(this, args);
  };
  let complaints = 0;
  let doc: XmlDocument | undefined;
  try {
    // Throwing stops the parse; the count also catches a complaint that xmldom catches and
    // reports again rather than letting it through.
    doc = new DOMParser({
      errorHandler: () => {
        complaints++;
        throw new XmlSyntaxError('malformed');
      },
      domBuilder,
    }).parseFromString(xml, 'text/xml');
  } catch {
    complaints++;
  }
  if (roots > 1) throw new XmlSyntaxError('several roots');
  if (complaints > 0 || open !== 0 || doc === undefined) throw new XmlSyntaxError('malformed');
  return doc;
}
