import { expect } from 'chai';
import { admin } from '../../support/http.ts';
import { uniqueSlug } from '../../support/factories.ts';
import { sharedServer, type TestServer } from '../../support/server.ts';
import { enabledSetting, picture } from './helpers.ts';

// docs/demo.md#post-adminv1import and docs/radiodns.md#the-radiodns-station-setting: a bundle's station carries the radiodns
// setting, validated like the admin PATCH; its logo names a media entry of the bundle (`logoKey`).

describe('import bundles with a radiodns setting', () => {
  let server: TestServer;
  before(async () => {
    server = await sharedServer();
  });

  async function bundle(radiodns: Record<string, unknown>, logo: { width: number; height: number } = { width: 640, height: 640 }) {
    const data = (await picture(logo.width, logo.height)).toString('base64');
    return {
      station: { slug: uniqueSlug('rdi'), name: 'Imported', timezone: 'Europe/Berlin', radiodns },
      media: [{ key: 'logo', mime: 'image/png', data }],
    };
  }

  it('sets the logo from the bundle media entry named by logoKey', async () => {
    const res = await admin(server.url, 'POST', '/import', await bundle({ ...enabledSetting('import.example'), logoKey: 'logo' }));
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    const logo = res.body.media.find((m: { key: string }) => m.key === 'logo');
    expect(res.body.station.radiodns).to.include({ enabled: true, fqdn: 'import.example', logoVersionId: logo.versionId });
  });

  const invalid: Array<[string, Record<string, unknown>, { width: number; height: number } | undefined, string]> = [
    ['an unknown logoKey', { logoKey: 'nope' }, undefined, 'station.radiodns.logoKey'],
    ['a logo under 600×600', { logoKey: 'logo' }, { width: 640, height: 480 }, 'station.radiodns.logoKey'],
    ['a shortName over 8', { shortName: 'Too long!' }, undefined, 'station.radiodns.shortName'],
    ['a bad bearer', { bearers: [{ id: 'fm:xyz', cost: 1 }] }, undefined, 'station.radiodns.bearers.0.id'],
    ['enabled without fqdn', { fqdn: null }, undefined, 'station.radiodns.fqdn'],
  ];
  for (const [name, change, logo, path] of invalid) {
    it(`400 naming the field, nothing imported: ${name}`, async () => {
      const body = await bundle({ ...enabledSetting('bad.example'), ...change }, logo);
      const res = await admin(server.url, 'POST', '/import', body);
      expect(res.status, JSON.stringify(res.body)).to.equal(400);
      expect(res.body.error.issues.map((i: { path: string }) => i.path)).to.include(path);
      expect(await server.svc.db('stations').where({ slug: body.station.slug }).first()).to.equal(undefined);
    });
  }
});
