// Writes demo/bundle.json, the station bundle `waveline dev` loads into an empty database (docs/demo.md).
// The output is committed: start-up reads the JSON and never runs this script. Run it again after
// changing the demo: `npx node scripts/demoBundle.ts`.
import { writeFileSync } from 'node:fs';
import sharp from 'sharp';

/** Readable, stable ids: `dec0de00-0000-4000-8000-` + 4 hex digits of kind + 8 of number. */
const id = (kind: number, n: number): string =>
  `dec0de00-0000-4000-8000-${kind.toString(16).padStart(4, '0')}${n.toString(16).padStart(8, '0')}`;
const RECORD = 1;
const PRESENTER = 2;
const PROGRAM = 3;
const BROADCAST = 4;

/** Pictures drawn from SVG shapes (no text, so no fonts needed), as small JPEGs. */
async function picture(width: number, height: number, from: string, to: string, seed: number): Promise<string> {
  const circles = Array.from({ length: 6 }, (_, i) => {
    const r = ((seed * 37 + i * 53) % 90) + 30;
    const cx = (seed * 71 + i * 149) % width;
    const cy = (seed * 29 + i * 97) % height;
    return `<circle cx="${cx}" cy="${cy}" r="${r}" fill="#ffffff" fill-opacity="0.12"/>`;
  }).join('');
  const waves = [0.55, 0.65, 0.75]
    .map((y, i) => {
      const base = Math.round(height * y);
      const amp = Math.round(height * 0.06);
      return `<path d="M0 ${base} Q ${width / 4} ${base - amp} ${width / 2} ${base} T ${width} ${base}" stroke="#ffffff" stroke-opacity="${0.5 - i * 0.12}" stroke-width="${6 - i}" fill="none"/>`;
    })
    .join('');
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}">
    <defs><linearGradient id="g" x1="0" y1="0" x2="1" y2="1"><stop offset="0" stop-color="${from}"/><stop offset="1" stop-color="${to}"/></linearGradient></defs>
    <rect width="100%" height="100%" fill="url(#g)"/>${circles}${waves}</svg>`;
  return (await sharp(Buffer.from(svg)).jpeg({ quality: 72, mozjpeg: true }).toBuffer()).toString('base64');
}

/** The station logo for RadioDNS: 600×600 PNG, a disc with three waves on a transparent background. */
async function logo(): Promise<string> {
  const waves = [250, 300, 350]
    .map(
      (y, i) =>
        `<path d="M130 ${y} Q 215 ${y - 60} 300 ${y} T 470 ${y}" stroke="#ffffff" stroke-width="${28 - i * 6}" stroke-linecap="round" fill="none"/>`,
    )
    .join('');
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="600" height="600">
    <circle cx="300" cy="300" r="280" fill="#e63946"/><circle cx="300" cy="300" r="280" fill="none" stroke="#1d3557" stroke-width="24"/>${waves}</svg>`;
  return (await sharp(Buffer.from(svg)).png({ compressionLevel: 9, palette: true }).toBuffer()).toString('base64');
}

/**
 * A short sine tone as WAV (PCM, 8 kHz, 8-bit mono: small, and media inspection reads its duration),
 * the audio of the demo podcast episodes.
 */
function tone(seconds: number, hz: number): string {
  const rate = 8000;
  const samples = Math.round(seconds * rate);
  const wav = Buffer.alloc(44 + samples);
  wav.write('RIFF', 0, 'latin1');
  wav.writeUInt32LE(36 + samples, 4);
  wav.write('WAVEfmt ', 8, 'latin1');
  wav.writeUInt32LE(16, 16);
  wav.writeUInt16LE(1, 20); // PCM
  wav.writeUInt16LE(1, 22); // mono
  wav.writeUInt32LE(rate, 24);
  wav.writeUInt32LE(rate, 28); // bytes per second
  wav.writeUInt16LE(1, 32);
  wav.writeUInt16LE(8, 34);
  wav.write('data', 36, 'latin1');
  wav.writeUInt32LE(samples, 40);
  for (let i = 0; i < samples; i++) {
    const fade = Math.min(1, i / 400, (samples - i) / 400);
    wav[44 + i] = Math.round(128 + 90 * fade * Math.sin((2 * Math.PI * hz * i) / rate));
  }
  return wav.toString('base64');
}

