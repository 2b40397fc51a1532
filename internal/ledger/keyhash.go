package ledger

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"time"
)

// MinKeySecret is the length, in bytes, of the shortest secret a deployment may key its record keys with: as long
// as HMAC-SHA256's output, so that guessing the secret is no easier than guessing a key hash.
const MinKeySecret = 32

// KeyHasher derives the key part of a record's key (TRANSFER#…, ACCOUNTKEY#…) from a caller's scope and
// Idempotency-Key. With a secret it is HMAC-SHA256 keyed with it, 26 base32 characters as KeyHash: a transfer id
// embeds the result and others see transfer ids (the payee, the outcome events' consumers), and without the secret
// nobody can confirm a guess of the key from it. Without a secret (the zero KeyHasher) it is KeyHash, the unkeyed
// hash deployments used before they had a secret.
type KeyHasher struct{ secret []byte }

// NewKeyHasher returns a KeyHasher keyed with secret (a copy is kept); an empty secret gives the unkeyed KeyHash.
func NewKeyHasher(secret []byte) KeyHasher { return KeyHasher{secret: bytes.Clone(secret)} }

// Keyed reports whether h hashes with a secret.
func (h KeyHasher) Keyed() bool { return len(h.secret) > 0 }

// Hash is the key hash of (scope, idempotencyKey): HMAC-SHA256(secret, scope NUL key), its first 16 bytes in base32,
// or KeyHash(scope, idempotencyKey) without a secret.
func (h KeyHasher) Hash(scope, idempotencyKey string) string {
	if !h.Keyed() {
		return KeyHash(scope, idempotencyKey)
	}
	m := hmac.New(sha256.New, h.secret)
	m.Write([]byte(scope + "\x00" + idempotencyKey))
	return idEncoding.EncodeToString(m.Sum(nil)[:16])
}

// StoreOption configures a Store.
type StoreOption func(*Store)

// WithLegacyKeysUntil makes a Store, before until, treat a live record under the unkeyed hash (KeyHash) of a
// request's scope and key as that key's record: Reserve and OpenAccount then write the new record in one
// transaction with a check that no such legacy record is live, and answer with the legacy record when one is. It is
// for a deployment that keyed its hashes with a secret after records were written without one, until the last of
// those records has expired (LEGACY_KEY_HASH_UNTIL, docs/deploy.md). The zero time turns it off.
func WithLegacyKeysUntil(until time.Time) StoreOption {
	return func(s *Store) { s.legacyUntil = until }
}

// legacyKey is the partition key under which an earlier deployment kept (scope, key)'s record (prefix + KeyHash), or
// "" when no legacy record is checked: after legacyUntil, or when pk is that key already (no secret).
func (s *Store) legacyKey(prefix, scope, key, pk string, now time.Time) string {
	if s.legacyUntil.IsZero() || !now.Before(s.legacyUntil) {
		return ""
	}
	if legacy := prefix + KeyHash(scope, key); legacy != pk {
		return legacy
	}
	return ""
}
