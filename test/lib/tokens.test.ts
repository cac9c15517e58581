import { expect } from 'chai';
import { crc32 } from 'node:zlib';
import { checksum, generateToken, hashToken, isWellFormedToken, sign, toBase62, TokenHashMemo, verify } from '../../src/lib/tokens.ts';

describe('credential token format', () => {
  it('is wvl_ + 40 base62 random characters + the base62 CRC32 of them, left-padded to 6', () => {
    const token = generateToken();
    expect(token).to.match(/^wvl_[0-9A-Za-z]{46}$/);
    const random = token.slice(4, 44);
    expect(token.slice(44)).to.equal(toBase62(crc32(random), 6));
    expect(isWellFormedToken(token)).to.equal(true);
  });

  it('base62 uses 0-9A-Za-z and pads with 0', () => {
    expect(toBase62(0, 6)).to.equal('000000');
    expect(toBase62(61, 6)).to.equal('00000z');
    expect(toBase62(62, 6)).to.equal('000010');
    expect(toBase62(0xffffffff, 6)).to.equal('4gfFC3');
  });

  it('rejects typos offline', () => {
    const token = generateToken();
    const flipped = token.slice(0, 10) + (token[10] === 'a' ? 'b' : 'a') + token.slice(11);
    expect(isWellFormedToken(flipped)).to.equal(false);
    expect(isWellFormedToken(token.slice(0, -1))).to.equal(false);
    expect(isWellFormedToken('xyz_' + token.slice(4))).to.equal(false);
    expect(checksum('A'.repeat(40))).to.have.length(6);
  });

  it('signed values round-trip and tampering is detected', () => {
    const value = sign('secret-1234567890', { a: 1 });
    expect(verify('secret-1234567890', value)).to.deep.equal({ a: 1 });
    expect(verify('another-secret-123', value)).to.equal(null);
    const [body, mac] = value.split('.');
    const forged = Buffer.from(JSON.stringify({ a: 2 })).toString('base64url');
    expect(verify('secret-1234567890', `${forged}.${mac}`)).to.equal(null);
    expect(verify('secret-1234567890', `${body}.x${mac.slice(1)}`)).to.equal(null);
    expect(verify('secret-1234567890', 'garbage')).to.equal(null);
  });
});

describe('TokenHashMemo (the cached listener reads’ token hashes)', () => {
  it('gives only what was remembered, the token’s own hash, and starts over when full', () => {
    const memo = new TokenHashMemo(2);
    const [a, b, c] = [generateToken(), generateToken(), generateToken()];
    expect(memo.get(a), 'nothing is remembered by asking').to.equal(undefined);
    memo.remember(a, hashToken(a));
    memo.remember(b, hashToken(b));
    expect([memo.get(a), memo.get(b)]).to.deep.equal([hashToken(a), hashToken(b)]);
    memo.remember(c, hashToken(c));
    expect([memo.get(a), memo.get(b), memo.get(c)], 'bounded: the third cleared the first two').to.deep.equal([
      undefined,
      undefined,
      hashToken(c),
    ]);
  });
});
