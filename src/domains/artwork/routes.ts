import { adminErrorResponses, adminWrite } from '../../http/responses.ts';
import { defineRoute } from '../../http/route.ts';
import { NotFoundError } from '../../lib/errors.ts';
import { StationIdParams } from '../stations/schemas.ts';
import { createBlock, deleteBlock, presentBlock } from './blocks.ts';
import type { ArtworkBlockRow, ArtworkPinRow } from './model.ts';
import { deletePin, presentPin, putPin } from './pins.ts';
import { recentTracks } from './recent.ts';
import { Block, BlockBody, BlockList, BlockParams, Pin, PinBody, PinList, PinParams, RecentQuery, RecentTracks } from './schemas.ts';

// Admin artwork routes (docs/now-playing.md#the-artwork-setting-and-the-admin-routes).

const errors = adminErrorResponses('Station, pin or block not found.');
const access = { scope: 'artwork:write' } as const;

export const artworkRoutes = [
  defineRoute({
    ...adminWrite,
    method: 'put',
    path: '/admin/v1/stations/{stationId}/artwork/pins/{pinId}',
    operationId: 'adminPutArtworkPin',
    access: { ...access, action: 'artwork.pin' },
    summary: 'Pin the art of an artist’s tracks or of one track (the operator’s word wins)',
    description:
      'Takes effect at once on reads, `live` and track history (past plays included); a now-playing frame follows for the current track. An uploaded `versionId` is checked at once; a `url` is fetched and checked by the worker (`status: pending` until then).',
    params: PinParams,
    body: PinBody,
    responses: { 200: { description: 'The replaced pin.', schema: Pin }, 201: { description: 'The new pin.', schema: Pin }, ...errors },
    async handler({ ctx, svc, params, body }) {
      const station = await svc.stations.require(params.stationId);
      const { pin, created } = await putPin(svc, station, params.pinId, body);
      ctx.status = created ? 201 : 200;
      return pin;
    },
  }),
  defineRoute({
    ...adminWrite,
    method: 'get',
    path: '/admin/v1/stations/{stationId}/artwork/pins',
    operationId: 'adminListArtworkPins',
    access,
    summary: 'A station’s artwork pins',
    params: StationIdParams,
    responses: { 200: { description: 'Pins, oldest first.', schema: PinList }, ...errors },
    async handler({ svc, params }) {
      await svc.stations.require(params.stationId);
      const rows: ArtworkPinRow[] = await svc.db('artwork_pins').where({ station_id: params.stationId }).orderBy(['created_at', 'id']);
      return { pins: rows.map(presentPin) };
    },
  }),
  defineRoute({
    ...adminWrite,
    method: 'get',
    path: '/admin/v1/stations/{stationId}/artwork/pins/{pinId}',
    operationId: 'adminGetArtworkPin',
    access,
    summary: 'One artwork pin',
    params: PinParams,
    responses: { 200: { description: 'The pin.', schema: Pin }, ...errors },
    async handler({ svc, params }) {
      await svc.stations.require(params.stationId);
      const row = await svc.db<ArtworkPinRow>('artwork_pins').where({ station_id: params.stationId, id: params.pinId }).first();
      if (!row) throw new NotFoundError('Artwork pin not found.');
      return presentPin(row);
    },
  }),
  defineRoute({
    ...adminWrite,
    method: 'delete',
    path: '/admin/v1/stations/{stationId}/artwork/pins/{pinId}',
    operationId: 'adminDeleteArtworkPin',
    access: { ...access, action: 'artwork.unpin' },
    summary: 'Remove an artwork pin (its tracks use the source chain again at once)',
    params: PinParams,
    responses: { 204: { description: 'Removed.' }, ...errors },
    async handler({ ctx, svc, params }) {
      const station = await svc.stations.require(params.stationId);
      if (!(await deletePin(svc, station, params.pinId))) throw new NotFoundError('Artwork pin not found.');
      ctx.status = 204;
    },
  }),
  defineRoute({
    ...adminWrite,
    method: 'post',
    path: '/admin/v1/stations/{stationId}/artwork/blocks',
    operationId: 'adminCreateArtworkBlock',
    access: { ...access, action: 'artwork.block' },
    summary: 'Block an image (by perceptual hash) from ever showing as track art',
    params: StationIdParams,
    body: BlockBody,
    responses: { 201: { description: 'The block.', schema: Block }, ...errors },
    async handler({ ctx, svc, params, body }) {
      const station = await svc.stations.require(params.stationId);
      const block = await createBlock(svc, station, body);
      ctx.status = 201;
      return block;
    },
  }),
  defineRoute({
    ...adminWrite,
    method: 'get',
    path: '/admin/v1/stations/{stationId}/artwork/blocks',
    operationId: 'adminListArtworkBlocks',
    access,
    summary: 'A station’s blocked images',
    params: StationIdParams,
    responses: { 200: { description: 'Blocks, oldest first.', schema: BlockList }, ...errors },
    async handler({ svc, params }) {
      await svc.stations.require(params.stationId);
      const rows: ArtworkBlockRow[] = await svc.db('artwork_blocks').where({ station_id: params.stationId }).orderBy(['created_at', 'id']);
      return { blocks: rows.map(presentBlock) };
    },
  }),
  defineRoute({
    ...adminWrite,
    method: 'delete',
    path: '/admin/v1/stations/{stationId}/artwork/blocks/{blockId}',
    operationId: 'adminDeleteArtworkBlock',
    access: { ...access, action: 'artwork.unblock' },
    summary: 'Remove a block',
    params: BlockParams,
    responses: { 204: { description: 'Removed.' }, ...errors },
    async handler({ ctx, svc, params }) {
      const station = await svc.stations.require(params.stationId);
      if (!(await deleteBlock(svc, station, params.blockId.toLowerCase()))) throw new NotFoundError('Artwork block not found.');
      ctx.status = 204;
    },
  }),
  defineRoute({
    ...adminWrite,
    method: 'get',
    path: '/admin/v1/stations/{stationId}/artwork/recent',
    operationId: 'adminRecentArtwork',
    access,
    summary: 'Review: the tracks played in the last 7 days, the art listeners saw and why a source was refused',
    params: StationIdParams,
    query: RecentQuery,
    responses: { 200: { description: 'Distinct tracks, newest play first.', schema: RecentTracks }, ...errors },
    async handler({ svc, params, query }) {
      await svc.stations.require(params.stationId);
      return recentTracks(svc, params.stationId, query.limit ?? 50);
    },
  }),
];
