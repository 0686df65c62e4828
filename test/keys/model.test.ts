// The pure rules of signing-key rotation (src/keys/model.ts): states from the times and the clock,
// the one signer of a chain, when an automatic rotation is due and when its successor signs, and
// what a retirement changes in each state.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { dueRotation, keyState, planRetirement, planRotation, planSigner, rotationSettings, signerAt, type KeyTimes } from '../../src/keys/model.js';

const DAY = 86_400_000;
const T0 = Date.UTC(2026, 10, 1);
const at = (ms: number) => new Date(T0 + ms);
const settings = rotationSettings({ rotateDays: 90, prepublishHours: 24, tokenTtlSeconds: 36_000, clockSkewSeconds: 5 });
const key = (kid: string, from: number, until: number | null, retired: number | null = null): KeyTimes => ({
  kid,
  createdAt: at(from - DAY),
  signsFrom: at(from),
  signsUntil: until === null ? null : at(until),
  retiredAt: retired === null ? null : at(retired),
});

describe('signing-key rules', () => {
  const chain = [key('a', 0, 90 * DAY), key('b', 90 * DAY, null)];

  it('a chain has one signer at every instant, and the states follow the clock', () => {
    assert.equal(signerAt(chain, at(89 * DAY))!.kid, 'a');
    assert.equal(signerAt(chain, at(90 * DAY))!.kid, 'b');
    assert.equal(keyState(chain[1]!, at(89 * DAY), settings.tokenLifetimeMs), 'pending');
    assert.equal(keyState(chain[0]!, at(90 * DAY), settings.tokenLifetimeMs), 'previous');
    assert.equal(keyState(chain[0]!, at(90 * DAY + settings.tokenLifetimeMs), settings.tokenLifetimeMs), 'expired');
  });

  it('an automatic rotation is due a pre-publication period before the signer’s last day, and not when a successor is planned', () => {
    const alone = [key('a', 0, null)];
    assert.equal(dueRotation(alone, at(89 * DAY - 1), settings), undefined);
    assert.deepEqual(dueRotation(alone, at(89 * DAY), settings), at(90 * DAY));
    assert.deepEqual(dueRotation(alone, at(100 * DAY), settings), at(101 * DAY), 'late: a full pre-publication period from now');
    assert.equal(dueRotation(chain, at(89 * DAY), settings), undefined);
    assert.equal(dueRotation(alone, at(200 * DAY), { ...settings, rotateMs: 0 }), undefined, '0 days: never');
  });

  it('a rotation ends the signer when its successor begins; a second is refused', () => {
    assert.deepEqual(planRotation([key('a', 0, null)], at(DAY), at(2 * DAY)), {
      updates: [{ kid: 'a', signsUntil: at(2 * DAY) }],
      newKeySignsFrom: at(2 * DAY),
    });
    assert.throws(() => planRotation(chain, at(DAY), at(2 * DAY)), /a rotation is under way already: key b/);
  });

  it('a retirement: the signer hands over to its successor at once, or to a new key; a pending key gives its predecessor back its open end', () => {
    assert.deepEqual(planRetirement(chain, 'a', at(DAY), settings.tokenLifetimeMs).updates, [
      { kid: 'a', retiredAt: at(DAY), signsUntil: at(DAY) },
      { kid: 'b', signsFrom: at(DAY) },
    ]);
    assert.deepEqual(planRetirement(chain, 'b', at(95 * DAY), settings.tokenLifetimeMs), {
      updates: [{ kid: 'b', retiredAt: at(95 * DAY), signsUntil: at(95 * DAY) }],
      newKeySignsFrom: at(95 * DAY),
    });
    assert.deepEqual(planRetirement(chain, 'b', at(DAY), settings.tokenLifetimeMs).updates, [
      { kid: 'b', retiredAt: at(DAY) },
      { kid: 'a', signsUntil: null },
    ]);
    assert.throws(() => planRetirement([key('a', 0, null, DAY)], 'a', at(2 * DAY), settings.tokenLifetimeMs), /was retired already/);
  });

  it('when no key signs now (keys retired by hand), the open-ended key signs at once, else a new key', () => {
    assert.deepEqual(planSigner(chain, at(DAY)), { updates: [] });
    assert.deepEqual(planSigner([key('a', 0, null, DAY), key('b', 10 * DAY, null)], at(2 * DAY)), {
      updates: [{ kid: 'b', signsFrom: at(2 * DAY) }],
    });
    assert.deepEqual(planSigner([key('a', 0, null, DAY)], at(2 * DAY)), { updates: [], newKeySignsFrom: at(2 * DAY) });
  });
});
