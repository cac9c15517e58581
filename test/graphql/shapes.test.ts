import { expect } from 'chai';
import {
  buildSchema,
  getNullableType,
  isListType,
  isNonNullType,
  isObjectType,
  isScalarType,
  type GraphQLObjectType,
  type GraphQLOutputType,
} from 'graphql';
import type { TSchema } from '@sinclair/typebox';
import { typeDefs } from '../../src/graphql/sdl.ts';
import { StationDocument } from '../../src/domains/stations/schemas.ts';
import { CurrentBroadcastResponse, ProgramsResponse, ScheduleResponse } from '../../src/domains/schedule/schemas.ts';
import { Live, NowPlaying, TrackHistory } from '../../src/domains/nowPlaying/schemas.ts';
import { PublishedRecord } from '../../src/domains/content/schemas.ts';

// One source per shape: the REST answers are TypeBox schemas (which give the TypeScript types through
// `Static`), the GraphQL SDL is written by hand. This holds the SDL's main types against the schemas —
// field names and nullability, all the way down — so a field added, renamed or made nullable in one
// place and not the other fails here.

const schema = buildSchema(typeDefs);

/** GraphQL types that deliberately show less than their REST counterpart (documented in docs/graphql.md). */
const SUBSETS = new Set(['PublicMedia']);

/**
 * Differences found when this test was written and kept as they are (this pass changes no behaviour):
 * REST always sends `alt` ("" when none), GraphQL declares it nullable. Left for the lead to decide.
 */
const KNOWN = ['PublishedRecord.media[].alt: GraphQL nullable, TypeBox required'];

/** GraphQL names cannot start with a digit: `ArtworkVariants._300` is the REST "300" (docs/graphql.md). */
const restName = (graphqlName: string): string => (/^_\d/.test(graphqlName) ? graphqlName.slice(1) : graphqlName);

interface Shape {
  nullable: boolean;
  schema: TSchema;
}

function unwrapNull(s: TSchema): Shape {
  if (Array.isArray(s.anyOf)) {
    const rest = (s.anyOf as TSchema[]).filter((m) => m.type !== 'null');
    if (rest.length === 1 && rest.length < s.anyOf.length) return { nullable: true, schema: rest[0] };
  }
  return { nullable: false, schema: s };
}

function propertiesOf(s: TSchema): { props: Record<string, TSchema>; required: Set<string> } | undefined {
  if (s.type === 'object' && s.properties)
    return { props: s.properties as Record<string, TSchema>, required: new Set((s.required as string[] | undefined) ?? []) };
  if (Array.isArray(s.allOf)) {
    const props: Record<string, TSchema> = {};
    const required = new Set<string>();
    for (const part of s.allOf as TSchema[]) {
      const p = propertiesOf(part);
      if (!p) return undefined;
      Object.assign(props, p.props);
      for (const r of p.required) required.add(r);
    }
    return { props, required };
  }
  return undefined;
}

function compare(where: string, gql: GraphQLOutputType, box: TSchema, optional: boolean, problems: string[]): void {
  const { nullable, schema: inner } = unwrapNull(box);
  if (isNonNullType(gql) === (nullable || optional))
    problems.push(
      `${where}: GraphQL ${isNonNullType(gql) ? 'non-null' : 'nullable'}, TypeBox ${nullable || optional ? 'nullable' : 'required'}`,
    );
  const type = getNullableType(gql);
  if (isListType(type)) {
    if (inner.type !== 'array') return void problems.push(`${where}: GraphQL list, TypeBox ${String(inner.type)}`);
    return compare(`${where}[]`, type.ofType, inner.items as TSchema, false, problems);
  }
  if (isScalarType(type)) {
    if (type.name !== 'JSON' && propertiesOf(inner)) problems.push(`${where}: GraphQL ${type.name}, TypeBox object`);
    return;
  }
  if (isObjectType(type)) compareObject(where, type, inner, problems);
}

function compareObject(where: string, type: GraphQLObjectType, box: TSchema, problems: string[]): void {
  const props = propertiesOf(box);
  if (!props) return void problems.push(`${where}: GraphQL ${type.name}, TypeBox ${String(box.type)}`);
  const fields = type.getFields();
  for (const name of Object.keys(fields)) {
    const rest = restName(name);
    if (!(rest in props.props)) problems.push(`${where}.${name}: in GraphQL ${type.name}, not in the TypeBox schema`);
    else compare(`${where}.${name}`, fields[name].type, props.props[rest], !props.required.has(rest), problems);
  }
  if (SUBSETS.has(type.name)) return;
  const restNames = new Set(Object.keys(fields).map(restName));
  for (const name of Object.keys(props.props))
    if (!restNames.has(name)) problems.push(`${where}.${name}: in the TypeBox schema, not in GraphQL ${type.name}`);
}

function problemsOf(typeName: string, box: TSchema): string[] {
  const type = schema.getType(typeName);
  if (!isObjectType(type)) throw new Error(`no GraphQL type ${typeName}`);
  const problems: string[] = [];
  compareObject(typeName, type, box, problems);
  return problems;
}

const PAIRS: Array<[string, TSchema]> = [
  ['Station', StationDocument],
  ['Schedule', ScheduleResponse],
  ['Programs', ProgramsResponse],
  ['CurrentBroadcast', CurrentBroadcastResponse],
  ['NowPlaying', NowPlaying],
  ['TrackHistory', TrackHistory],
  ['Live', Live],
  ['PublishedRecord', PublishedRecord],
];

describe('GraphQL SDL against the TypeBox schemas', () => {
  for (const [name, box] of PAIRS) {
    it(`${name}: same field names and nullability as its REST schema`, () => {
      expect(problemsOf(name, box)).to.deep.equal(KNOWN.filter((k) => k.startsWith(`${name}.`)));
    });
  }

  it('notices a field the SDL lacks, a field only the SDL has, and a nullability change', () => {
    const withExtra = {
      ...NowPlaying,
      properties: { ...NowPlaying.properties, listeners: { type: 'integer' } },
      required: [...NowPlaying.required!, 'listeners'],
    } as TSchema;
    expect(problemsOf('NowPlaying', withExtra)).to.deep.equal(['NowPlaying.listeners: in the TypeBox schema, not in GraphQL NowPlaying']);
    const { timezone: _dropped, ...rest } = NowPlaying.properties;
    const without = { ...NowPlaying, properties: rest, required: NowPlaying.required!.filter((k) => k !== 'timezone') } as TSchema;
    expect(problemsOf('NowPlaying', without)).to.deep.equal(['NowPlaying.timezone: in GraphQL NowPlaying, not in the TypeBox schema']);
    const nullable = {
      ...NowPlaying,
      properties: { ...NowPlaying.properties, stationId: { anyOf: [{ type: 'string' }, { type: 'null' }] } },
    } as TSchema;
    expect(problemsOf('NowPlaying', nullable)).to.deep.equal(['NowPlaying.stationId: GraphQL non-null, TypeBox nullable']);
  });
});
