import { execFileSync } from 'node:child_process';
import { expect } from 'chai';
import { podcastGuid, PODCAST_GUID_NAMESPACE, uuidV5 } from '../../../src/domains/podcasts/model.ts';
import { isAppleCategory } from '../../../src/domains/podcasts/categories.ts';
import { isLanguageTag } from '../../../src/domains/podcasts/settings.ts';
import { cutGraphemes, xmlLine, xmlSafe } from '../../../src/lib/xmlText.ts';

// The identifiers and text rules of the feeds, without a server.

describe('podcast feed identifiers and text', () => {
  it('podcast:guid is the UUID v5 of the feed URL without scheme and trailing slash (the Podcast Index’s published examples)', () => {
    // docs/tags/guid.md of Podcastindex-org/podcast-namespace.
    expect(uuidV5('mp3s.nashownotes.com/pc20rss.xml', PODCAST_GUID_NAMESPACE)).to.equal('917393e3-1b1e-5cef-ace4-edaa54e1f810');
    expect(uuidV5('podnews.net/rss', PODCAST_GUID_NAMESPACE)).to.equal('9b024349-ccf0-5f69-a609-6b82873eab3c');
    expect(podcastGuid('https://podnews.net/rss')).to.equal('9b024349-ccf0-5f69-a609-6b82873eab3c');
    expect(podcastGuid('http://podnews.net/rss/')).to.equal('9b024349-ccf0-5f69-a609-6b82873eab3c');
    // RFC 9562's own v5 example: the DNS namespace and "www.example.com".
    expect(uuidV5('www.example.com', '6ba7b810-9dad-11d1-80b4-00c04fd430c8')).to.equal('2ed6657d-e927-568b-95e1-2665a8aea6a2');
  });

  it('agrees with a second implementation (Python’s uuid.uuid5) where one is installed', function () {
    let python: string;
    try {
      python = execFileSync('python3', [
        '-c',
        `import uuid;print(uuid.uuid5(uuid.UUID('${PODCAST_GUID_NAMESPACE}'),'podcastindex.org/namespace/1.0'))`,
      ])
        .toString()
        .trim();
    } catch {
      this.skip();
    }
    expect(uuidV5('podcastindex.org/namespace/1.0', PODCAST_GUID_NAMESPACE)).to.equal(python);
  });

  it('text loses control characters and what XML cannot carry (lone surrogates), and is never cut inside a character', () => {
    expect(xmlSafe('a\u0000b\u0007c\u001bd\u007fe\u0085f\ufffeg\ud800h\udc00i\tj\nk')).to.equal('abcdefghi\tj\nk');
    expect(xmlSafe('🎸')).to.equal('🎸');
    expect(xmlLine('  one\n two\t ')).to.equal('one two');
    const family = '👩‍👩‍👧‍👦';
    expect(cutGraphemes(`ab${family}cd`, 3)).to.equal(`ab${family}`);
    expect(cutGraphemes(`ab${family}cd`, 2)).to.equal('ab');
    expect(cutGraphemes('short', 10)).to.equal('short');
  });

  it('Apple’s categories and BCP 47 language tags', () => {
    expect(isAppleCategory('Music', 'Music History')).to.equal(true);
    expect(isAppleCategory('Music', 'Politics')).to.equal(false);
    expect(isAppleCategory('toString')).to.equal(false);
    expect(isLanguageTag('pt-BR')).to.equal(true);
    expect(isLanguageTag('en-GB-oxendict')).to.equal(true);
    expect(isLanguageTag('en--GB')).to.equal(false);
  });
});
