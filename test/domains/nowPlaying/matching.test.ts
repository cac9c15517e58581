import { expect } from 'chai';
import { bestItem, outcomeFor } from '../../../src/domains/nowPlaying/matching.ts';
import { normalise, score, similarity } from '../../../src/lib/trackMatch.ts';
import { splitStreamTitle } from '../../../src/domains/nowPlaying/bind.ts';

// docs/now-playing.md#matching, and the streamTitle split (docs/now-playing.md#body-fields), as plain functions.

describe('rundown matching', () => {
  it('normalises away case, accents, punctuation, feat. parts and bracketed suffixes', () => {
    expect(normalise('Beyoncé feat. JAY-Z')).to.equal('beyonce');
    expect(normalise('Crazy In Love!')).to.equal('crazy in love');
    expect(normalise('Bohemian Rhapsody (Remastered 2011) [Live]')).to.equal('bohemian rhapsody');
    expect(normalise('Song ft. Someone')).to.equal('song');
    expect(normalise('Señorita – Radio Version')).to.equal('senorita radio version');
    expect(normalise('(Intro)'), 'a title that is only brackets keeps its words').to.equal('intro');
  });

  it('similarity is 1 for equal strings and falls with the edit distance', () => {
    expect(similarity('queen', 'queen')).to.equal(1);
    expect(similarity('abcdefghij', 'abcdefghiX')).to.be.closeTo(0.9, 1e-9);
    expect(similarity('', 'x')).to.equal(0);
  });

  it('outcome thresholds: ≥ 0.9 matched, ≥ 0.6 uncertain, below ignored', () => {
    expect(outcomeFor(1)).to.equal('matched');
    expect(outcomeFor(0.9)).to.equal('matched');
    expect(outcomeFor(0.8999)).to.equal('uncertain');
    expect(outcomeFor(0.6)).to.equal('uncertain');
    expect(outcomeFor(0.5999)).to.equal('ignored');
  });

  it('scores the title above the artist: a cover of the planned title is uncertain, another song by the planned artist is ignored', () => {
    const planned = { artist: 'Queen', title: 'Bohemian Rhapsody' };
    expect(score({ artist: 'QUEEN', title: 'Bohemian Rhapsody (Live Aid)' }, planned)).to.equal(1);
    expect(outcomeFor(score({ artist: 'Panic! At The Disco', title: 'Bohemian Rhapsody' }, planned))).to.equal('uncertain');
    expect(outcomeFor(score({ artist: 'Queen', title: 'Radio Ga Ga' }, planned))).to.equal('ignored');
    expect(outcomeFor(score({ artist: null, title: 'Queen Bohemian Rhapsody' }, planned)), 'a stream title without separator').to.equal(
      'matched',
    );
  });

  it('breaks equal scores by the nearness of the planned slot', () => {
    const items = [
      { id: 'early', artist: 'Toto', title: 'Africa', plannedStartsMs: 0, plannedEndsMs: 300_000 },
      { id: 'late', artist: 'Toto', title: 'Africa', plannedStartsMs: 3_600_000, plannedEndsMs: 3_900_000 },
    ];
    expect(bestItem({ artist: 'Toto', title: 'Africa' }, items, 3_500_000)?.item.id).to.equal('late');
    expect(bestItem({ artist: 'Toto', title: 'Africa' }, items, 100_000)?.item.id).to.equal('early');
    expect(bestItem({ artist: 'Toto', title: 'Africa' }, [], 0)).to.equal(null);
  });

  it('splits streamTitle at the first ` - `; without it the whole string is the title', () => {
    expect(splitStreamTitle('AC/DC - Back In Black - Live')).to.deep.equal({ artist: 'AC/DC', title: 'Back In Black - Live' });
    expect(splitStreamTitle('Jay-Z')).to.deep.equal({ artist: null, title: 'Jay-Z' });
    expect(splitStreamTitle(' - Only Title')).to.deep.equal({ artist: null, title: 'Only Title' });
  });
});