const TRACKS: Array<[artist: string, title: string, seconds: number]> = [
  ['Lumen Fields', 'Northern Lights', 231],
  ['The Quiet Harbour', 'Paper Boats', 204],
  ['Nova Reyes', 'Slow Motion City', 218],
  ['Kites & Cables', 'Overpass', 189],
  ['Marlowe Sun', 'Golden Hour (Radio Edit)', 212],
  ['Ada Kestrel', 'Static Bloom', 247],
  ['Brass Lantern', 'Tin Roof Rain', 198],
  ['Juniper Vale', 'Undertow', 256],
  ['Orbit Café', 'Late Checkout', 223],
  ['Sleepwalk Society', 'Neon Fog', 276],
  ['Feliks Amber', 'Two Rivers', 201],
  ['The Long Weekends', 'Sunday Driver', 185],
  ['Mira Solano feat. Otto Grey', 'Halfway Home', 239],
  ['Velvet Transit', 'Last Tram', 208],
  ['Hollow Pines', 'Firelight', 262],
  ['Echo Bay', 'Saltwater Letters', 195],
  ['Parade of Small Things', 'Confetti', 177],
  ['Rosa Lind', 'Window Seat', 214],
  ['Cobalt Days', 'Weather Report', 228],
  ['Nightjar', 'Low Orbit', 301],
];

/** Back-to-back items filling `minutes`: a jingle, then tracks with talk, ads and jingles between. */
function rundown(minutes: number, shift: number) {
  const items: Array<Record<string, unknown>> = [];
  let left = minutes * 60;
  let n = shift;
  const add = (item: Record<string, unknown>) => {
    const seconds = Math.min(item.durationSeconds as number, left);
    items.push({ ...item, durationSeconds: seconds });
    left -= seconds;
  };
  add({ kind: 'jingle', title: 'Waveline Demo FM — station ID', durationSeconds: 8 });
  while (left > 0) {
    const [artist, title, seconds] = TRACKS[n % TRACKS.length];
    add({ kind: 'track', artist, title, durationSeconds: seconds });
    n++;
    if (left > 0 && n % 4 === 0)
      add({ kind: 'talk', title: n % 8 === 0 ? 'News and weather' : 'Presenter link', durationSeconds: n % 8 === 0 ? 180 : 75 });
    if (left > 0 && n % 6 === 0) add({ kind: 'ad', title: 'Ad break', durationSeconds: 90 });
    if (left > 0 && n % 5 === 0) add({ kind: 'jingle', title: 'Waveline Demo FM — jingle', durationSeconds: 6 });
  }
  return items;
}

const PROGRAMS = [
  {
    n: 1,
    title: 'Morning Drive',
    start: '06:00',
    minutes: 360,
    nature: 'live',
    presenters: [1, 2],
    description: 'News, traffic and the right songs to get going — live every morning.',
  },
  {
    n: 2,
    title: 'Afternoon Mix',
    start: '12:00',
    minutes: 480,
    nature: 'live',
    presenters: [3],
    description: 'New releases and listener requests through the afternoon.',
  },
  {
    n: 3,
    title: 'Night Shift',
    start: '20:00',
    minutes: 600,
    nature: 'prerecorded',
    presenters: [4],
    description: 'Ambient, downtempo and long-form sessions until dawn.',
  },
];

const broadcastId = (dayOffset: number, program: number) => id(BROADCAST, (dayOffset + 1) * 10 + program);

