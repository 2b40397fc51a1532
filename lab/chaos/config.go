package chaos

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"io"
	"strconv"
	"time"
)

// Defaults of `make chaos`.
const (
	DefaultTransfers = 10_000
	DefaultKills     = 20
	DefaultClients   = 128
	DefaultQuiesce   = 10 * time.Minute
)

// Config is one campaign.
type Config struct {
	// Seed decides everything NewPlan decides.
	Seed uint64
	// Transfers, Kills and Clients: how many transfers, kill -9s and concurrent clients.
	Transfers, Kills, Clients int
	// LocalBin is the local stack's binary; empty builds ./cmd/local of Dir into a temporary directory.
	LocalBin string
	// Dir is the module's root: the stack reads template.yaml and statemachine/ from there.
	Dir string
	// DataDir is the stack's --data-dir; empty uses a temporary directory, removed at the end.
	DataDir string
	// Quiesce bounds the wait, after the last client, for every transfer to end.
	Quiesce time.Duration
	// StackLog receives the stack's logs (nil discards them); Progress a line per phase (nil: none).
	StackLog, Progress io.Writer
}

// LoadConfig reads CHAOS_SEED (default: random), CHAOS_TRANSFERS (10,000), CHAOS_KILLS (20), CHAOS_CLIENTS (128),
// CHAOS_LOCAL_BIN, CHAOS_DATA_DIR, and CHAOS_QUIESCE (10m). The module root is the current directory.
func LoadConfig(getenv func(string) string) (Config, error) {
	c := Config{Transfers: DefaultTransfers, Kills: DefaultKills, Clients: DefaultClients, Dir: ".",
		LocalBin: getenv("CHAOS_LOCAL_BIN"), DataDir: getenv("CHAOS_DATA_DIR"), Quiesce: DefaultQuiesce}
	if v := getenv("CHAOS_SEED"); v != "" {
		s, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return Config{}, fmt.Errorf("CHAOS_SEED=%s: not an unsigned integer", v)
		}
		c.Seed = s
	} else {
		var b [8]byte
		_, _ = rand.Read(b[:])
		c.Seed = binary.LittleEndian.Uint64(b[:]) >> 1 // printable as a positive int64 as well
	}
	for _, f := range []struct {
		name string
		dst  *int
		min  int
	}{{"CHAOS_TRANSFERS", &c.Transfers, 1}, {"CHAOS_KILLS", &c.Kills, 0}, {"CHAOS_CLIENTS", &c.Clients, 1}} {
		v := getenv(f.name)
		if v == "" {
			continue
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < f.min {
			return Config{}, fmt.Errorf("%s=%s: want an integer of at least %d", f.name, v, f.min)
		}
		*f.dst = n
	}
	if v := getenv("CHAOS_QUIESCE"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return Config{}, fmt.Errorf("CHAOS_QUIESCE=%s: want a positive duration", v)
		}
		c.Quiesce = d
	}
	return c, nil
}
