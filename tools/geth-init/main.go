// gigagas-geth-init writes a genesis.json into a geth data directory the way `geth init`
// does (same chain database, same default path scheme, same genesis block), but streams the
// allocation: `geth init` decodes the whole file into memory first and holds every slot of
// a 10M-slot account twice (JSON map, then the state), which a 24 GiB machine cannot. Here
// the file is read token by token and the state is committed and flushed to disk every
// --chunk slots, so memory is bounded by the chunk, not by the allocation.
//
// Usage: gigagas-geth-init --datadir DIR [--chunk N] [--expect-hash H] genesis.json
//
// It prints the genesis block's hash and state root; with --expect-hash it exits non-zero
// unless the hash is H. The genesis state specification (the whole allocation as JSON, which
// `geth init` also stores) is not written: geth reads it only to dump or re-commit the genesis.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/big"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core"
	"github.com/ethereum/go-ethereum/core/rawdb"
	"github.com/ethereum/go-ethereum/core/state"
	"github.com/ethereum/go-ethereum/core/tracing"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/node"
	"github.com/ethereum/go-ethereum/params"
	"github.com/ethereum/go-ethereum/triedb"
	"github.com/ethereum/go-ethereum/triedb/pathdb"
	"github.com/holiman/uint256"
)

// maxChunk bounds --chunk: each pending slot costs the state a few hundred bytes.
const maxChunk = 20_000_000

func main() {
	datadir := flag.String("datadir", "", "geth data directory (new or empty)")
	chunk := flag.Int("chunk", 1_000_000, "slots committed and flushed to disk at a time (1 to 20,000,000)")
	expect := flag.String("expect-hash", "", "fail unless the genesis block hashes to this")
	flag.Parse()
	if *datadir == "" || flag.NArg() != 1 {
		fail("usage: gigagas-geth-init --datadir DIR [--chunk N] [--expect-hash H] genesis.json")
	}
	if *chunk < 1 || *chunk > maxChunk {
		fail(fmt.Sprintf("--chunk %d: must be 1 to %d", *chunk, maxChunk))
	}
	if err := run(*datadir, flag.Arg(0), *chunk, *expect); err != nil {
		fail(err.Error())
	}
}

func fail(msg string) {
	fmt.Fprintln(os.Stderr, "gigagas-geth-init:", msg)
	os.Exit(1)
}

// builder commits the state every `chunk` slots and flushes it to the trie database.
type builder struct {
	sdb     state.Database
	tdb     *triedb.Database
	st      *state.StateDB
	root    common.Hash
	pending int
	chunk   int
	slots   uint64
	start   time.Time
}

func (b *builder) flush() error {
	root, err := b.st.Commit(params.Rules{}, 0)
	if err != nil {
		return fmt.Errorf("state commit: %w", err)
	}
	if root != b.root {
		if err := b.tdb.Commit(root, false); err != nil {
			return fmt.Errorf("trie database commit: %w", err)
		}
	}
	b.root = root
	st, err := state.New(root, b.sdb)
	if err != nil {
		return fmt.Errorf("reopen state at %s: %w", root, err)
	}
	b.st = st
	b.pending = 0
	fmt.Fprintf(os.Stderr, "gigagas-geth-init: %d slots committed (%.0f s), root %s\n", b.slots, time.Since(b.start).Seconds(), root)
	return nil
}

func (b *builder) setState(addr common.Address, key, value common.Hash) error {
	b.st.SetState(addr, key, value)
	b.pending++
	b.slots++
	if b.pending >= b.chunk {
		return b.flush()
	}
	return nil
}

