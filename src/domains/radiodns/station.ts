import { onStationChanged } from '../stations/changes.ts';
import { registerStationSetting } from '../stations/settings.ts';
import { requestLogoRenditions } from './logos.ts';
import { radiodnsFromStored, type RadioDns } from './model.ts';
import { RadioDnsBundle, RadioDnsInput, RadioDnsOut } from './schemas.ts';
import { checkRadioDns, mergeRadioDns } from './settings.ts';

// How RadioDNS plugs into the station (docs/architecture.md, "A feature's station setting"): the
// `radiodns` setting, stored in the `stations.radiodns` column, and the logo renditions a new logo needs.

declare module '../stations/model.ts' {
  interface StationSettings {
    /** RadioDNS SPI (docs/radiodns.md#the-radiodns-station-setting); every key present. */
    radiodns: RadioDns;
  }
}

registerStationSetting({
  key: 'radiodns',
  column: 'radiodns',
  input: RadioDnsInput,
  output: RadioDnsOut,
  // Merged into what is stored.
  patch: 'merge',
  fromStored: radiodnsFromStored,
  fromInput: (input, stored) => mergeRadioDns(stored, input),
  check: (radiodns, { db, stationId }) => checkRadioDns(db, stationId, radiodns),
  bundle: {
    schema: RadioDnsBundle,
    atCreate: ({ logoKey: _logoKey, ...radiodns }) => radiodns,
    // The logo is a media entry of the bundle: set once it is stored.
    afterMedia: ({ logoKey }, media) =>
      logoKey === undefined ? undefined : { input: { logoVersionId: media(logoKey, 'logoKey') }, rename: { logoVersionId: 'logoKey' } },
  },
});

// A new logo is rendered by the worker (one job per version: setting the same logo again adds none).
onStationChanged('radiodns logo renditions', (svc, { before, after }) =>
  before === null || before.radiodns.logoVersionId !== after.radiodns.logoVersionId ? requestLogoRenditions(svc, after) : undefined,
);
