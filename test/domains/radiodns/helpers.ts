import { request as httpRequest } from 'node:http';
import { expect } from 'chai';
import sharp from 'sharp';
import { create } from 'xmlbuilder2';
import { admin } from '../../support/http.ts';
import { uploaded } from '../media/helpers.ts';

// RadioDNS through the admin API and real HTTP, and a small DOM walk over the SPI XML.

export const SPI_NS = 'http://www.worlddab.org/schemas/spi/34';
export const XML_NS = 'http://www.w3.org/XML/1998/namespace';

export interface HttpReply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
  text: string;
}

/** GET with any Host header (fetch cannot set one). */
export function get(baseUrl: string, path: string, headers: Record<string, string> | string = {}): Promise<HttpReply> {
  if (typeof headers === 'string') headers = { host: headers };
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: hostname, port, path, method: 'GET', headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const body = Buffer.concat(chunks);
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body, text: body.toString('utf8') });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/** A picture of one colour, `width`×`height`. */
export function picture(width: number, height: number, colour = { r: 220, g: 20, b: 60 }): Promise<Buffer> {
  return sharp({ create: { width, height, channels: 3, background: colour } })
    .png()
    .toBuffer();
}

export async function uploadLogo(baseUrl: string, stationId: string, width = 1200, height = 600): Promise<string> {
  const receipt = await uploaded(baseUrl, stationId, await picture(width, height), 'image/png');
  return receipt.versionId;
}

export async function patchRadioDns(baseUrl: string, stationId: string, radiodns: Record<string, unknown>) {
  return admin(baseUrl, 'PATCH', `/stations/${stationId}`, { radiodns });
}

const hex = (digits: number) =>
  Math.floor(Math.random() * 16 ** digits)
    .toString(16)
    .padStart(digits, '0');

/** An FM and a DAB bearer no other station has (a bearer leads to one station). */
export function uniqueBearers(): Array<{ id: string; cost: number }> {
  const frequency = String(Math.floor(Math.random() * 100000)).padStart(5, '0');
  return [
    { id: `fm:de0.${hex(4)}.${frequency}`, cost: 20 },
    { id: `dab:de0.1001.${hex(8)}.0`, cost: 30 },
  ];
}

export function enabledSetting(fqdn: string, extra: Record<string, unknown> = {}) {
  return {
    enabled: true,
    fqdn,
    serviceIdentifier: 'wave1',
    shortName: 'Wave',
    mediumName: 'Waveline FM',
    bearers: uniqueBearers(),
    ...extra,
  };
}

// ---- The XML, walked as a DOM ----

export interface El {
  name: string;
  ns: string | null;
  attrs: Record<string, string>;
  children: El[];
  text: string;
}

interface DomNode {
  nodeType: number;
  localName?: string;
  namespaceURI?: string | null;
  textContent: string | null;
  childNodes: ArrayLike<DomNode>;
  attributes?: ArrayLike<{ name: string; value: string }>;
}

function walk(node: DomNode): El {
  const children = Array.from(node.childNodes).filter((c) => c.nodeType === 1);
  const attrs: Record<string, string> = {};
  for (const a of Array.from(node.attributes ?? [])) attrs[a.name] = a.value;
  return { name: node.localName!, ns: node.namespaceURI ?? null, attrs, children: children.map(walk), text: node.textContent ?? '' };
}

export function parseXml(xml: string): El {
  return walk(create(xml).root().node as unknown as DomNode);
}

export const kids = (el: El, name: string): El[] => el.children.filter((c) => c.name === name);
export const kid = (el: El, name: string): El => {
  const found = kids(el, name);
  expect(found, `<${el.name}> has one <${name}>`).to.have.length(1);
  return found[0];
};

/** Every element of the tree in the SPI namespace (no stray, un-namespaced element). */
export function everyElement(el: El, visit: (el: El) => void): void {
  visit(el);
  for (const c of el.children) everyElement(c, visit);
}

/** The order the schema's sequence allows: each child name's first index never falls behind an earlier one's. */
export function expectOrder(el: El, order: readonly string[]): void {
  const positions = el.children.map((c) => order.indexOf(c.name));
  expect(positions, `children of <${el.name}>: ${el.children.map((c) => c.name).join(', ')}`).not.to.include(-1);
  expect(positions).to.deep.equal([...positions].sort((a, b) => a - b));
}

// The standard's forms (ETSI TS 102 818, spi_34.xsd).
export const TIME_POINT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(Z|[+-]\d{2}:\d{2})$/;
export const DURATION = /^PT(\d+H)?(\d+M)?(\d+S)?$/;
export const CRID = /^crid:\/\/[^/]+\/.+$/i;
export const MIME = /^([!-.0-~]+\/[!-.0-~]+)+$/;

export async function putStationSetting(baseUrl: string, stationId: string, body: Record<string, unknown>) {
  const res = await admin(baseUrl, 'PATCH', `/stations/${stationId}`, body);
  expect(res.status, JSON.stringify(res.body)).to.equal(200);
  return res.body;
}