/** Yesterday's night show (it runs into today) and every show from today through today + 7. */
function broadcasts() {
  const out: Array<Record<string, unknown>> = [];
  for (let day = -1; day <= 7; day++) {
    for (const p of PROGRAMS) {
      if (day === -1 && p.n !== 3) continue;
      out.push({
        id: broadcastId(day, p.n),
        programId: id(PROGRAM, p.n),
        nature: p.nature,
        relative: { dayOffset: day, start: p.start, durationMinutes: p.minutes },
      });
    }
  }
  return out;
}

/** Every broadcast on air at some moment of the import day. */
function rundowns() {
  const today: Array<[number, number]> = [
    [-1, 3],
    [0, 1],
    [0, 2],
    [0, 3],
  ];
  return today.map(([day, program], i) => ({
    broadcastId: broadcastId(day, program),
    items: rundown(PROGRAMS[program - 1].minutes, i * 5),
  }));
}

const paragraph = (blockId: string, text: string) => ({ id: blockId, type: 'paragraph', content: [{ text, marks: [] }] });

async function bundle() {
  return {
    bundleVersion: 1,
    station: {
      id: 'st_demo',
      slug: 'demo',
      name: 'Waveline Demo FM',
      timezone: 'Europe/Berlin',
      push: { provider: 'expo' },
      profile: {
        tagline: 'The sound of the city — a Waveline demo station',
        description:
          'Waveline Demo FM is sample data: it shows every part of the station delivery API with content, a schedule that always has something on air, and images.',
        frequencyLabel: 'FM 101.7',
        websiteUrls: ['https://demo.waveline.example'],
        // Two streams heard at different delays (docs/now-playing.md, "Heard time"): `?stream=mp3` and
        // `?stream=hls` on now-playing, track-history, broadcast/current and live answer in their time.
        streamUrls: [
          {
            label: 'MP3 128k (Icecast)',
            url: 'https://stream.waveline.example/demo.mp3',
            mime: 'audio/mpeg',
            bitrateKbps: 128,
            key: 'mp3',
            latencySeconds: 6,
          },
          {
            label: 'HLS (adaptive)',
            url: 'https://stream.waveline.example/demo/live.m3u8',
            mime: 'application/vnd.apple.mpegurl',
            key: 'hls',
            latencySeconds: 30,
          },
        ],
        contactEmail: 'studio@demo.waveline.example',
        phone: '+49 30 555 0101',
        address: 'Funkhausstraße 1, 10115 Berlin',
        socialLinks: [
          { network: 'instagram', url: 'https://instagram.example/wavelinedemo' },
          { network: 'mastodon', url: 'https://social.waveline.example/@demo' },
        ],
      },
      // RadioDNS (docs/radiodns.md): `npm start` answers http://localhost:3000/radiodns/spi/3.1/SI.xml at once.
      radiodns: {
        enabled: true,
        fqdn: 'localhost',
        serviceIdentifier: 'demo',
        shortName: 'Waveline',
        mediumName: 'Waveline Demo FM',
        bearers: [{ id: 'fm:de0.d3a1.10170', cost: 20 }],
        genres: [{ href: 'urn:tva:metadata:cs:ContentCS:2004:3.6', name: 'Music' }],
        logoKey: 'logo',
      },
      // Podcasts (docs/podcasts.md): `npm start` serves http://localhost:3000/podcasts/demo/feed.xml at once.
      podcasts: {
        enabled: true,
        episodeType: 'episode',
        author: 'Waveline Demo FM',
        ownerName: 'Waveline Demo FM',
        ownerEmail: 'studio@demo.waveline.example',
        language: 'en',
        categories: [
          { category: 'Music', subcategory: 'Music Commentary' },
          { category: 'News', subcategory: 'Daily News' },
        ],
        copyright: '© Waveline demo data',
        imageKey: 'podcast-cover',
      },
    },
    credentials: [
      { scopes: ['listener:read'], label: 'demo website and app (listener:read)' },
      { scopes: ['push:register'], label: 'demo app push registration (push:register)' },
      { scopes: ['ingest:write'], label: 'demo encoder now-playing (ingest:write)' },
    ],
    types: [
      {
        key: 'news',
        label: 'News',
        fields: [
          { key: 'title', label: 'Title', kind: 'text', required: true, maxLength: 200 },
          { key: 'slug', label: 'Slug', kind: 'text', required: true, maxLength: 200 },
          { key: 'teaser', label: 'Teaser', kind: 'text', maxLength: 500 },
          { key: 'body', label: 'Body', kind: 'rich_text' },
          {
            key: 'category',
            label: 'Category',
            kind: 'choices',
            required: true,
            choices: [
              { key: 'local', label: 'Local' },
              { key: 'music', label: 'Music' },
              { key: 'station', label: 'Station' },
              { key: 'events', label: 'Events' },
            ],
          },
          { key: 'image', label: 'Image', kind: 'media' },
          { key: 'internal_note', label: 'Internal note', kind: 'text', private: true },
        ],
      },
      {
        key: 'episode',
        label: 'Episode',
        fields: [
          { key: 'title', label: 'Title', kind: 'text', required: true, maxLength: 200 },
          { key: 'slug', label: 'Slug', kind: 'text', required: true, maxLength: 200 },
          { key: 'summary', label: 'Summary', kind: 'text', maxLength: 1000 },
          { key: 'aired_at', label: 'Aired at', kind: 'datetime' },
          { key: 'duration_minutes', label: 'Duration (minutes)', kind: 'number', min: 1, max: 600 },
          {
            key: 'tags',
            label: 'Tags',
            kind: 'choices',
            multiple: true,
            maxItems: 5,
            choices: [
              { key: 'interview', label: 'Interview' },
              { key: 'live_session', label: 'Live session' },
              { key: 'feature', label: 'Feature' },
            ],
          },
          { key: 'cover', label: 'Cover', kind: 'media' },
          { key: 'description', label: 'Description', kind: 'text', maxLength: 4000 },
          { key: 'audio', label: 'Audio', kind: 'media' },
        ],
      },
    ],
    media: [
      {
        key: 'studio',
        mime: 'image/jpeg',
        data: await picture(960, 540, '#1d3557', '#e63946', 3),
        alt: 'Abstract waves over a blue-to-red gradient',
        credits: 'Waveline demo artwork',
        focalX: 0.5,
        focalY: 0.6,
      },
      {
        key: 'night-shift-cover',
        mime: 'image/jpeg',
        data: await picture(600, 600, '#0b0c2a', '#5e60ce', 7),
        alt: 'Abstract night-blue waves',
        credits: 'Waveline demo artwork',
      },
      {
        key: 'logo',
        mime: 'image/png',
        data: await logo(),
        alt: 'Waveline Demo FM logo',
        credits: 'Waveline demo artwork',
      },
      {
        key: 'podcast-cover',
        mime: 'image/jpeg',
        data: await picture(1400, 1400, '#1d3557', '#457b9d', 11),
        alt: 'Waveline Demo FM podcast cover: abstract waves',
        credits: 'Waveline demo artwork',
      },
      { key: 'night-shift-112-audio', mime: 'audio/wav', data: tone(4, 220), credits: 'Waveline demo audio (a sine tone)' },
      { key: 'morning-drive-organisers-audio', mime: 'audio/wav', data: tone(3, 330), credits: 'Waveline demo audio (a sine tone)' },
    ],
    // Published in this order, so the welcome news (listed last of the news) is the newest.
    records: [
      {
        id: id(RECORD, 2),
        type: 'news',
        values: {
          title: 'Street festival closes Kastanienallee this weekend',
          slug: 'street-festival-kastanienallee',
          teaser: 'Three stages, forty stalls, and the Morning Drive live from the square on Saturday.',
          category: 'events',
        },
        related: { programIds: [id(PROGRAM, 1)] },
        published: true,
      },
      {
        id: id(RECORD, 3),
        type: 'news',
        values: {
          title: 'New music Friday: five tracks for your weekend',
          slug: 'new-music-friday',
          teaser: 'Lumen Fields, Nova Reyes and three more we can’t stop playing.',
          category: 'music',
        },
        published: true,
      },
      {
        id: id(RECORD, 4),
        type: 'news',
        values: {
          title: 'Roadworks on the ring road until Sunday',
          slug: 'roadworks-ring-road',
          teaser: 'Expect delays between the harbour and the airport exits.',
          category: 'local',
        },
        published: true,
      },
      {
        id: id(RECORD, 1),
        type: 'news',
        values: {
          title: 'Waveline Demo FM is on air',
          slug: 'waveline-demo-fm-is-on-air',
          teaser: 'A station made of sample data, so you can try every API route right away.',
          body: '<p>Everything you see here came from <code>demo/bundle.json</code>.</p>',
          category: 'station',
          image: 'studio',
          internal_note: 'Private fields are never delivered.',
        },
        document: {
          version: 1,
          mode: 'blocks',
          blocks: [
            paragraph('b1', 'Welcome to Waveline Demo FM.'),
            paragraph('b2', 'This record has an image with four variants, rendered by the worker after start-up.'),
          ],
        },
        published: true,
      },
      {
        id: id(RECORD, 5),
        type: 'episode',
        values: {
          title: 'Night Shift #112: Field recordings',
          slug: 'night-shift-112',
          summary: 'Two hours of ambient music built from city sounds.',
          aired_at: '2026-01-15T20:00:00+01:00',
          duration_minutes: 120,
          tags: ['feature'],
          cover: 'night-shift-cover',
          description: 'Two hours of ambient music built from city sounds (the demo’s audio is a four-second tone).',
          audio: 'night-shift-112-audio',
        },
        related: { programIds: [id(PROGRAM, 3)] },
        published: true,
      },
      {
        id: id(RECORD, 6),
        type: 'episode',
        values: {
          title: 'Morning Drive: the festival organisers',
          slug: 'morning-drive-festival-organisers',
          summary: 'Who builds three stages in one night? We asked.',
          aired_at: '2026-02-02T08:15:00+01:00',
          duration_minutes: 15,
          tags: ['interview'],
          audio: 'morning-drive-organisers-audio',
        },
        related: { programIds: [id(PROGRAM, 1)] },
        published: true,
      },
    ],
    presenters: [
      { id: id(PRESENTER, 1), title: 'Mara Lindqvist' },
      { id: id(PRESENTER, 2), title: 'Jonas Becker' },
      { id: id(PRESENTER, 3), title: 'Aylin Demir' },
      { id: id(PRESENTER, 4), title: 'Tom Okafor' },
    ],
    programs: PROGRAMS.map((p) => ({
      id: id(PROGRAM, p.n),
      title: p.title,
      description: p.description,
      presenterIds: p.presenters.map((n) => id(PRESENTER, n)),
      slots: [1, 2, 3, 4, 5, 6, 7].map((weekday) => ({ weekday, startTime: p.start, durationMinutes: p.minutes })),
    })),
    broadcasts: broadcasts(),
    rundowns: rundowns(),
  };
}

/** Indented JSON with every object or array that holds no object or array on one line (rundown items, slots, scopes). */
function format(value: unknown): string {
  return JSON.stringify(value, null, 2)
    .replace(/\{\n\s+([^{}[\]]*?)\n\s*\}/g, (_, inner: string) => `{ ${inner.replace(/\n\s+/g, ' ')} }`)
    .replace(/\[\n\s+([^{}[\]]*?)\n\s*\]/g, (_, inner: string) => `[${inner.replace(/\n\s+/g, ' ')}]`);
}

const path = new URL('../demo/bundle.json', import.meta.url);
const json = `${format(await bundle())}\n`;
writeFileSync(path, json);
process.stdout.write(`wrote ${path.pathname} (${Math.round(json.length / 1024)} KiB)\n`);