func run(datadir, path string, chunk int, expect string) error {
	file, err := os.Open(path)
	if err != nil {
		return err
	}
	defer file.Close()
	dec := json.NewDecoder(bufio.NewReaderSize(file, 1<<20))
	dec.UseNumber()

	cfg := node.DefaultConfig
	cfg.Name = "geth"
	cfg.DataDir = datadir
	cfg.P2P.NoDiscovery = true
	cfg.P2P.MaxPeers = 0
	cfg.IPCPath = ""
	cfg.HTTPHost = ""
	cfg.WSHost = ""
	stack, err := node.New(&cfg)
	if err != nil {
		return fmt.Errorf("node: %w", err)
	}
	defer stack.Close()
	db, err := stack.OpenDatabaseWithOptions("chaindata", node.DatabaseOptions{Cache: 512, Handles: 512, MetricsNamespace: "eth/db/chaindata/"})
	if err != nil {
		return fmt.Errorf("chain database: %w", err)
	}
	defer db.Close()
	if rawdb.ReadCanonicalHash(db, 0) != (common.Hash{}) {
		return errors.New(datadir + " already holds a genesis block")
	}
	pcfg := *pathdb.Defaults
	pcfg.JournalDirectory = stack.ResolvePath("triedb")
	tdb := triedb.NewDatabase(db, &triedb.Config{PathDB: &pcfg})
	defer tdb.Close()
	sdb := state.NewDatabase(tdb, nil)
	st, err := state.New(types.EmptyRootHash, sdb)
	if err != nil {
		return err
	}
	b := &builder{sdb: sdb, tdb: tdb, st: st, root: types.EmptyRootHash, chunk: chunk, start: time.Now()}

	// The top level: every field but "alloc" is small and decoded as geth decodes it.
	if err := expectDelim(dec, '{'); err != nil {
		return err
	}
	rest := map[string]json.RawMessage{}
	sawAlloc := false
	for dec.More() {
		key, err := stringToken(dec)
		if err != nil {
			return err
		}
		if key != "alloc" {
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				return fmt.Errorf("%s: %w", key, err)
			}
			rest[key] = raw
			continue
		}
		sawAlloc = true
		if err := readAlloc(dec, b); err != nil {
			return fmt.Errorf("alloc: %w", err)
		}
	}
	if !sawAlloc {
		return errors.New("no alloc")
	}
	if err := b.flush(); err != nil {
		return err
	}
	rest["alloc"] = json.RawMessage("{}")
	header, _ := json.Marshal(rest)
	var g core.Genesis
	if err := json.Unmarshal(header, &g); err != nil {
		return fmt.Errorf("genesis header fields: %w", err)
	}
	if g.Config == nil {
		return errors.New("genesis without chain config")
	}
	if g.Number != 0 {
		return errors.New("genesis block number is not 0")
	}
	if err := g.Config.CheckConfigForkOrder(); err != nil {
		return err
	}
	empty := g.ToBlock()
	h := empty.Header()
	h.Root = b.root
	block := empty.WithSeal(h)
	if expect != "" && block.Hash() != common.HexToHash(expect) {
		return fmt.Errorf("genesis block hashes to %s with state root %s, expected %s", block.Hash(), b.root, expect)
	}
	batch := db.NewBatch()
	rawdb.WriteBlock(batch, block)
	rawdb.WriteReceipts(batch, block.Hash(), block.NumberU64(), nil)
	rawdb.WriteCanonicalHash(batch, block.Hash(), block.NumberU64())
	rawdb.WriteHeadBlockHash(batch, block.Hash())
	rawdb.WriteHeadFastBlockHash(batch, block.Hash())
	rawdb.WriteHeadHeaderHash(batch, block.Hash())
	rawdb.WriteChainConfig(batch, block.Hash(), g.Config)
	if err := batch.Write(); err != nil {
		return err
	}
	fmt.Printf("genesis %s root %s slots %d (%.1f s)\n", block.Hash(), b.root, b.slots, time.Since(b.start).Seconds())
	return nil
}

// readAlloc streams `{ "0xADDR": { "balance":…, "nonce":…, "code":…, "storage": {…} }, … }`.
func readAlloc(dec *json.Decoder, b *builder) error {
	if err := expectDelim(dec, '{'); err != nil {
		return err
	}
	for dec.More() {
		key, err := stringToken(dec)
		if err != nil {
			return err
		}
		var addr common.Address
		if err := addr.UnmarshalText([]byte(key)); err != nil {
			return fmt.Errorf("address %q: %w", key, err)
		}
		if err := readAccount(dec, b, addr); err != nil {
			return fmt.Errorf("%s: %w", addr, err)
		}
	}
	return expectDelim(dec, '}')
}

func readAccount(dec *json.Decoder, b *builder, addr common.Address) error {
	if err := expectDelim(dec, '{'); err != nil {
		return err
	}
	// Created even when empty, as geth's flushAlloc does (SetNonce on a new object).
	b.st.CreateAccount(addr)
	for dec.More() {
		field, err := stringToken(dec)
		if err != nil {
			return err
		}
		switch field {
		case "balance":
			var v math256
			if err := dec.Decode(&v); err != nil {
				return fmt.Errorf("balance: %w", err)
			}
			b.st.AddBalance(addr, uint256.MustFromBig(v.Int), tracing.BalanceIncreaseGenesisBalance)
		case "nonce":
			var v hexutil.Uint64
			if err := dec.Decode(&v); err != nil {
				return fmt.Errorf("nonce: %w", err)
			}
			b.st.SetNonce(addr, uint64(v), tracing.NonceChangeGenesis)
		case "code":
			var v hexutil.Bytes
			if err := dec.Decode(&v); err != nil {
				return fmt.Errorf("code: %w", err)
			}
			b.st.SetCode(addr, v, tracing.CodeChangeGenesis)
		case "storage":
			if err := readStorage(dec, b, addr); err != nil {
				return err
			}
		default:
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return fmt.Errorf("%s: %w", field, err)
			}
		}
	}
	return expectDelim(dec, '}')
}

// slot is one storage entry with the hash of its key, the order of the account's trie.
type slot struct {
	hash, key, value common.Hash
}

// readStorage reads one account's storage object, then sets it in the order of the hashed
// keys, so each chunk commits one contiguous part of the storage trie (in the file's order
// every chunk would rewrite most of the trie built so far). It holds 96 bytes per slot of the
// account while it sorts: ~1 GB for 10M slots, where `geth init` needs over 22 GB.
func readStorage(dec *json.Decoder, b *builder, addr common.Address) error {
	if err := expectDelim(dec, '{'); err != nil {
		return err
	}
	var slots []slot
	for dec.More() {
		k, err := stringToken(dec)
		if err != nil {
			return err
		}
		v, err := stringToken(dec)
		if err != nil {
			return err
		}
		var s slot
		if err := s.key.UnmarshalText([]byte(k)); err != nil {
			return fmt.Errorf("storage key %q: %w", k, err)
		}
		if err := s.value.UnmarshalText([]byte(v)); err != nil {
			return fmt.Errorf("storage value %q: %w", v, err)
		}
		s.hash = crypto.Keccak256Hash(s.key[:])
		slots = append(slots, s)
	}
	if err := expectDelim(dec, '}'); err != nil {
		return err
	}
	sort.Slice(slots, func(i, j int) bool { return bytes.Compare(slots[i].hash[:], slots[j].hash[:]) < 0 })
	for _, s := range slots {
		if err := b.setState(addr, s.key, s.value); err != nil {
			return err
		}
	}
	return nil
}

// math256 decodes a balance as geth's genesis does: hex with 0x, or decimal.
type math256 struct{ *big.Int }

func (m *math256) UnmarshalJSON(data []byte) error {
	s := strings.Trim(string(data), `"`)
	v, ok := new(big.Int), false
	if strings.HasPrefix(s, "0x") || strings.HasPrefix(s, "0X") {
		v, ok = v.SetString(s[2:], 16)
	} else {
		v, ok = v.SetString(s, 10)
	}
	if !ok || v.Sign() < 0 || v.BitLen() > 256 {
		return fmt.Errorf("invalid balance %q", s)
	}
	m.Int = v
	return nil
}

func expectDelim(dec *json.Decoder, want json.Delim) error {
	tok, err := dec.Token()
	if err != nil {
		if err == io.EOF {
			return fmt.Errorf("unexpected end of file, expected %q", want)
		}
		return err
	}
	if d, ok := tok.(json.Delim); !ok || d != want {
		return fmt.Errorf("expected %q, found %v", want, tok)
	}
	return nil
}

func stringToken(dec *json.Decoder) (string, error) {
	tok, err := dec.Token()
	if err != nil {
		return "", err
	}
	s, ok := tok.(string)
	if !ok {
		return "", fmt.Errorf("expected a string, found %v", tok)
	}
	return s, nil
}
